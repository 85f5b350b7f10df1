package ocipublish

import (
	"bytes"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Publishes beside each other (a deliver's images, often on one base)
// share the cache folder without a lock: each re-encodes a layer none kept
// yet, and a kept blob is only ever read whole, so every one gets the same
// blob.
func TestPublishesBesideEachOtherShareTheCacheFolder(t *testing.T) {
	noise := make([]byte, 8<<20) // written in many pieces: a partial blob would show
	rand.NewChaCha8([32]byte{}).Read(noise)
	base := layer(t, commit.Add(-time.Hour), map[string]string{"usr/lib/libbase.so": string(noise)})
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), base)
	require.NoError(t, err)
	reencoded := func(v Cache) (v1.Descriptor, v1.Hash, error) {
		a := loaded(t, img)
		imgs := a.images
		l := imgs[0].manifest.Layers[0]
		d, err := reencode(a.dir, l, imgs[0].config.RootFS.DiffIDs[0], v)
		return d, l.Digest, err
	}
	want, from, err := reencoded(Cache{})
	require.NoError(t, err)
	v := Cache{Dir: t.TempDir()}
	for range 5 {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				d, _, err := reencoded(v)
				assert.NoError(t, err)
				assert.Equal(t, want.Digest, d.Digest)
			})
		}
		wg.Wait()
	}
	kept, err := os.ReadFile(v.reencodedFile(from))
	require.NoError(t, err)
	h, _, err := v1.SHA256(bytes.NewReader(kept))
	require.NoError(t, err)
	assert.Equal(t, want.Digest, h, "the kept blob whole")
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
		imgs := a.images
		for _, i := range []int{1, 2, 3} {
			require.NoError(t, os.Remove(blobPath(a.dir, imgs[0].manifest.Layers[i].Digest)))
		}
		_, err = normalizeImage(a.dir, imgs[0], commit, Cache{}, nil)
		require.ErrorContains(t, err, "layer 1: read the layer")
	}
}
