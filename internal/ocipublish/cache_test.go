package ocipublish

import (
	"os"
	"path/filepath"
	"strings"
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

func TestVerdictsRecordEachLayerAndChangeNoDigest(t *testing.T) {
	img := build(t, commit.Add(time.Hour), amd64)
	v := Verdicts{Dir: t.TempDir()}
	remembered, err := normalize(t, "frontend", img, Options{Epoch: commit, Verdicts: v})
	require.NoError(t, err)
	read, err := normalize(t, "frontend", img, Options{Epoch: commit})
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, read), digestOf(t, remembered))

	layers, err := img.Layers()
	require.NoError(t, err)
	for i, want := range []string{"kept", "late"} {
		d, err := layers[i].Digest()
		require.NoError(t, err)
		late, known := v.lookup(d, commit)
		require.True(t, known, "layer %d has a verdict", i)
		assert.Equal(t, want == "late", late, "layer %d", i)
		_, known = v.lookup(d, commit.Add(time.Second))
		assert.False(t, known, "a verdict holds for its epoch only")
	}

	again, err := normalize(t, "frontend", img, Options{Epoch: commit, Verdicts: v})
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, read), digestOf(t, again), "normalizing from the verdicts gives the same image")
}

func TestALayerNormalizedOnceIsNotReadAgain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mtime time.Time
		base  bool
	}{
		{"a layer with no later time (its verdict and its blob re-encoded)", commit.Add(-time.Hour), false},
		{"a base layer, newer than --created (its blob re-encoded)", commit.Add(time.Hour), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1),
				layer(t, tc.mtime, map[string]string{"index.html": "<html>"}))
			require.NoError(t, err)
			var base *Base
			if tc.base {
				base = &basesOf(t, img)[0]
			}
			v := Verdicts{Dir: t.TempDir()}
			first, err := normalizeImage1(t, img, commit, v, base)
			require.NoError(t, err)

			a := loaded(t, img)
			imgs, _, err := imagesOf(a)
			require.NoError(t, err)
			require.NoError(t, os.Remove(blobPath(a.dir, imgs[0].manifest.Layers[0].Digest)), "a layer that cannot be read")
			_, err = normalizeImage(a.dir, imgs[0], commit, Verdicts{}, base)
			require.ErrorContains(t, err, "read the layer", "without what was learnt of it, the layer is read")

			d, err := normalizeImage(a.dir, imgs[0], commit, v, base)
			require.NoError(t, err, "what was learnt of the layer spares reading it")
			assert.Equal(t, digestOf(t, first), d.Digest.String(), "the same image")
		})
	}
}

func TestVerdictsAreWrittenWholeByConcurrentPublishes(t *testing.T) {
	v := Verdicts{Dir: filepath.Join(t.TempDir(), "not-yet")}
	layer := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("d", 64)}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); v.record(layer, commit, true) }()
	}
	wg.Wait()
	late, known := v.lookup(layer, commit)
	assert.True(t, known)
	assert.True(t, late)
	entries, err := os.ReadDir(v.Dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "one verdict file, no temporary ones left")

	require.NoError(t, os.WriteFile(v.file(layer, commit), []byte("garbage"), 0o644))
	_, known = v.lookup(layer, commit)
	assert.False(t, known, "an unreadable verdict is no verdict: the layer is read")

	ro := Verdicts{Dir: "/proc/no-such-place"}
	ro.record(layer, commit, false) // only the saving is lost
	_, known = ro.lookup(layer, commit)
	assert.False(t, known)
}
