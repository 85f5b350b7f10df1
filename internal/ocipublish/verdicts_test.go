package ocipublish

import (
	"errors"
	"io"
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
	remembered, err := Normalize("frontend", img, Options{Epoch: commit, Verdicts: v})
	require.NoError(t, err)
	read, err := Normalize("frontend", img, Options{Epoch: commit})
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

	again, err := Normalize("frontend", img, Options{Epoch: commit, Verdicts: v})
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, read), digestOf(t, again), "normalizing from the verdicts gives the same image")
}

// unreadable is a layer whose contents cannot be read: only a remembered
// verdict lets it through.
type unreadable struct{ v1.Layer }

var errUnread = errors.New("read the contents")

func (unreadable) Digest() (v1.Hash, error) {
	return v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("b", 64)}, nil
}
func (unreadable) DiffID() (v1.Hash, error) {
	return v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("c", 64)}, nil
}
func (unreadable) MediaType() (types.MediaType, error)  { return types.OCILayer, nil }
func (unreadable) Size() (int64, error)                 { return 1 << 20, nil }
func (unreadable) Uncompressed() (io.ReadCloser, error) { return nil, errUnread }
func (unreadable) Compressed() (io.ReadCloser, error)   { return nil, errUnread }

func TestARememberedVerdictSparesReadingTheLayer(t *testing.T) {
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), unreadable{})
	require.NoError(t, err)

	_, err = NormalizeImage(img, commit, Verdicts{}, nil)
	require.ErrorIs(t, err, errUnread, "without a verdict the layer is read")

	v := Verdicts{Dir: t.TempDir()}
	v.record(v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("b", 64)}, commit, false)
	n, err := NormalizeImage(img, commit, v, nil)
	require.NoError(t, err, "a kept verdict keeps the layer unread")
	layers, err := n.Layers()
	require.NoError(t, err)
	d, err := layers[0].Digest()
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("b", 64), d.Hex, "kept byte for byte")
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
