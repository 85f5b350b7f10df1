package ocipublish

import (
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/stretchr/testify/require"
)

// The tests make images with go-containerregistry, as a build would, and
// read what normalizing wrote back with it: an implementation of the image
// formats other than the package's own.

// digester is an image, an index, or an Artifact.
type digester interface {
	Digest() (v1.Hash, error)
}

// normImage and normIndex are a normalized artifact, read back as an image
// or an index.
type normImage struct {
	v1.Image
	art Artifact
}

type normIndex struct {
	idx // not v1.ImageIndex: the field would hide the method of that name
	art Artifact
}

type idx = v1.ImageIndex

// layoutOf is a new OCI layout holding x (a v1.Image or a v1.ImageIndex),
// as the engine exports one.
func layoutOf(t testing.TB, x digester) string {
	t.Helper()
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	switch x := x.(type) {
	case v1.Image:
		require.NoError(t, p.AppendImage(x))
	case v1.ImageIndex:
		require.NoError(t, p.AppendIndex(x))
	default:
		t.Fatalf("layoutOf: %T", x)
	}
	return dir
}

// loaded is x in a layout of its own, loaded.
func loaded(t testing.TB, x digester) Artifact {
	t.Helper()
	a, err := Load(layoutOf(t, x))
	require.NoError(t, err)
	return a
}

// readBack is a as go-containerregistry reads it: a normImage or a
// normIndex.
func readBack(t testing.TB, a Artifact) digester {
	t.Helper()
	require.NoError(t, writeIndex(a.dir, a.root))
	idx, err := layout.ImageIndexFromPath(a.dir)
	require.NoError(t, err)
	if a.root.MediaType.IsIndex() {
		ii, err := idx.ImageIndex(a.root.Digest)
		require.NoError(t, err)
		return normIndex{ii, a}
	}
	img, err := idx.Image(a.root.Digest)
	require.NoError(t, err)
	return normImage{img, a}
}

// normalize is normalizeArtifact of x (an image or index of
// go-containerregistry's), read back.
func normalize(t testing.TB, x digester, p Prepare, bases ...Base) (digester, error) {
	t.Helper()
	a := loaded(t, x)
	root, err := normalizeArtifact(p, a, bases)
	if err != nil {
		return nil, err
	}
	return readBack(t, Artifact{dir: a.dir, root: root}), nil
}

// normalizeImage1 is normalizeImage of img on base, read back as an image.
func normalizeImage1(t testing.TB, img v1.Image, epoch time.Time, v Cache, base *Base) (v1.Image, error) {
	t.Helper()
	a := loaded(t, img)
	imgs := a.images
	d, err := normalizeImage(a.dir, imgs[0], epoch, v, base)
	if err != nil {
		return nil, err
	}
	return readBack(t, Artifact{dir: a.dir, root: d}).(v1.Image), nil
}

// loadBack is Load of dir, read back.
func loadBack(t testing.TB, dir string) (digester, error) {
	t.Helper()
	a, err := Load(dir)
	if err != nil {
		return nil, err
	}
	return readBack(t, a), nil
}
