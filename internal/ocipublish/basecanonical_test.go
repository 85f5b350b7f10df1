package ocipublish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gzipLayer is raw compressed by the standard library at level: a blob
// the canonical encoding does not give, as a registry's base layer is.
func gzipLayer(t *testing.T, raw []byte, level int) v1.Layer {
	t.Helper()
	l, err := tarball.LayerFromOpener(opener(raw), tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(level))
	require.NoError(t, err)
	return l
}

// baseTar is a base layer's tar: files of a distribution, times before the commit.
func baseTar(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	old := commit.Add(-30 * 24 * time.Hour)
	for _, f := range []struct{ name, body string }{{"etc/os-release", "ID=base\n"}, {"bin/sh", strings.Repeat("#!/bin/sh\n", 5_000)}} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o755, Size: int64(len(f.body)), ModTime: old, Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(f.body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// A base's layer is pushed as the canonical encoding of its tar, whichever
// blob of it the engine exported (its registry's, another of that content:
// fact 41): one digest everywhere.
func TestABaseLayerIsPushedCanonicalWhereverItCameFrom(t *testing.T) {
	raw := baseTar(t)
	pulled := gzipLayer(t, raw, gzip.BestCompression)
	base := imageOf(t, pulled)
	canonical, err := canonicalLayer(t, raw).Digest()
	require.NoError(t, err)
	own := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})

	digests := map[string]bool{}
	for _, tc := range []struct {
		name string
		held v1.Layer // the blob the engine exported for the base's layer
	}{
		{"the registry's blob", pulled},
		{"another blob of that content", gzipLayer(t, raw, gzip.BestSpeed)},
		{"the canonical blob", canonicalLayer(t, raw)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, _ := publishedOn(t, imageOf(t, tc.held, own), base, "", Cache{Dir: t.TempDir()})
			layers, err := img.Layers()
			require.NoError(t, err)
			pushed, err := layers[0].Digest()
			require.NoError(t, err)
			assert.Equal(t, canonical, pushed, "the canonical blob")
			digests[digestOf(t, img)] = true
		})
	}
	n, err := normalize(t, imageOf(t, pulled, own), Prepare{Kind: "backend", Created: commit}, basesOf(t, base)...)
	require.NoError(t, err)
	digests[digestOf(t, n)] = true
	assert.Len(t, digests, 1, "one image, wherever its base came from")
}

// canonicalLayer is raw as a layer in the canonical encoding.
func canonicalLayer(t *testing.T, raw []byte) v1.Layer {
	t.Helper()
	l, err := tarball.LayerFromOpener(opener(canonicalGzip(t, raw)), tarball.WithMediaType(types.OCILayer))
	require.NoError(t, err)
	return l
}
