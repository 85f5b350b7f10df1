package ocipublish

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// layerLike is n bytes that compress as a layer does: runs of text, some
// repeated far apart (across blocks), and stretches of noise.
func layerLike(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	words := []string{"usr/lib/", "node_modules/", "function ", "return ", "\x00\x00\x00\x00", "0644 ", "ELF"}
	var b bytes.Buffer
	for b.Len() < n {
		switch r.IntN(4) {
		case 0:
			noise := make([]byte, r.IntN(4096))
			for i := range noise {
				noise[i] = byte(r.Uint32())
			}
			b.Write(noise)
		case 1:
			if b.Len() > 1<<20 { // a stretch seen a block or more before
				from := r.IntN(b.Len() - 1<<19)
				b.Write(bytes.Clone(b.Bytes()[from : from+r.IntN(1<<16)]))
			}
		default:
			for range r.IntN(200) {
				b.WriteString(words[r.IntN(len(words))])
			}
		}
	}
	return b.Bytes()[:n]
}

// block is a size of data the tests cut at and around: a MiB.
const block = 1 << 20

// canonical is data in the canonical encoding, written in pieces of the
// sizes pieces gives, with cores cores.
func canonical(t *testing.T, data []byte, cores int, pieces func() int) []byte {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cores))
	var out bytes.Buffer
	zw, err := newCanonicalWriter(&out)
	require.NoError(t, err)
	for rest := data; len(rest) > 0; {
		n := min(pieces(), len(rest))
		_, err := zw.Write(rest[:n])
		require.NoError(t, err)
		rest = rest[n:]
	}
	require.NoError(t, zw.Close())
	return out.Bytes()
}

// The canonical encoding's bytes are the tar's alone: the same on a machine
// of one core or of many, however the tar is written. An engine's first
// publish and another's, on other runners, push the same blob.
func TestTheCanonicalEncodingDependsOnTheBytesAlone(t *testing.T) {
	for _, size := range []int{0, 1, 65534, 65535, 65536, block - 1, block, block + 1, 5*block + 12345} {
		data := layerLike(size, uint64(size))
		r := rand.New(rand.NewPCG(1, 2))
		want := canonical(t, data, 1, func() int { return len(data) + 1 })
		for _, tc := range []struct {
			name   string
			cores  int
			pieces func() int
		}{
			{"eight cores, at once", 8, func() int { return len(data) + 1 }},
			{"two cores, in the copy's pieces", 2, func() int { return 256 << 10 }},
			{"one core, pieces of any size", 1, func() int { return 1 + r.IntN(70_000) }},
			{"sixteen cores, pieces of any size", 16, func() int { return 1 + r.IntN(3*block) }},
		} {
			got := canonical(t, data, tc.cores, tc.pieces)
			require.Equal(t, want, got, "%d bytes, %s", size, tc.name)
		}
	}
}

// A blob in the canonical encoding is plain gzip: the standard library's
// reader (as a registry's, containerd's or Docker's) gives the tar back.
func TestTheCanonicalEncodingIsReadAsGzipByAnyReader(t *testing.T) {
	data := layerLike(3*block+777, 7)
	blob := canonical(t, data, 2, func() int { return 256 << 10 })
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	require.NoError(t, err)
	zr.Multistream(false)
	back, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, data, back, "one gzip member holding the whole tar")
	assert.Less(t, len(blob), len(data), "compressed")

	r, err := newLayerReader(io.NopCloser(bytes.NewReader(blob)))
	require.NoError(t, err)
	back, err = io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, data, back)
	require.NoError(t, r.Close())
}

// The folder of kept blobs names the Go release that compressed them and
// the level: a module built with another release never takes a blob of this
// one's.
func TestTheKeptBlobsFolderNamesTheEncoding(t *testing.T) {
	for _, tc := range []struct {
		goVersion string
		want      string
	}{
		{"go1.26.1", "gzip-go1.26.1-level-1"},
		{"go1.26.2", "gzip-go1.26.2-level-1"},
		{"go1.27rc1 X:nocoverageredesign", "gzip-go1.27rc1_X_nocoverageredesign-level-1"},
		{"devel go1.27-4c1f2a3 +x/y", "gzip-devel_go1.27-4c1f2a3__x_y-level-1"},
	} {
		assert.Equal(t, tc.want, encoderName(tc.goVersion))
	}
	assert.Equal(t, encoderName(runtime.Version()), encoder, "this binary's release")
}
