package imageref

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestValidateDeployable(t *testing.T) {
	for _, tc := range []struct{ ref, err string }{
		{ref: "nginx:stable"},
		{ref: "registry.example.com:5000/team/app:1.2.3"},
		{ref: "registry.example.com/team/app@" + digest},
		{ref: "registry.example.com/team/app:1.2.3@" + digest},
		{ref: "localhost/app:latest"},
		{ref: "", err: "empty image reference"},
		{ref: "registry.example.com/team/app", err: "neither a tag nor a digest"},
		{ref: "Registry.example.com/Team/App:1", err: "repository name must be lowercase"},
		{ref: "app:bad tag", err: "not a valid OCI image reference"},
		{ref: "app@sha256:123", err: "not a valid OCI image reference"},
		{ref: "https://registry.example.com/app:1", err: "not a valid OCI image reference"},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			err := ValidateDeployable(tc.ref)
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}
