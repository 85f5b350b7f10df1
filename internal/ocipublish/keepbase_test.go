package ocipublish

import (
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/testsupport/tartest"
)

// registryBase is a base image whose one layer the registry holds in a
// gzip of its own (not the canonical one), and that layer's content.
func registryBase(t *testing.T) (v1.Image, []byte) {
	t.Helper()
	rc, err := layer(t, commit.Add(72*time.Hour), map[string]string{"etc/os-release": "ID=base\n", "bin/sh": strings.Repeat("#!/bin/sh\n", 20_000)}).Uncompressed()
	require.NoError(t, err)
	raw, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	held, err := tarball.LayerFromOpener(opener(raw), tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestCompression))
	require.NoError(t, err)
	base, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), held)
	require.NoError(t, err)
	return base, raw
}

func firstLayerDigest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	layers, err := img.Layers()
	require.NoError(t, err)
	d, err := layers[0].Digest()
	require.NoError(t, err)
	return d
}

// What keep-base re-encodes while the project builds is what normalize
// would have re-encoded after it: the image gets the same digest, and its
// base layer is the canonical gzip keep-base kept.
func TestAKeptBaseGivesTheImageTheDigestNormalizeAloneGives(t *testing.T) {
	base, raw := registryBase(t)
	built := layoutTarball(t, onBase(t, base, commit.Add(time.Hour)))
	baseTar := layoutTarball(t, base)

	alone := filepath.Join(t.TempDir(), "out")
	require.NoError(t, Normalized(context.Background(), Prepare{Kind: "backend", Tarball: built, Created: commit, BaseTarball: baseTar, Verdicts: t.TempDir()}, t.TempDir(), alone, io.Discard))

	v := Verdicts{Dir: t.TempDir()}
	n, err := KeepBase(baseTar, t.TempDir(), "", v)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	kept, err := os.ReadFile(v.reencodedFile(firstLayerDigest(t, base)))
	require.NoError(t, err, "the base layer is kept under the blob the engine exports")
	assert.Equal(t, canonicalGzip(t, raw), kept, "in the canonical gzip")

	afterKeep := filepath.Join(t.TempDir(), "out")
	require.NoError(t, Normalized(context.Background(), Prepare{Kind: "backend", Tarball: built, Created: commit, BaseTarball: baseTar, Verdicts: v.Dir}, t.TempDir(), afterKeep, io.Discard))
	a, err := loadBack(t, alone)
	require.NoError(t, err)
	b, err := loadBack(t, afterKeep)
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, a), digestOf(t, b), "the same image")
	assert.Equal(t, sha256Of(kept), firstLayerDigest(t, b.(v1.Image)), "its base layer is the kept blob")
}

// A kept blob is what normalize copies: keep-base leaves one it finds.
func TestKeepBaseKeepsEachPlatformsLayersOnce(t *testing.T) {
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	bases := []v1.Image{baseImage(t, amd64), baseImage(t, arm64)}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for i, p := range []v1.Platform{amd64, arm64} {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: bases[i], Descriptor: v1.Descriptor{Platform: &p}})
	}
	baseTar := layoutTarball(t, idx)
	v := Verdicts{Dir: t.TempDir()}

	n, err := KeepBase(baseTar, t.TempDir(), "", v)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "one layer of each platform")
	for _, b := range bases {
		assert.FileExists(t, v.reencodedFile(firstLayerDigest(t, b)))
	}

	// a blob another publish kept stays as it is
	other := []byte("kept by another publish")
	require.NoError(t, os.WriteFile(v.reencodedFile(firstLayerDigest(t, bases[0])), other, 0o644))
	n, err = KeepBase(baseTar, t.TempDir(), "", v)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	got, err := os.ReadFile(v.reencodedFile(firstLayerDigest(t, bases[0])))
	require.NoError(t, err)
	assert.Equal(t, other, got)
}

func TestKeepBaseKeepsOnlyWhatNormalizeWouldReencode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		base    func(t *testing.T) string // the base's tarball
		noDir   bool
		kept    int
		wantErr string
	}{
		{"an uncompressed layer: nothing to re-encode", func(t *testing.T) string {
			img, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON),
				static.NewLayer([]byte("not even a tar"), types.OCIUncompressedLayer))
			require.NoError(t, err)
			return layoutTarball(t, img)
		}, false, 0, ""},
		{"a layer that is not the content its config says", func(t *testing.T) string {
			base, _ := registryBase(t)
			dir := layoutOf(t, base)
			d := firstLayerDigest(t, base)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "blobs", d.Algorithm, d.Hex), canonicalGzip(t, []byte("other content")), 0o644))
			out := filepath.Join(t.TempDir(), "base.tar")
			tartest.Pack(t, dir, out)
			return out
		}, false, 0, "layer sha256:"},
		{"not a tarball", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "base.tar")
			require.NoError(t, os.WriteFile(p, []byte("not a tarball"), 0o644))
			return p
		}, false, 0, "read the image tarball"},
		{"no folder to keep in", func(t *testing.T) string { return layoutTarball(t, baseImage(t, amd64)) }, true, 0, "no folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Verdicts{Dir: t.TempDir()}
			if tc.noDir {
				v.Dir = ""
			}
			n, err := KeepBase(tc.base(t), t.TempDir(), "", v)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.LessOrEqual(t, len(err.Error()), 200, "a short error: %s", err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.kept, n)
			if v.Dir != "" {
				// nothing half-written is left to be taken for a kept blob
				var blobs []string
				for _, f := range filesUnder(t, v.Dir) {
					if !strings.HasSuffix(f, ".lock") {
						blobs = append(blobs, f)
					}
				}
				assert.Empty(t, blobs)
			}
		})
	}
}
