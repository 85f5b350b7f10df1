// Package registrytest writes images to a test's plain-http registry and
// reads back what it serves under a tag, with oras-go, the module's own
// registry library: go-containerregistry's remote package would pull the
// docker CLI's configuration code and four more modules into the tests' build.
package registrytest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
)

// repository is ref's repository (registry/name:tag, plain http) and its tag.
func repository(t testing.TB, ref string) (*remote.Repository, string) {
	t.Helper()
	tag, err := name.NewTag(ref, name.Insecure, name.StrictValidation)
	require.NoError(t, err)
	repo := &remote.Repository{
		Reference: registry.Reference{Registry: tag.RegistryStr(), Repository: tag.RepositoryStr()},
		PlainHTTP: true,
	}
	return repo, tag.TagStr()
}

func withTimeout(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// descriptor is d as oras-go takes it.
func descriptor(d v1.Descriptor) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: string(d.MediaType), Digest: digest.Digest(d.Digest.String()), Size: d.Size}
}

// Write pushes img (its config, layers and manifest) under ref.
func Write(t testing.TB, ref string, img v1.Image) {
	t.Helper()
	ctx := withTimeout(t)
	repo, tag := repository(t, ref)
	manifest, err := img.Manifest()
	require.NoError(t, err)
	config, err := img.RawConfigFile()
	require.NoError(t, err)
	require.NoError(t, repo.Push(ctx, descriptor(manifest.Config), bytes.NewReader(config)))
	for _, d := range manifest.Layers {
		layer, err := img.LayerByDigest(d.Digest)
		require.NoError(t, err)
		rc, err := layer.Compressed()
		require.NoError(t, err)
		err = repo.Push(ctx, descriptor(d), rc)
		require.NoError(t, rc.Close())
		require.NoError(t, err)
	}
	raw, err := img.RawManifest()
	require.NoError(t, err)
	mt, err := img.MediaType()
	require.NoError(t, err)
	require.NoError(t, repo.PushReference(ctx, content.NewDescriptorFromBytes(string(mt), raw), bytes.NewReader(raw), tag))
}

// WriteIndex pushes each image of idx, then idx under ref.
func WriteIndex(t testing.TB, ref string, idx v1.ImageIndex) {
	t.Helper()
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	repo, tag := repository(t, ref)
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		require.NoError(t, err)
		Write(t, ref, img)
	}
	raw, err := idx.RawManifest()
	require.NoError(t, err)
	mt, err := idx.MediaType()
	require.NoError(t, err)
	require.NoError(t, repo.PushReference(withTimeout(t), content.NewDescriptorFromBytes(string(mt), raw), bytes.NewReader(raw), tag))
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
