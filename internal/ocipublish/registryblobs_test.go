package ocipublish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"os"
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

// A base read from its registry has its layers pushed as the registry's own
// blobs, whichever blob of their content the engine exported: the one it
// pulled costs nothing (no compression, no fetch), another is replaced by
// the registry's, fetched once per engine; both give the image one digest.
func TestABaseLayerIsPushedAsItsRegistrysBlob(t *testing.T) {
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
	own := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})

	for _, tc := range []struct {
		name    string
		held    v1.Layer // the blob the engine exported for the base's layer
		fetched int64    // blobs the registry sends, the first publish and the second
	}{
		{"the blob the engine pulled", pulled, 0},
		{"another blob of that content", gzipLayer(t, raw, gzip.BestSpeed), 1},
		{"that content in the canonical encoding", canonicalLayer(t, raw), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Cache{Dir: t.TempDir()}
			held, err := tc.held.Digest()
			require.NoError(t, err)
			want := digestOf(t, imageOf(t, pulled, own))
			var first string
			for publish := range 2 {
				before := reg.blobs.Load()
				img, said := normalizedOn(t, imageOf(t, tc.held, own), ref, v)
				assert.Empty(t, said)
				layers, err := img.Layers()
				require.NoError(t, err)
				pushed, err := layers[0].Digest()
				require.NoError(t, err)
				assert.Equal(t, registryBlob, pushed, "the registry's blob")
				if publish == 0 {
					assert.Equal(t, tc.fetched, reg.blobs.Load()-before, "blobs fetched from the base's registry")
					first = digestOf(t, img)
				} else {
					assert.Zero(t, reg.blobs.Load()-before, "a blob fetched once is kept for the next publish")
					assert.Equal(t, first, digestOf(t, img))
				}
				assert.NoFileExists(t, v.reencodedFile(held), "nothing of the base re-encoded")
			}
			assert.NotEqual(t, want, first, "the build's layer is normalized, so not the digest of the image as built")
		})
	}
	// every case gives one image
	var digests []string
	for _, held := range []v1.Layer{pulled, gzipLayer(t, raw, gzip.BestSpeed)} {
		img, _ := normalizedOn(t, imageOf(t, held, own), ref, Cache{})
		digests = append(digests, digestOf(t, img))
	}
	assert.Equal(t, digests[0], digests[1])
}

// canonicalLayer is raw as a layer in the canonical encoding.
func canonicalLayer(t *testing.T, raw []byte) v1.Layer {
	t.Helper()
	l, err := tarball.LayerFromOpener(opener(canonicalGzip(t, raw)), tarball.WithMediaType(types.OCILayer))
	require.NoError(t, err)
	return l
}

// A base read from no registry, or from the engine's first export of it
// (its registry unreadable), has its layers re-encoded: nothing says their
// blobs are the registry's.
func TestABaseReadFromNoRegistryIsReencoded(t *testing.T) {
	raw := baseTar(t)
	pulled := gzipLayer(t, raw, gzip.BestCompression)
	base := imageOf(t, pulled)
	own := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})
	n, err := normalize(t, "backend", imageOf(t, pulled, own), Options{Epoch: commit, Bases: basesOf(t, base)})
	require.NoError(t, err)
	layers, err := n.(v1.Image).Layers()
	require.NoError(t, err)
	pushed, err := layers[0].Digest()
	require.NoError(t, err)
	canonical, err := canonicalLayer(t, raw).Digest()
	require.NoError(t, err)
	assert.Equal(t, canonical, pushed)
}

func TestAsRegistryHoldsNamesTheRegistrysBlobAsTheManifestDoes(t *testing.T) {
	dir := t.TempDir()
	there := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}
	absent := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("b", 64)}
	require.NoError(t, os.MkdirAll(filepath.Dir(blobPath(dir, there)), 0o755))
	require.NoError(t, os.WriteFile(blobPath(dir, there), []byte("blob"), 0o644))
	zstd := types.MediaType("application/vnd.oci.image.layer.v1.tar+zstd")
	exported := v1.Descriptor{MediaType: types.OCILayer, Digest: absent, Annotations: map[string]string{"k": "v"}}
	baseOf := func(from string, l v1.Descriptor) *Base {
		return &Base{registry: &registryLayers{layers: []v1.Descriptor{l}, from: from}}
	}
	for _, tc := range []struct {
		name     string
		base     *Base
		i        int
		exported v1.Descriptor
		manifest types.MediaType
		want     types.MediaType // "": re-encoded
	}{
		{"an OCI manifest", baseOf(fromRegistry, v1.Descriptor{MediaType: types.DockerLayer, Digest: there, Size: 4}), 0, exported, types.OCIManifestSchema1, types.OCILayer},
		{"a Docker manifest", baseOf(fromRegistry, v1.Descriptor{MediaType: types.OCILayer, Digest: there, Size: 4}), 0, exported, types.DockerManifestSchema2, types.DockerLayer},
		{"zstd, exported as zstd", baseOf(fromRegistry, v1.Descriptor{MediaType: zstd, Digest: there, Size: 4}), 0, v1.Descriptor{MediaType: zstd}, types.OCIManifestSchema1, zstd},
		{"zstd, exported as gzip", baseOf(fromRegistry, v1.Descriptor{MediaType: zstd, Digest: there, Size: 4}), 0, exported, types.OCIManifestSchema1, ""},
		{"the blob not in the layout", baseOf(fromRegistry, v1.Descriptor{MediaType: types.OCILayer, Digest: absent, Size: 4}), 0, exported, types.OCIManifestSchema1, ""},
		{"the engine's first export", baseOf(fromFirstExport, v1.Descriptor{MediaType: types.OCILayer, Digest: there, Size: 4}), 0, exported, types.OCIManifestSchema1, ""},
		{"a layer past the base's", baseOf(fromRegistry, v1.Descriptor{MediaType: types.OCILayer, Digest: there, Size: 4}), 1, exported, types.OCIManifestSchema1, ""},
		{"a base from its tarball", &Base{}, 0, exported, types.OCIManifestSchema1, ""},
		{"no base", nil, 0, exported, types.OCIManifestSchema1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := tc.base.asRegistryHolds(dir, tc.i, tc.exported, tc.manifest)
			if tc.want == "" {
				assert.False(t, ok)
				return
			}
			require.True(t, ok)
			assert.Equal(t, v1.Descriptor{MediaType: tc.want, Digest: there, Size: 4, Annotations: tc.exported.Annotations}, d)
		})
	}
}
