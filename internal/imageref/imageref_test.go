package imageref

import (
	"cmp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

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

// A base is named as its Dockerfile names it, pinned by the digest the
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

// Where go-containerregistry's grammar and Docker's differ, Parse takes the
// stricter, and Docker's reading of a registry (the engine pulls with it).
func TestParseTakesTheStricterGrammar(t *testing.T) {
	for _, tc := range []struct {
		ref, why, err string
	}{
		{"registry.example.com/a//b:1", "go-containerregistry takes an empty component", "components of lower-case letters"},
		{"registry.example.com/-a:1", "go-containerregistry takes a leading separator", "components of lower-case letters"},
		{"registry.example.com/a..b:1", "go-containerregistry takes a doubled '.'", "components of lower-case letters"},
		{"app:-x", "go-containerregistry takes a tag starting with '-'", "the tag is up to 128"},
		{"app:.x", "go-containerregistry takes a tag starting with '.'", "the tag is up to 128"},
		{"app@sha512:" + strings.Repeat("0", 128), "Docker takes sha512", "not sha256"},
		{"Registry/app:1", "Docker reads an upper-case first part as a registry", "must be lowercase"},
		{"r_1.example.com/app:1", "go-containerregistry takes '_' in a host", "not a registry host"},
		{"registry.example.com/" + strings.Repeat("a", 250) + ":1", "go-containerregistry counts the repository alone", "at most 255"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			_, err := Parse(tc.ref)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

func TestParseNormalizesAsDockerDoes(t *testing.T) {
	for _, tc := range []struct {
		ref, registry, repository, tag, digest string
	}{
		{"node", "index.docker.io", "library/node", "", ""},
		{"node:24", "index.docker.io", "library/node", "24", ""},
		{"docker.io/library/node:24", "index.docker.io", "library/node", "24", ""},
		{"team/app:1@" + digest, "index.docker.io", "team/app", "1", digest},
		// go-containerregistry reads it as Docker Hub's localhost/app
		{"localhost/app:latest", "localhost", "app", "latest", ""},
		{"localhost:5000/team.x/app", "localhost:5000", "team.x/app", "", ""},
		{"[::1]:5000/app:1", "[::1]:5000", "app", "1", ""},
		// go-containerregistry refuses a repository of one character
		{"r.example.com/a:1", "r.example.com", "a", "1", ""},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			r, err := Parse(tc.ref)
			require.NoError(t, err)
			assert.Equal(t, tc.registry, r.Registry())
			assert.Equal(t, tc.repository, r.Repository().RepositoryStr())
			assert.Equal(t, tc.tag, r.Tag())
			assert.Equal(t, tc.digest, r.Digest())
			assert.Equal(t, tc.ref, r.String())
		})
	}
	official, err := Parse("docker.io/node:24")
	require.NoError(t, err)
	assert.True(t, official.IsDockerHubOfficial("node"))
	other, err := Parse("registry.example.com/node:24")
	require.NoError(t, err)
	assert.False(t, other.IsDockerHubOfficial("node"))
}

// Whatever Parse takes, go-containerregistry takes too, as the same
// repository (but localhost, which it reads as a Docker Hub repository, and
// a one-character repository, see Parse), and errors stay small, whatever
// the value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"nginx:stable", "registry.example.com:5000/team/app:1.2.3@" + digest, "localhost/app", "a//b", "A/b", "x:-y", "[::1]/a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			assert.Less(t, len(err.Error()), 400)
			return
		}
		if p := strings.TrimPrefix(r.Repository().RepositoryStr(), "library/"); len(p) < 2 {
			return
		}
		ggcr, err := name.ParseReference(s, name.WeakValidation)
		require.NoError(t, err, "go-containerregistry refuses what Parse took")
		if r.Host() != "localhost" {
			assert.Equal(t, r.Repository().Name(), ggcr.Context().Name())
		}
		if r.Digest() != "" {
			assert.Equal(t, r.Digest(), ggcr.Identifier())
		} else {
			assert.Equal(t, cmp.Or(r.Tag(), "latest"), ggcr.Identifier())
		}
	})
}
