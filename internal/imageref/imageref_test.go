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

// A base is read at the registry its Dockerfile names, by the digest the
// engine resolved: the engine's imageRef may name another address it pulled
// that digest from first (engine-facts 50).
func TestPinnedAsKeepsTheNamedRegistry(t *testing.T) {
	const pulled = "sha256:1358e5e67e61db70aecd605a53c7fafbd8e0b51f85ec533dad31398d7e396282"
	for _, tc := range []struct{ ref, imageRef, want string }{
		{"nginx:stable", "docker.io/library/nginx:stable@" + pulled, "nginx:stable@" + pulled},
		{"10.87.0.1:5002/library/busybox:stable", "docker.io/library/busybox:stable@" + pulled, "10.87.0.1:5002/library/busybox:stable@" + pulled},
		{"nginx:stable", "docker.io/library/nginx:stable", ""},
		{"nginx:stable", "", ""},
	} {
		assert.Equal(t, tc.want, PinnedAs(tc.ref, tc.imageRef), "%s as %q", tc.ref, tc.imageRef)
	}
}
