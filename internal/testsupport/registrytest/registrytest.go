// Package registrytest writes images to a test's plain-http registry and
// reads back what it serves under a tag, with oras-go (a dependency the
// module has anyway). go-containerregistry's remote package would pull the
// docker CLI's configuration code and four more modules into go.mod, which
// the engine's `go mod tidy` downloads on every fresh runner's first call
// (tests/engine-facts.md, fact 39).
package registrytest

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
)

// repository is ref's repository (host/name:tag, plain http) and its tag.
func repository(t testing.TB, ref string) (*remote.Repository, string) {
	t.Helper()
	at := strings.LastIndex(ref, ":")
	require.Greater(t, at, strings.LastIndex(ref, "/"), "%s names a tag", ref)
	repo, err := remote.NewRepository(ref[:at])
	require.NoError(t, err)
	repo.PlainHTTP = true
	return repo, ref[at+1:]
}

func withTimeout(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Write pushes img (its config, layers and manifest) under ref.
func Write(t testing.TB, ref string, img v1.Image) {
	t.Helper()
	ctx := withTimeout(t)
	repo, tag := repository(t, ref)
	config, err := img.RawConfigFile()
	require.NoError(t, err)
	manifest, err := img.Manifest()
	require.NoError(t, err)
	blobs := [][]byte{config}
	for _, layer := range manifest.Layers {
		l, err := img.LayerByDigest(layer.Digest)
		require.NoError(t, err)
		rc, err := l.Compressed()
		require.NoError(t, err)
		var b bytes.Buffer
		_, err = b.ReadFrom(rc)
		require.NoError(t, rc.Close())
		require.NoError(t, err)
		blobs = append(blobs, b.Bytes())
	}
	for _, blob := range blobs {
		require.NoError(t, repo.Push(ctx, content.NewDescriptorFromBytes("application/octet-stream", blob), bytes.NewReader(blob)))
	}
	raw, err := img.RawManifest()
	require.NoError(t, err)
	mt, err := img.MediaType()
	require.NoError(t, err)
	require.NoError(t, repo.PushReference(ctx, content.NewDescriptorFromBytes(string(mt), raw), bytes.NewReader(raw), tag))
}

// Resolve is the descriptor of what the registry serves under ref.
func Resolve(t testing.TB, ref string) (ocispec.Descriptor, error) {
	t.Helper()
	repo, tag := repository(t, ref)
	return repo.Resolve(withTimeout(t), tag)
}

// Manifest is the manifest (or index) the registry serves under ref, as sent.
func Manifest(t testing.TB, ref string) []byte {
	t.Helper()
	ctx := withTimeout(t)
	repo, tag := repository(t, ref)
	desc, rc, err := repo.FetchReference(ctx, tag)
	require.NoError(t, err)
	defer rc.Close()
	data, err := content.ReadAll(rc, desc)
	require.NoError(t, err)
	return data
}
