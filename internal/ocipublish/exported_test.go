package ocipublish

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A base is taken as the engine first exported it, kept by the first
// publish's normalize: an image an engine restarted on its state builds
// again on it (its base layers made anew, fact 48) gets the digest a fresh
// engine gives it. Nothing kept before the restart: nothing to put back.
func TestARemadeBaseIsRebasedOnTheLayersTheEngineFirstExported(t *testing.T) {
	pulled, anew, base, d := remadeBaseImage(t)
	ref := "registry.example/team/base:stable@" + d.String()
	remadeExport := imageOf(t, anew) // the base as a restarted engine exports it
	web := layer(t, commit.Add(3600e9), map[string]string{"usr/share/nginx/html/index.html": "<p>1</p>"})
	changed := layer(t, commit.Add(3600e9), map[string]string{"usr/share/nginx/html/index.html": "<p>2</p>"})
	fresh, _ := publishedOn(t, imageOf(t, pulled, changed), base, ref, Cache{Dir: t.TempDir()})

	for _, tc := range []struct {
		name string
		// whether the engine published an image on the base before the restart
		published bool
		rebased   bool
	}{
		{"a publish on a fresh engine (build, then publish)", true, true},
		{"nothing before the restart", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Cache{Dir: t.TempDir()}
			if tc.published {
				_, said := publishedOn(t, imageOf(t, pulled, web), base, ref, v)
				assert.Empty(t, said)
			}
			restarted, said := publishedOn(t, imageOf(t, anew, changed), remadeExport, ref, v)
			assert.Equal(t, tc.rebased, digestOf(t, fresh) == digestOf(t, restarted), "the fresh engine's digest: %s", said)
			assert.Equal(t, tc.rebased, strings.Contains(said, "1 "+putBack), said)
		})
	}
}

// An image that does not hold the engine's export of its base whole (its
// base layers remade, the base exported alone still as pulled: fact 48)
// keeps nothing as the base's first export.
func TestAnImageWithoutItsBaseWholeKeepsNoFirstExport(t *testing.T) {
	pulled, anew, base, d := remadeBaseImage(t)
	ref := "registry.example/team/base:stable@" + d.String()
	v := Cache{Dir: t.TempDir()}
	web := layer(t, commit.Add(3600e9), map[string]string{"usr/share/nginx/html/index.html": "<p>1</p>"})
	publishedOn(t, imageOf(t, anew, web), base, ref, v)
	_, kept := v.keptBases(v.firstExportFile(ref))
	assert.False(t, kept)
	publishedOn(t, imageOf(t, pulled, web), base, ref, v)
	_, kept = v.keptBases(v.firstExportFile(ref))
	assert.True(t, kept)
}

// remadeBaseImage is remadeBase's layers, the image of the pulled one and
// that image's digest.
func remadeBaseImage(t *testing.T) (pulled, anew v1.Layer, base v1.Image, d v1.Hash) {
	t.Helper()
	pulled, anew = remadeBase(t)
	base = imageOf(t, pulled)
	d, err := base.Digest()
	require.NoError(t, err)
	return pulled, anew, base, d
}

// An image an engine restarted on its state builds again, whose build
// output equals one the engine made before the restart, holds the same
// layers as a fresh engine's, but the exporter describes that layer as the
// snapshot it reused ("rehydrated persisted snapshot", engine run) where a
// fresh engine names the call that made it: the publish gives both the
// fresh engine's digest.
func TestAReusedSnapshotGivesTheImageItsFreshDigest(t *testing.T) {
	pulled, _ := remadeBase(t)
	pulledDigest, err := pulled.Digest()
	require.NoError(t, err)
	web := layer(t, commit.Add(3600e9), map[string]string{"usr/share/nginx/html/index.html": "<p>1</p>"})
	built := func(describedAs string) v1.Image {
		img, err := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON),
			mutate.Addendum{Layer: pulled, History: v1.History{CreatedBy: exporterImport + pulledDigest.String(), Comment: exporterComment}},
			mutate.Addendum{Layer: web, History: v1.History{CreatedBy: describedAs, Comment: exporterComment}})
		require.NoError(t, err)
		return img
	}
	base := imageOf(t, pulled)
	fresh, _ := publishedOn(t, built("Directory.withDirectoryDockerfileCompat"), base, "", Cache{Dir: t.TempDir()})
	restarted, _ := publishedOn(t, built("rehydrated persisted snapshot"), base, "", Cache{Dir: t.TempDir()})
	assert.Equal(t, digestOf(t, fresh), digestOf(t, restarted))
	cfg, err := restarted.ConfigFile()
	require.NoError(t, err)
	require.Len(t, cfg.History, 2)
	assert.Empty(t, cfg.History[1].CreatedBy, "nothing of the engine's snapshot")
}

// A base of two platforms is kept as the engine first exported it, each
// platform's own: after a restart each image of a two-platform publish gets
// its fresh digest.
func TestABaseOfTwoPlatformsGivesEachImageItsFreshDigest(t *testing.T) {
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	old := commit.Add(-30 * 24 * time.Hour)
	pulledOf := func(arch string) (pulled, anew v1.Layer) {
		pulled = rawLayer(t, file{name: "./", dir: true, mtime: old}, file{name: "./arch", body: arch, mtime: old})
		anew = rawLayer(t, file{name: "arch", body: arch, mtime: old})
		return pulled, anew
	}
	index := func(amd, arm v1.Image) v1.ImageIndex {
		return mutate.AppendManifests(empty.Index,
			mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &amd64}},
			mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &arm64}})
	}
	amdPulled, amdAnew := pulledOf("amd64")
	armPulled, armAnew := pulledOf("arm64")
	base := index(imageOn(t, amd64, amdPulled), imageOn(t, arm64, armPulled))
	d, err := base.Digest()
	require.NoError(t, err)
	ref := "registry.example/team/base:stable@" + d.String()
	app := layer(t, commit.Add(3600e9), map[string]string{"usr/share/nginx/html/index.html": "<p>1</p>"})

	published := func(built, export v1.ImageIndex, v Cache) v1.ImageIndex {
		out := filepath.Join(t.TempDir(), "out")
		require.NoError(t, Normalized(Prepare{Kind: "frontend", Tarball: layoutTarball(t, built), Created: commit,
			Platforms: []string{"linux/amd64", "linux/arm64"}, BaseTarball: layoutTarball(t, export), BaseRef: ref, Cache: v.Dir}, t.TempDir(), out, io.Discard))
		a, err := loadBack(t, out)
		require.NoError(t, err)
		return a.(v1.ImageIndex)
	}
	v := Cache{Dir: t.TempDir()}
	fresh := published(index(imageOn(t, amd64, amdPulled, app), imageOn(t, arm64, armPulled, app)), base, v)
	restarted := published(index(imageOn(t, amd64, amdAnew, app), imageOn(t, arm64, armAnew, app)), index(imageOn(t, amd64, amdAnew), imageOn(t, arm64, armAnew)), v)
	assert.Equal(t, digestOf(t, fresh), digestOf(t, restarted))
}

// Each platform of an image finds its base, the variant of an arm64
// platform written out on one side only (a base kept as linux/arm64/v8, the
// image's linux/arm64): its base layers keep their times.
func TestAnArm64BaseIsFoundWhateverItsVariant(t *testing.T) {
	late := commit.Add(time.Hour) // base layers newer than --created: kept as they are, or clamped if not found
	arm64v8 := v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	amdBase := layer(t, late, map[string]string{"arch": "amd64"})
	armBase := layer(t, late, map[string]string{"arch": "arm64"})
	app := layer(t, late, map[string]string{"app/server.mjs": "listen()"})
	ref := "registry.example/library/base:stable@sha256:" + strings.Repeat("b", 64)
	v := Cache{Dir: t.TempDir()}
	var kept []Base
	for _, b := range []struct {
		p *v1.Platform
		l v1.Layer
	}{{&amd64, amdBase}, {&arm64v8, armBase}} {
		id, err := b.l.DiffID()
		require.NoError(t, err)
		kept = append(kept, Base{Platform: b.p, DiffIDs: []v1.Hash{id}})
	}
	v.keepFirstExports(ref, kept)
	built := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: imageOn(t, amd64, amdBase, app), Descriptor: v1.Descriptor{Platform: &amd64}},
		mutate.IndexAddendum{Add: imageOn(t, arm64, armBase, app), Descriptor: v1.Descriptor{Platform: &arm64}})
	out := filepath.Join(t.TempDir(), "out")
	require.NoError(t, Normalized(Prepare{Kind: "backend", Tarball: layoutTarball(t, built), Created: commit,
		Platforms: []string{"linux/amd64", "linux/arm64"}, BaseRef: ref, Cache: v.Dir}, t.TempDir(), out, io.Discard))
	a, err := loadBack(t, out)
	require.NoError(t, err)
	im, err := a.(v1.ImageIndex).IndexManifest()
	require.NoError(t, err)
	for i, want := range []v1.Layer{amdBase, armBase} {
		img, err := a.(v1.ImageIndex).Image(im.Manifests[i].Digest)
		require.NoError(t, err)
		cfg, err := img.ConfigFile()
		require.NoError(t, err)
		id, err := want.DiffID()
		require.NoError(t, err)
		assert.Equal(t, id, cfg.RootFS.DiffIDs[0], "%s: the base's layer, its times kept", platformOf(im.Manifests[i].Platform))
	}
}

// A base kept as the engine first exported it for one platform (a publish
// of one platform first) still lets a later publish of two platforms find
// the other platform's base in the engine's export: the same digest as on
// an engine that kept nothing.
func TestABaseKeptForOnePlatformLeavesTheOtherToTheEnginesExport(t *testing.T) {
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	late := commit.Add(time.Hour)
	amdBase := imageOn(t, amd64, layer(t, late, map[string]string{"arch": "amd64"}))
	armBase := imageOn(t, arm64, layer(t, late, map[string]string{"arch": "arm64"}))
	index := func(amd, arm v1.Image) v1.ImageIndex {
		return mutate.AppendManifests(empty.Index,
			mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &amd64}},
			mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &arm64}})
	}
	base := index(amdBase, armBase)
	d, err := base.Digest()
	require.NoError(t, err)
	ref := "registry.example/team/base:stable@" + d.String()
	app := layer(t, late, map[string]string{"app/server.mjs": "listen()"})
	on := func(b v1.Image) v1.Image {
		layers, err := b.Layers()
		require.NoError(t, err)
		cfg, err := b.ConfigFile()
		require.NoError(t, err)
		return imageOn(t, *cfg.Platform(), append(layers, app)...)
	}
	built := index(on(amdBase), on(armBase))
	published := func(v Cache) string {
		out := filepath.Join(t.TempDir(), "out")
		require.NoError(t, Normalized(Prepare{Kind: "backend", Tarball: layoutTarball(t, built), Created: commit,
			Platforms: []string{"linux/amd64", "linux/arm64"}, BaseTarball: layoutTarball(t, base), BaseRef: ref, Cache: v.Dir}, t.TempDir(), out, io.Discard))
		a, err := loadBack(t, out)
		require.NoError(t, err)
		return digestOf(t, a)
	}
	want := published(Cache{Dir: t.TempDir()})

	v := Cache{Dir: t.TempDir()}
	publishedOn(t, on(amdBase), amdBase, ref, v) // the amd64 image alone first
	assert.Equal(t, want, published(v), "two platforms after one")
	assert.Equal(t, want, published(v), "and again, from what is kept")
	kept, ok := v.keptBases(v.firstExportFile(ref))
	require.True(t, ok)
	assert.Len(t, kept, 2, "each platform's first export kept")
}

// Publishes keep each its platform's first export beside the others' (two
// at once with other platforms of one base may keep one of them only):
// none is written over; a kept file that cannot be read is left as it is.
func TestEachPlatformsFirstExportIsKeptBesideTheOthers(t *testing.T) {
	ref := "registry.example/library/base@sha256:" + strings.Repeat("e", 64)
	v := Cache{Dir: t.TempDir()}
	file := v.firstExportFile(ref)
	first := func(arch string) Base {
		id, _, err := v1.SHA256(strings.NewReader(arch))
		require.NoError(t, err)
		return Base{Platform: &v1.Platform{OS: "linux", Architecture: arch}, DiffIDs: []v1.Hash{id}}
	}
	v.keepFirstExports(ref, []Base{first("amd64")})
	for _, arch := range []string{"arm64", "ppc64le", "s390x", "riscv64"} {
		v.keepFirstExports(ref, []Base{first(arch)})
	}
	v.keepFirstExports(ref, []Base{{Platform: first("amd64").Platform, DiffIDs: []v1.Hash{{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}}}})
	kept, ok := v.keptBases(file)
	require.True(t, ok)
	require.Len(t, kept, 5, "every platform's")
	assert.Equal(t, first("amd64").DiffIDs, kept[0].DiffIDs, "the first export of a platform stays")

	require.NoError(t, os.WriteFile(file, []byte("not json"), 0o644))
	v.keepFirstExports(ref, []Base{first("arm64")})
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "not json", string(data), "a file not read is not written over")
}

// The first exports a persistent engine's cache volume holds are read as
// they were written: the file's format is part of what a publish keeps.
func TestAFirstExportKeptBeforeIsReadAsWritten(t *testing.T) {
	ref := "registry.example/library/base@sha256:" + strings.Repeat("f", 64)
	v := Cache{Dir: t.TempDir()}
	layer := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("1", 64)}
	diffID := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("2", 64)}
	require.NoError(t, os.MkdirAll(filepath.Dir(v.firstExportFile(ref)), 0o755))
	require.NoError(t, os.WriteFile(v.firstExportFile(ref), []byte(`[{"platform":{"architecture":"amd64","os":"linux"},`+
		`"diffIDs":["`+diffID.String()+`"],"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","size":3,"digest":"`+layer.String()+`"}]}]`), 0o644))
	assert.Empty(t, v.firstExports(ref), "none without its canonical blobs")
	v.keep(v.reencodedFile(layer), strings.NewReader("gz"))
	got := v.firstExports(ref)
	require.Len(t, got, 1)
	assert.Equal(t, &v1.Platform{OS: "linux", Architecture: "amd64"}, got[0].Platform)
	assert.Equal(t, []v1.Hash{diffID}, got[0].DiffIDs)
	assert.Equal(t, []v1.Descriptor{{MediaType: types.OCILayer, Size: 3, Digest: layer}}, got[0].FirstExport)
}
