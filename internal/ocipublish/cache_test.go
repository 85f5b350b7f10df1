package ocipublish

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A base's layer is re-encoded once: the next normalize copies the blob
// kept, without the layer.
func TestABaseLayerReencodedOnceIsNotReadAgain(t *testing.T) {
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1),
		layer(t, commit.Add(time.Hour), map[string]string{"index.html": "<html>"}))
	require.NoError(t, err)
	base := &basesOf(t, img)[0]
	v := Cache{Dir: t.TempDir()}
	first, err := normalizeImage1(t, img, commit, v, base)
	require.NoError(t, err)

	a := loaded(t, img)
	imgs := a.images
	require.NoError(t, os.Remove(blobPath(a.dir, imgs[0].manifest.Layers[0].Digest)), "a layer that cannot be read")
	_, err = normalizeImage(a.dir, imgs[0], commit, Cache{}, base)
	require.ErrorContains(t, err, "read the layer", "without the blob kept, the layer is read")

	d, err := normalizeImage(a.dir, imgs[0], commit, v, base)
	require.NoError(t, err, "the blob kept spares reading the layer")
	assert.Equal(t, digestOf(t, first), d.Digest.String(), "the same image")
}

func TestWhatIsKeptIsWrittenWholeByConcurrentPublishes(t *testing.T) {
	v := Cache{Dir: filepath.Join(t.TempDir(), "not-yet")}
	file := filepath.Join(v.Dir, "gzip", "sha256-"+strings.Repeat("d", 64))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() { v.keep(file, strings.NewReader(strings.Repeat(string(rune('a'+i)), 1<<16))) })
	}
	wg.Wait()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat(string(data[:1]), 1<<16), string(data), "one writer's whole")
	entries, err := os.ReadDir(filepath.Dir(file))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")

	ro := Cache{Dir: "/proc/no-such-place"}
	ro.keep(filepath.Join(ro.Dir, "x"), strings.NewReader("x")) // only the saving is lost
	assert.NoFileExists(t, filepath.Join(ro.Dir, "x"))
}
