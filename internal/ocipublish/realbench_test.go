package ocipublish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/secret"
)

// goRootLayer is the Go installation as one gzip layer with times before
// the commit: real binaries and sources, a stand-in for a base image's layer
// (node:24-slim's largest is about 200 MB unpacked).
func goRootLayer(b *testing.B) ([]byte, int64) {
	return goRootLayerAt(b, baseBuilt)
}

// goRootLayerAt is goRootLayer with every file's time at mtime.
func goRootLayerAt(b *testing.B, mtime time.Time) ([]byte, int64) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	require.NoError(b, err)
	root := strings.TrimSpace(string(goroot))
	require.NoError(b, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		require.NoError(b, tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o644, Size: info.Size(), ModTime: mtime}))
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	}))
	require.NoError(b, tw.Close())
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(raw.Bytes())
	require.NoError(b, err)
	require.NoError(b, zw.Close())
	return gz.Bytes(), int64(raw.Len())
}

func BenchmarkNormalizeRealBaseLayer(b *testing.B) {
	gz, size := goRootLayer(b)
	b.Logf("base layer: %d MB unpacked, %d MB gzip", size>>20, len(gz)>>20)
	base, err := tarball.LayerFromOpener(opener(gz), tarball.WithMediaType(types.OCILayer))
	require.NoError(b, err)
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), base)
	require.NoError(b, err)
	for _, bc := range []struct {
		name string
		v    Cache
	}{
		{"read", Cache{}},                 // a cold run: the layer is read and re-encoded
		{"kept", Cache{Dir: b.TempDir()}}, // a run whose build changed: the blob re-encoded before is kept
	} {
		b.Run(bc.name, func(b *testing.B) {
			a := loaded(b, img)
			imgs := a.images
			if _, err := normalizeImage(a.dir, imgs[0], commit, bc.v, nil); err != nil { // keeps the blob
				b.Fatal(err)
			}
			if bc.v.Dir == "" {
				b.SetBytes(size)
			}
			for b.Loop() {
				if _, err := normalizeImage(a.dir, imgs[0], commit, bc.v, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNormalizedOnARealBase: the normalize step as its exec runs it
// (Normalized: unpack the image's tarball, read its base's metadata from the
// base's tarball, normalize, write the layout the push reads), for a backend
// image whose base holds a real-sized layer (goRootLayer, 64 MB gzip), kept
// because the base tarball names it. The run whose build changed pays this:
// the first on an engine re-encodes the base layer, a later one copies it
// from the cache volume.
// Two such layers (node:24-slim's Debian and Node.js layers are of that
// size) are re-encoded side by side.
func BenchmarkNormalizedOnARealBase(b *testing.B) {
	gz, _ := goRootLayer(b)
	gz2, _ := goRootLayerAt(b, baseBuilt.Add(-time.Hour))
	var baseImg v1.Image
	builtOn := func(blobs ...[]byte) (built, base string) {
		img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		for _, blob := range blobs {
			l, err := tarball.LayerFromOpener(opener(blob), tarball.WithMediaType(types.OCILayer))
			require.NoError(b, err)
			img, err = mutate.AppendLayers(img, l)
			require.NoError(b, err)
		}
		app, err := mutate.AppendLayers(img, layer(b, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"}))
		require.NoError(b, err)
		baseImg = img
		return layoutTarball(b, app), layoutTarball(b, img)
	}
	oneTar, oneBase := builtOn(gz)
	baseDigest, err := baseImg.Digest()
	require.NoError(b, err)
	twoTar, twoBase := builtOn(gz, gz2)
	for _, bc := range []struct {
		name        string
		built, base string
		size        int
		cache       string
		ref         string
	}{
		{"first on the engine", oneTar, oneBase, len(gz), "", ""},
		{"first on the engine, two base layers", twoTar, twoBase, len(gz) + len(gz2), "", ""},
		{"base re-encoded before", oneTar, oneBase, len(gz), b.TempDir(), ""},
		// its first export kept, by an earlier publish on the engine
		{"base first exported before", oneTar, oneBase, len(gz), b.TempDir(), "registry.example/library/base:stable@" + baseDigest.String()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := Prepare{Kind: "backend", Tarball: bc.built, Created: commit, BaseTarball: bc.base, Cache: bc.cache, BaseRef: bc.ref}
			if bc.cache != "" {
				require.NoError(b, Normalized(p, b.TempDir(), filepath.Join(b.TempDir(), "out"), io.Discard))
			}
			b.SetBytes(int64(bc.size))
			for b.Loop() {
				work, out := b.TempDir(), filepath.Join(b.TempDir(), "out")
				if err := Normalized(p, work, out, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPushUnchanged: the push a run where nothing changed makes,
// of an image on a real-sized base layer (goRootLayer, 64 MB gzip) to a
// registry that has every blob already: what every run pays.
func BenchmarkPushUnchanged(b *testing.B) {
	gz, _ := goRootLayer(b)
	baseLayer, err := tarball.LayerFromOpener(opener(gz), tarball.WithMediaType(types.OCILayer))
	require.NoError(b, err)
	img, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON),
		baseLayer, layer(b, commit, map[string]string{"app/server.mjs": "listen()"}))
	require.NoError(b, err)
	dir := b.TempDir()
	l, err := layout.Write(dir, empty.Index)
	require.NoError(b, err)
	require.NoError(b, l.AppendImage(img))
	srv := httptest.NewServer(registry.New())
	b.Cleanup(srv.Close)
	req := Request{Kind: "backend", Refs: []string{strings.TrimPrefix(srv.URL, "http://") + "/team/app-backend:1.4.0"}, Timeout: "1m"}
	_, err = Push(context.Background(), req, secret.Text{}, dir, io.Discard) // the first push uploads every blob
	require.NoError(b, err)
	for b.Loop() {
		if _, err := Push(context.Background(), req, secret.Text{}, dir, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNormalizedALateBuildLayer: the normalize step for an image whose
// build layer is big (a backend shipped with its node_modules; goRootLayer,
// 64 MB gzip) and written after the commit, so it is read, rewritten and
// compressed: what a cold run and a run whose backend changed pay.
func BenchmarkNormalizedALateBuildLayer(b *testing.B) {
	gz, size := goRootLayerAt(b, commit.Add(time.Hour))
	late, err := tarball.LayerFromOpener(opener(gz), tarball.WithMediaType(types.OCILayer))
	require.NoError(b, err)
	built, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), late)
	require.NoError(b, err)
	builtTar := layoutTarball(b, built)
	b.SetBytes(size)
	for b.Loop() {
		work, out := b.TempDir(), filepath.Join(b.TempDir(), "out")
		if err := Normalized(Prepare{Kind: "backend", Tarball: builtTar, Created: commit}, work, out, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
