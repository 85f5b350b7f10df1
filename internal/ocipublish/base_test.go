package ocipublish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/testsupport/tartest"
)

// baseImage is a base image built after the commit (a weekly rebuild of
// node:24-slim, say): its own layer and history hold later times.
func baseImage(t *testing.T, platform v1.Platform) v1.Image {
	t.Helper()
	rebuilt := commit.Add(72 * time.Hour)
	img, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON),
		layer(t, rebuilt, map[string]string{"etc/os-release": "ID=base\n", "arch": platform.Architecture}))
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = platform.OS, platform.Architecture
	cfg.History = []v1.History{{Created: v1.Time{Time: rebuilt}, CreatedBy: "ADD rootfs.tar /"}}
	img, err = mutate.ConfigFile(img, cfg)
	require.NoError(t, err)
	return img
}

// onBase is the image a Dockerfile's last stage builds on base at buildClock.
func onBase(t *testing.T, base v1.Image, buildClock time.Time) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(base, layer(t, buildClock, map[string]string{"app/server.mjs": "listen()"}))
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: buildClock}
	// AppendLayers added an empty entry for the layer: the build's says what made it
	cfg.History[len(cfg.History)-1] = v1.History{Created: v1.Time{Time: buildClock}, CreatedBy: "COPY dist/node /app/"}
	img, err = mutate.ConfigFile(img, cfg)
	require.NoError(t, err)
	return img
}

func basesOf(t *testing.T, imgs ...v1.Image) []Base {
	t.Helper()
	var out []Base
	for _, img := range imgs {
		cfg, err := img.ConfigFile()
		require.NoError(t, err)
		out = append(out, Base{Platform: cfg.Platform(), DiffIDs: cfg.RootFS.DiffIDs})
	}
	return out
}

func TestTheBaseImageIsKeptAsItIsWhateverItsTimes(t *testing.T) {
	base := baseImage(t, amd64)
	monday, tuesday := onBase(t, base, commit.Add(96*time.Hour)), onBase(t, base, commit.Add(120*time.Hour))
	p, bases := Prepare{Kind: "backend", Created: commit}, basesOf(t, base)

	a, err := normalize(t, monday, p, bases...)
	require.NoError(t, err)
	b, err := normalize(t, tuesday, p, bases...)
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, a), digestOf(t, b), "builds at other times: one digest")

	out := a.(v1.Image)
	baseLayers, err := base.Layers()
	require.NoError(t, err)
	layers, err := out.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 2)
	want, _ := baseLayers[0].DiffID()
	got, _ := layers[0].DiffID()
	assert.Equal(t, want, got, "the base's layer keeps its content, though it is newer than --created")
	assert.Equal(t, []string{"app/server.mjs " + commit.String()}, fileTimes(t, layers[1]), "the build's layer is clamped")

	cfg, err := out.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, commit, cfg.History[0].Created.UTC(), "the base's history is clamped too: its time may be an exporter's clock")
	assert.Equal(t, commit, cfg.History[1].Created.UTC(), "the build's history is clamped")
	assert.Equal(t, commit, cfg.Created.UTC())

	without, err := normalize(t, monday, Prepare{Kind: "backend", Created: commit})
	require.NoError(t, err)
	wl, err := without.(v1.Image).Layers()
	require.NoError(t, err)
	rewritten, _ := wl[0].DiffID()
	assert.NotEqual(t, want, rewritten, "without its base, a newer base layer is rewritten (and uploaded again)")
}

func TestABaseThatIsNotTheImagesKeepsNothing(t *testing.T) {
	other := baseImage(t, v1.Platform{OS: "linux", Architecture: "riscv64"})
	img := onBase(t, baseImage(t, amd64), commit.Add(time.Hour))
	withOther, err := normalize(t, img, Prepare{Kind: "backend", Created: commit}, basesOf(t, other)...)
	require.NoError(t, err)
	without, err := normalize(t, img, Prepare{Kind: "backend", Created: commit})
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, without), digestOf(t, withOther), "layers that differ from the base's are the build's")
}

func TestEachPlatformKeepsItsOwnBase(t *testing.T) {
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	bases := []v1.Image{baseImage(t, amd64), baseImage(t, arm64)}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for i, p := range []v1.Platform{amd64, arm64} {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: onBase(t, bases[i], commit.Add(time.Hour)), Descriptor: v1.Descriptor{Platform: &p}})
	}
	n, err := normalize(t, idx, Prepare{Kind: "backend", Created: commit, Platforms: []string{"linux/amd64", "linux/arm64"}}, basesOf(t, bases...)...)
	require.NoError(t, err)
	im, err := n.(v1.ImageIndex).IndexManifest()
	require.NoError(t, err)
	for i, d := range im.Manifests {
		img, err := n.(v1.ImageIndex).Image(d.Digest)
		require.NoError(t, err)
		layers, err := img.Layers()
		require.NoError(t, err)
		baseLayers, err := bases[i].Layers()
		require.NoError(t, err)
		want, _ := baseLayers[0].DiffID()
		got, _ := layers[0].DiffID()
		assert.Equal(t, want, got, "%s keeps its own base's layer", d.Platform.Architecture)
	}
}

func TestReadBasesReadsTheTarballsMetadataOnly(t *testing.T) {
	base := baseImage(t, amd64)
	tarball := layoutTarball(t, base)

	work := t.TempDir()
	got, err := ReadBases(tarball, work)
	require.NoError(t, err)
	assert.Equal(t, basesOf(t, base), got)

	layers, err := base.Layers()
	require.NoError(t, err)
	d, err := layers[0].Digest()
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(work, "blobs", d.Algorithm, d.Hex))
	assert.NoError(t, err, "a small layer is unpacked with the metadata")

	_, err = ReadBases(filepath.Join(t.TempDir(), "none.tar"), t.TempDir())
	assert.Error(t, err)
}

// fileTimes lists each file of a layer with its modification time.
func fileTimes(t *testing.T, l v1.Layer) []string {
	t.Helper()
	rc, err := l.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var out []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		out = append(out, h.Name+" "+h.ModTime.UTC().String())
	}
}

// layoutTarball writes a as Container.asTarball gives it: a layout whose
// index names the image, or the platform index of a multi-platform image.
func layoutTarball(t testing.TB, a digester) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "image.tar")
	tartest.Pack(t, layoutOf(t, a), out)
	return out
}

// filesUnder are the files under dir, as slash paths relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	}))
	return got
}

func TestNormalizedKeepsTheBaseItIsGivenAndWarnsOfOneItCannotRead(t *testing.T) {
	base := baseImage(t, amd64)
	built := layoutTarball(t, onBase(t, base, commit.Add(96*time.Hour)))
	baseLayers, err := base.Layers()
	require.NoError(t, err)
	want, err := baseLayers[0].Digest()
	require.NoError(t, err)
	firstLayer := func(dir string) v1.Hash {
		a, err := loadBack(t, dir)
		require.NoError(t, err)
		layers, err := a.(v1.Image).Layers()
		require.NoError(t, err)
		d, err := layers[0].Digest()
		require.NoError(t, err)
		return d
	}

	var warn strings.Builder
	out := filepath.Join(t.TempDir(), "out")
	require.NoError(t, Normalized(Prepare{Kind: "backend", Tarball: built, Created: commit, BaseTarball: layoutTarball(t, base)}, t.TempDir(), out, &warn))
	assert.Equal(t, want, firstLayer(out), "the base's layer is pushed as the registry has it")
	assert.Empty(t, warn.String())

	garbage := filepath.Join(t.TempDir(), "base.tar")
	require.NoError(t, os.WriteFile(garbage, []byte("not a tarball"), 0o644))
	out = filepath.Join(t.TempDir(), "out")
	require.NoError(t, Normalized(Prepare{Kind: "backend", Tarball: built, Created: commit, BaseTarball: garbage}, t.TempDir(), out, &warn),
		"a base that cannot be read does not fail the publish")
	assert.Contains(t, warn.String(), "oci-publish: the backend image's base could not be read")
	assert.NotEqual(t, want, firstLayer(out), "without its base, the newer base layer is rewritten")
}

// The engine exports a base layer as whichever blob it holds for that
// content (engine-facts 41): the registry's gzip, or its own gzip of a zstd
// blob another image brought, and its exporter names that blob in the
// history it writes for a base without any. The same image gives one digest
// whichever it was.
func TestABaseLayerGivesOneDigestWhicheverBlobTheEngineHeld(t *testing.T) {
	rc, err := layer(t, commit.Add(72*time.Hour), map[string]string{"etc/os-release": "ID=base\n", "bin/sh": strings.Repeat("#!/bin/sh\n", 20_000)}).Uncompressed()
	require.NoError(t, err)
	raw, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())

	images, blobs := map[string]bool{}, map[v1.Hash]bool{}
	for _, level := range []int{gzip.BestSpeed, gzip.DefaultCompression, gzip.BestCompression} {
		held, err := tarball.LayerFromOpener(opener(raw), tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(level))
		require.NoError(t, err)
		blob, err := held.Digest()
		require.NoError(t, err)
		blobs[blob] = true
		base, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), held)
		require.NoError(t, err)
		cfg, err := base.ConfigFile()
		require.NoError(t, err)
		cfg = cfg.DeepCopy()
		cfg.History = []v1.History{{Created: v1.Time{Time: commit.Add(time.Hour)}, CreatedBy: exporterImport + blob.String(), Comment: exporterComment}}
		base, err = mutate.ConfigFile(base, cfg)
		require.NoError(t, err)

		n, err := normalize(t, onBase(t, base, commit.Add(time.Hour)), Prepare{Kind: "frontend", Created: commit}, basesOf(t, base)...)
		require.NoError(t, err)
		images[digestOf(t, n)] = true
		out := n.(v1.Image)
		layers, err := out.Layers()
		require.NoError(t, err)
		pushed, err := layers[0].Digest()
		require.NoError(t, err)
		diffID, err := layers[0].DiffID()
		require.NoError(t, err)
		want, _, err := v1.SHA256(bytes.NewReader(raw))
		require.NoError(t, err)
		assert.Equal(t, want, diffID, "the base layer's content as it was")
		assert.Equal(t, []string{"bin/sh " + commit.Add(72*time.Hour).String(), "etc/os-release " + commit.Add(72*time.Hour).String()}, fileTimes(t, layers[0]), "the base's own times stay")
		got, err := out.ConfigFile()
		require.NoError(t, err)
		assert.Equal(t, exporterImport+pushed.String(), got.History[0].CreatedBy, "the exporter's entry names the layer as pushed")
		assert.Equal(t, "COPY dist/node /app/", got.History[1].CreatedBy, "the build's entry as it was")
	}
	assert.Len(t, blobs, 3, "three blobs of one content")
	assert.Len(t, images, 1, "one image")
}

func TestABaseLayerThatIsNotWhatItsConfigSaysFailsNamingIt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		blob  v1.Layer
		claim bool // the config claims a content the blob does not hold
		want  string
	}{
		{"no gzip", static.NewLayer([]byte("\x1f\x8b\x08 not gzip"), types.OCILayer), false, "layer 0: read the layer"},
		{"another content", layer(t, commit, map[string]string{"etc/os-release": "ID=other\n"}), true, "layer 0: the layer sha256:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), tc.blob)
			require.NoError(t, err)
			built := onBase(t, base, commit.Add(time.Hour))
			a := loaded(t, built)
			imgs := a.images
			want := basesOf(t, base)[0]
			if tc.claim {
				claimed := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}
				imgs[0].config.RootFS.DiffIDs[0], want.DiffIDs = claimed, []v1.Hash{claimed}
			}
			_, err = normalizeImage(a.dir, imgs[0], commit, Cache{}, &want)
			require.ErrorContains(t, err, tc.want)
			assert.LessOrEqual(t, len(err.Error()), 200, "a short error: %s", err)
		})
	}
}

func TestNormalizedLeavesALayoutOfTheNormalizedImageAlone(t *testing.T) {
	for _, tc := range []struct {
		name  string
		built func(t *testing.T) v1.Image
	}{
		{"a build layer rewritten on a kept base", func(t *testing.T) v1.Image { return onBase(t, baseImage(t, amd64), commit.Add(time.Hour)) }},
		{"nothing to rewrite", func(t *testing.T) v1.Image { return onBase(t, baseImage(t, amd64), commit.Add(-time.Hour)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			built := tc.built(t)
			base := baseImage(t, amd64)
			out := filepath.Join(t.TempDir(), "out")
			require.NoError(t, Normalized(Prepare{Kind: "backend", Tarball: layoutTarball(t, built), Created: commit, BaseTarball: layoutTarball(t, base)}, t.TempDir(), out, io.Discard))

			a, err := loadBack(t, out)
			require.NoError(t, err)
			img := a.(v1.Image)
			require.NoError(t, validate.Image(img), "every blob there, each as its digest and diff ID say")
			m, err := img.Manifest()
			require.NoError(t, err)
			d, err := img.Digest()
			require.NoError(t, err)
			want := []string{"index.json", "oci-layout", "blobs/sha256/" + d.Hex, "blobs/sha256/" + m.Config.Digest.Hex}
			for _, l := range m.Layers {
				want = append(want, "blobs/sha256/"+l.Digest.Hex)
			}
			assert.ElementsMatch(t, want, filesUnder(t, out), "the normalized image's blobs and nothing the build's image had beside")
			assert.Equal(t, digestOf(t, mustNormalize(t, built, base)), d.String(), "the same image as normalizing in memory gives")
		})
	}
}

// mustNormalize is built normalized in memory, on base.
func mustNormalize(t *testing.T, built, base v1.Image) v1.Image {
	t.Helper()
	n, err := normalizeImage1(t, built, commit, Cache{}, &basesOf(t, base)[0])
	require.NoError(t, err)
	return n
}

func TestAKeptLayerKeepsItsDescriptorsAnnotations(t *testing.T) {
	base := baseImage(t, amd64)
	layers, err := base.Layers()
	require.NoError(t, err)
	annotated, err := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON),
		mutate.Addendum{Layer: layers[0], Annotations: map[string]string{"org.opencontainers.image.title": "rootfs"}})
	require.NoError(t, err)
	built := onBase(t, annotated, commit.Add(time.Hour))

	out := filepath.Join(t.TempDir(), "out")
	require.NoError(t, Normalized(Prepare{Kind: "backend", Tarball: layoutTarball(t, built), Created: commit, BaseTarball: layoutTarball(t, annotated)}, t.TempDir(), out, io.Discard))
	a, err := loadBack(t, out)
	require.NoError(t, err)
	m, err := a.(v1.Image).Manifest()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"org.opencontainers.image.title": "rootfs"}, m.Layers[0].Annotations, "the base layer as the registry describes it")
}

func TestNormalizedWritesAPlatformIndexWithExactlyItsBlobs(t *testing.T) {
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	var bases []v1.Image
	built := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	baseIdx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range []v1.Platform{amd64, arm64} {
		base := baseImage(t, p)
		bases = append(bases, base)
		built = mutate.AppendManifests(built, mutate.IndexAddendum{Add: onBase(t, base, commit.Add(time.Hour)), Descriptor: v1.Descriptor{Platform: &p}})
		baseIdx = mutate.AppendManifests(baseIdx, mutate.IndexAddendum{Add: base, Descriptor: v1.Descriptor{Platform: &p}})
	}
	// an attestation manifest, as BuildKit adds one: it names the digests
	// before normalizing, so it is left out, and its blobs with it
	attestation, err := mutate.AppendLayers(empty.Image, static.NewLayer([]byte(`{"predicateType":"https://spdx.dev/Document"}`), types.OCILayer))
	require.NoError(t, err)
	unknown := v1.Platform{OS: "unknown", Architecture: "unknown"}
	built = mutate.AppendManifests(built, mutate.IndexAddendum{Add: attestation, Descriptor: v1.Descriptor{Platform: &unknown,
		Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"}}})

	out := filepath.Join(t.TempDir(), "out")
	var warn strings.Builder
	require.NoError(t, Normalized(Prepare{Kind: "backend", Tarball: layoutTarball(t, built), Created: commit, Platforms: []string{"linux/amd64", "linux/arm64"},
		BaseTarball: layoutTarball(t, baseIdx)}, t.TempDir(), out, &warn))
	assert.Empty(t, warn.String(), "both platforms' bases are read")

	a, err := loadBack(t, out)
	require.NoError(t, err)
	idx, ok := a.(v1.ImageIndex)
	require.True(t, ok, "a platform index, as asked")
	require.NoError(t, validate.Index(idx), "every blob of both platforms there, each as its digest says")
	d, err := idx.Digest()
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 2, "the two platforms, no attestation")
	want := []string{"index.json", "oci-layout", "blobs/sha256/" + d.Hex}
	for i, desc := range im.Manifests {
		img, err := idx.Image(desc.Digest)
		require.NoError(t, err)
		m, err := img.Manifest()
		require.NoError(t, err)
		want = append(want, "blobs/sha256/"+desc.Digest.Hex, "blobs/sha256/"+m.Config.Digest.Hex)
		for _, l := range m.Layers {
			want = append(want, "blobs/sha256/"+l.Digest.Hex)
		}
		baseLayers, err := bases[i].Layers()
		require.NoError(t, err)
		baseLayer, err := baseLayers[0].Digest()
		require.NoError(t, err)
		assert.Equal(t, baseLayer, m.Layers[0].Digest, "%s keeps its own base's layer", desc.Platform.Architecture)
	}
	slices.Sort(want)
	want = slices.Compact(want) // the platforms' build layers are the same bytes: one blob
	assert.ElementsMatch(t, want, filesUnder(t, out), "the normalized index's blobs and nothing else: not the build's manifests, not the attestation's")

	inMemory, err := normalize(t, built, Prepare{Kind: "backend", Created: commit, Platforms: []string{"linux/amd64", "linux/arm64"}}, basesOf(t, bases...)...)
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, inMemory), d.String(), "the same index as normalizing in memory gives")
}

// A base image without history (made by crane, ko, apko, Bazel) gets one
// entry from the engine's exporter, stamped with that export's clock, in the
// base's export and in the built image alike: the same commit built on two
// fresh engines, at two clocks, still gives one digest.
func TestABaseWithoutHistoryGivesOneDigestOnFreshEngines(t *testing.T) {
	built := func(clock time.Time) (v1.Image, Base) {
		base := baseImage(t, amd64)
		cfg, err := base.ConfigFile()
		require.NoError(t, err)
		cfg = cfg.DeepCopy()
		diffID := cfg.RootFS.DiffIDs[0].String()
		cfg.History = []v1.History{{Created: v1.Time{Time: clock}, CreatedBy: "import image layer " + diffID, Comment: "buildkit.exporter.image.v0"}}
		base, err = mutate.ConfigFile(base, cfg)
		require.NoError(t, err)
		return onBase(t, base, clock), basesOf(t, base)[0]
	}
	first, firstBase := built(commit.Add(24 * time.Hour))
	second, secondBase := built(commit.Add(48 * time.Hour))
	a, err := normalize(t, first, Prepare{Kind: "frontend", Created: commit}, firstBase)
	require.NoError(t, err)
	b, err := normalize(t, second, Prepare{Kind: "frontend", Created: commit}, secondBase)
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, a), digestOf(t, b))
	cfg, err := a.(v1.Image).ConfigFile()
	require.NoError(t, err)
	for i, h := range cfg.History {
		assert.False(t, h.Created.After(commit), "history[%d] is at or before --created", i)
	}
}
