package ocipublish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/testsupport/registrytest"
)

// countingRegistry is a loopback registry that counts the times it sends
// the blob that counted names (set before it is asked).
type countingRegistry struct {
	addr    string
	blobs   *atomic.Int64
	counted *atomic.Value // string: a digest
}

func newCountingRegistry(t *testing.T) countingRegistry {
	t.Helper()
	var n atomic.Int64
	var counted atomic.Value
	counted.Store("none")
	regHandler := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+counted.Load().(string)) {
			n.Add(1)
		}
		regHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return countingRegistry{addr: strings.TrimPrefix(srv.URL, "http://"), blobs: &n, counted: &counted}
}

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
// blob of it the engine exported and whether or not the base's registry
// can be read (a runner behind a mirror, a registry's rate limit): one
// digest everywhere, and nothing fetched from the registry for a base the
// image holds whole.
func TestABaseLayerIsPushedCanonicalWhereverItCameFrom(t *testing.T) {
	raw := baseTar(t)
	pulled := gzipLayer(t, raw, gzip.BestCompression)
	reg := newCountingRegistry(t)
	base := imageOf(t, pulled)
	registrytest.Write(t, reg.addr+"/library/base:stable", base)
	d, err := base.Digest()
	require.NoError(t, err)
	ref := reg.addr + "/library/base:stable@" + d.String()
	registryBlob, err := pulled.Digest()
	require.NoError(t, err)
	reg.counted.Store(registryBlob.String())
	canonical, err := canonicalLayer(t, raw).Digest()
	require.NoError(t, err)
	own := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})

	digests := map[string]bool{}
	for _, tc := range []struct {
		name string
		held v1.Layer // the blob the engine exported for the base's layer
		ref  string   // the base, pinned
	}{
		{"the registry's blob, its registry read", pulled, ref},
		{"another blob of that content, its registry read", gzipLayer(t, raw, gzip.BestSpeed), ref},
		{"the canonical blob, its registry read", canonicalLayer(t, raw), ref},
		{"the registry's blob, its registry out of reach (the engine's export read)", pulled, "127.0.0.1:9/library/base:stable@" + d.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			require.NoError(t, Normalized(context.Background(), Prepare{Kind: "backend", Tarball: layoutTarball(t, imageOf(t, tc.held, own)), Created: commit,
				BaseTarball: layoutTarball(t, base), BaseRef: tc.ref, Cache: t.TempDir()}, t.TempDir(), out, io.Discard))
			a, err := loadBack(t, out)
			require.NoError(t, err)
			img := a.(v1.Image)
			layers, err := img.Layers()
			require.NoError(t, err)
			pushed, err := layers[0].Digest()
			require.NoError(t, err)
			assert.Equal(t, canonical, pushed, "the canonical blob")
			digests[digestOf(t, img)] = true
		})
	}
	n, err := normalize(t, "backend", imageOf(t, pulled, own), Options{Epoch: commit, Bases: basesOf(t, base)})
	require.NoError(t, err)
	digests[digestOf(t, n)] = true
	assert.Len(t, digests, 1, "one image, wherever its base came from")
	assert.Zero(t, reg.blobs.Load(), "no blob fetched from the base's registry")
}

// canonicalLayer is raw as a layer in the canonical encoding.
func canonicalLayer(t *testing.T, raw []byte) v1.Layer {
	t.Helper()
	l, err := tarball.LayerFromOpener(opener(canonicalGzip(t, raw)), tarball.WithMediaType(types.OCILayer))
	require.NoError(t, err)
	return l
}
