// Package registrytest writes images to a test's plain-http registry and
// reads back what it serves under a tag, with go-containerregistry's remote
// package, the module's own registry client.
package registrytest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"
)

// tag is ref (registry/name:tag, plain http) parsed, with a time limit.
func tag(t testing.TB, ref string) (name.Tag, remote.Option) {
	t.Helper()
	tag, err := name.NewTag(ref, name.Insecure, name.StrictValidation)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return tag, remote.WithContext(ctx)
}

// Write pushes img (its config, layers and manifest) under ref.
func Write(t testing.TB, ref string, img v1.Image) {
	t.Helper()
	tag, ctx := tag(t, ref)
	require.NoError(t, remote.Write(tag, img, ctx))
}

// WriteIndex pushes each image of idx, then idx under ref.
func WriteIndex(t testing.TB, ref string, idx v1.ImageIndex) {
	t.Helper()
	tag, ctx := tag(t, ref)
	require.NoError(t, remote.WriteIndex(tag, idx, ctx))
}

// Resolve is the descriptor of what the registry serves under ref.
func Resolve(t testing.TB, ref string) (*v1.Descriptor, error) {
	t.Helper()
	tag, ctx := tag(t, ref)
	return remote.Head(tag, ctx)
}

// Manifest is the manifest (or index) the registry serves under ref, as sent.
func Manifest(t testing.TB, ref string) []byte {
	t.Helper()
	tag, ctx := tag(t, ref)
	desc, err := remote.Get(tag, ctx)
	require.NoError(t, err)
	return desc.Manifest
}
