package ocipublish

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPublishesBesideEachOtherCompressASharedLayerOnce(t *testing.T) {
	base := layer(t, commit.Add(-time.Hour), map[string]string{"etc/os-release": "ID=base\n"})
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), base)
	require.NoError(t, err)
	a := loaded(t, img)
	imgs, err := imagesOf(a)
	require.NoError(t, err)
	l, diffID := imgs[0].manifest.Layers[0], imgs[0].config.RootFS.DiffIDs[0]
	v := Cache{Dir: t.TempDir()}

	// another publish holds the layer's re-encoding
	unlock := v.lock(v.reencodedFile(l.Digest))
	done := make(chan v1.Descriptor)
	go func() {
		d, err := reencode(a.dir, l, diffID, v)
		assert.NoError(t, err)
		done <- d
	}()
	select {
	case <-done:
		t.Fatal("the layer was re-encoded while another publish held it")
	case <-time.After(200 * time.Millisecond):
	}
	// ... and leaves its blob (told apart here by another gzip level)
	rc, err := base.Uncompressed()
	require.NoError(t, err)
	raw, err := io.ReadAll(rc)
	require.NoError(t, err)
	theirs, err := tarball.LayerFromOpener(opener(raw), tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestCompression))
	require.NoError(t, err)
	theirsAt, err := theirs.Digest()
	require.NoError(t, err)
	zr, err := theirs.Compressed()
	require.NoError(t, err)
	blob, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(v.reencodedFile(l.Digest)), 0o755))
	require.NoError(t, os.WriteFile(v.reencodedFile(l.Digest), blob, 0o644))
	unlock()

	select {
	case d := <-done:
		assert.Equal(t, theirsAt, d.Digest, "the blob the other publish made, not compressed again")
	case <-time.After(10 * time.Second):
		t.Fatal("the lock was not taken once released")
	}
}

func TestALockHeldElsewhereIsWaitedForWithinItsLimit(t *testing.T) {
	file := filepath.Join(t.TempDir(), "layer.lock")
	held, err := lockFile(file, time.Second)
	require.NoError(t, err)

	start := time.Now()
	_, err = lockFile(file, 100*time.Millisecond)
	assert.Error(t, err, "not taken while held")
	assert.Less(t, time.Since(start), 5*time.Second, "given up at its limit")

	require.NoError(t, held.Close())
	again, err := lockFile(file, time.Second)
	require.NoError(t, err, "taken once released")
	require.NoError(t, again.Close())

	unlock := Cache{Dir: "/proc/no-such-place"}.lock("/proc/no-such-place/x")
	unlock() // a lock that cannot be taken only loses the saving
}

func TestAnImageWhoseLayersFailNamesTheFirstWhicheverFailsFirst(t *testing.T) {
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1),
		layer(t, commit.Add(-time.Hour), map[string]string{"a": "1"}),
		layer(t, commit.Add(-time.Hour), map[string]string{"b": "2"}),
		layer(t, commit.Add(time.Hour), map[string]string{"c": "3"}),
		layer(t, commit.Add(time.Hour), map[string]string{"d": "4"}))
	require.NoError(t, err)
	for range 20 {
		a := loaded(t, img)
		imgs, err := imagesOf(a)
		require.NoError(t, err)
		for _, i := range []int{1, 2, 3} {
			require.NoError(t, os.Remove(blobPath(a.dir, imgs[0].manifest.Layers[i].Digest)))
		}
		_, err = normalizeImage(a.dir, imgs[0], commit, Cache{}, nil)
		require.ErrorContains(t, err, "layer 1: read the layer")
	}
}
