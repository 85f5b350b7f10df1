package ocipublish

import (
	"archive/tar"
	"bytes"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// file is one entry of a layer written as given: a directory, a hard link
// to link, or a file of body.
type file struct {
	name, body, link string
	dir              bool
	mtime            time.Time
}

// rawLayer is a gzip layer of files, in order, names as given.
func rawLayer(t *testing.T, files ...file) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), ModTime: f.mtime, Typeflag: tar.TypeReg}
		if f.dir {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if f.link != "" {
			h.Typeflag, h.Linkname, h.Size = tar.TypeLink, f.link, 0
		}
		require.NoError(t, tw.WriteHeader(h))
		_, err := tw.Write([]byte(f.body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	l, err := tarball.LayerFromOpener(opener(canonicalGzip(t, buf.Bytes())), tarball.WithMediaType(types.OCILayer))
	require.NoError(t, err)
	return l
}

// imageOf is an image of layers, on platform amd64.
func imageOf(t *testing.T, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), layers...)
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = amd64.OS, amd64.Architecture
	img, err = mutate.ConfigFile(img, cfg)
	require.NoError(t, err)
	return img
}

// An engine restarted on its state makes a base's layer anew from its
// files (engine-facts 48): names without "./", no root entry. The image
// then gets the base's own layer and the digest a fresh engine gives it; a
// layer that differs in a file's content or time stays the build's.
func TestABaseLayerTheEngineMadeAnewBecomesTheBasesOwn(t *testing.T) {
	old := commit.Add(-30 * 24 * time.Hour)
	pulled := rawLayer(t, file{name: "./", dir: true, mtime: old}, file{name: "./etc/", dir: true, mtime: old},
		file{name: "./etc/os-release", body: "ID=base\n", mtime: old}, file{name: "./bin/sh", body: "#!", mtime: old},
		file{name: "./bin/bzcat", body: "bz", mtime: old}, file{name: "./bin/bunzip2", link: "./bin/bzcat", mtime: old})
	app := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})
	base := imageOf(t, pulled)
	fresh := imageOf(t, pulled, app)

	for _, tc := range []struct {
		name    string
		anew    v1.Layer
		rebased bool
	}{
		{"the same files, written anew", rawLayer(t, file{name: "bin/sh", body: "#!", mtime: old}, file{name: "etc", dir: true, mtime: old},
			file{name: "etc/os-release", body: "ID=base\n", mtime: old},
			// the other name of the linked file first
			file{name: "bin/bunzip2", body: "bz", mtime: old}, file{name: "bin/bzcat", link: "bin/bunzip2", mtime: old}), true},
		{"the link is a copy", rawLayer(t, file{name: "bin/sh", body: "#!", mtime: old}, file{name: "etc", dir: true, mtime: old},
			file{name: "etc/os-release", body: "ID=base\n", mtime: old},
			file{name: "bin/bunzip2", body: "bz", mtime: old}, file{name: "bin/bzcat", body: "bz", mtime: old}), false},
		{"a file's content differs", rawLayer(t, file{name: "etc", dir: true, mtime: old}, file{name: "etc/os-release", body: "ID=other\n", mtime: old},
			file{name: "bin/sh", body: "#!", mtime: old}, file{name: "bin/bzcat", body: "bz", mtime: old}, file{name: "bin/bunzip2", link: "bin/bzcat", mtime: old}), false},
		{"a file's time differs", rawLayer(t, file{name: "etc", dir: true, mtime: old}, file{name: "etc/os-release", body: "ID=base\n", mtime: old.Add(time.Second)},
			file{name: "bin/sh", body: "#!", mtime: old}, file{name: "bin/bzcat", body: "bz", mtime: old}, file{name: "bin/bunzip2", link: "bin/bzcat", mtime: old}), false},
		{"a folder left out that no layer below has", rawLayer(t, file{name: "bin/sh", body: "#!", mtime: old},
			file{name: "etc/os-release", body: "ID=base\n", mtime: old},
			file{name: "bin/bzcat", body: "bz", mtime: old}, file{name: "bin/bunzip2", link: "bin/bzcat", mtime: old}), false},
		{"a file is missing", rawLayer(t, file{name: "etc", dir: true, mtime: old}, file{name: "etc/os-release", body: "ID=base\n", mtime: old}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bases, err := ReadBases(layoutTarball(t, base), filepath.Join(t.TempDir(), "base"))
			require.NoError(t, err)
			o := Options{Epoch: commit, Bases: bases}
			want, err := normalize(t, "backend", fresh, o)
			require.NoError(t, err)
			got, err := normalize(t, "backend", imageOf(t, tc.anew, app), o)
			require.NoError(t, err)
			gotCfg, err := got.(v1.Image).ConfigFile()
			require.NoError(t, err)
			baseCfg, err := base.ConfigFile()
			require.NoError(t, err)
			if tc.rebased {
				assert.Equal(t, digestOf(t, want), digestOf(t, got), "the digest a fresh engine's build gets")
				assert.Equal(t, baseCfg.RootFS.DiffIDs[0], gotCfg.RootFS.DiffIDs[0], "the base's own layer")
			} else {
				assert.NotEqual(t, digestOf(t, want), digestOf(t, got))
				assert.NotEqual(t, baseCfg.RootFS.DiffIDs[0], gotCfg.RootFS.DiffIDs[0], "the build's layer, not the base's")
			}
		})
	}
}

func TestLayerPathReadsANameAsAFileSystemDoes(t *testing.T) {
	for name, want := range map[string]string{"./": "", ".": "", "/": "", "./bin/": "bin", "bin": "bin", "./etc/os-release": "etc/os-release", "a//b/": "a/b"} {
		assert.Equal(t, want, layerPath(name), name)
	}
}

// A layer the engine makes anew leaves out a folder of its base's layer
// that the layers below have, whatever its time there; a file left out
// makes it another layer than the base's.
func TestAFolderTheEngineLeftOutIsTheLayersBelow(t *testing.T) {
	old := commit.Add(-30 * 24 * time.Hour)
	lowerLayer := rawLayer(t, file{name: "./", dir: true, mtime: old}, file{name: "./usr/", dir: true, mtime: old},
		file{name: "./usr/lib/", dir: true, mtime: old}, file{name: "./usr/bin/a", body: "a", mtime: old})
	app := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})
	for _, tc := range []struct {
		name     string
		libTime  time.Time
		baseFile string // a file of the layers below the base's layer also has
		rebased  bool
	}{
		{"as below", old, "", true},
		{"its time differs below", old.Add(time.Hour), "", true},
		{"a file below left out too", old, "usr/bin/a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := []file{{name: "./", dir: true, mtime: old}, {name: "./usr/", dir: true, mtime: old},
				{name: "./usr/lib/", dir: true, mtime: tc.libTime}, {name: "./usr/lib/x.so", body: "x", mtime: old}}
			if tc.baseFile != "" {
				files = append(files, file{name: "./" + tc.baseFile, body: "a", mtime: old})
			}
			upper := rawLayer(t, files...)
			anew := rawLayer(t, file{name: "usr/lib/x.so", body: "x", mtime: old})
			base := imageOf(t, lowerLayer, upper)
			bases, err := ReadBases(layoutTarball(t, base), filepath.Join(t.TempDir(), "base"))
			require.NoError(t, err)
			o := Options{Epoch: commit, Bases: bases}
			want, err := normalize(t, "backend", imageOf(t, lowerLayer, upper, app), o)
			require.NoError(t, err)
			got, err := normalize(t, "backend", imageOf(t, lowerLayer, anew, app), o)
			require.NoError(t, err)
			if tc.rebased {
				assert.Equal(t, digestOf(t, want), digestOf(t, got))
			} else {
				assert.NotEqual(t, digestOf(t, want), digestOf(t, got))
			}
		})
	}
}

// The exporter's entry for a base layer names the layer as pushed, whatever
// the engine called its snapshot; the build's own entries stay as written.
func TestTheExportersEntriesForTheBaseNameTheLayerAsPushed(t *testing.T) {
	pushed := []v1.Descriptor{{Digest: v1.Hash{Algorithm: "sha256", Hex: "0a"}}, {Digest: v1.Hash{Algorithm: "sha256", Hex: "0b"}}}
	for _, tc := range []struct {
		name, createdBy, comment string
		layer                    int
		want                     string
	}{
		{"a fresh engine's import", "import image layer sha256:ff", exporterComment, 0, "import image layer sha256:0a"},
		{"a restarted engine's snapshot", "rehydrated persisted snapshot", exporterComment, 0, "import image layer sha256:0a"},
		{"the base's own entry", "ADD rootfs.tar /", "", 0, "ADD rootfs.tar /"},
		{"the build's step", "rehydrated persisted snapshot", exporterComment, 1, "rehydrated persisted snapshot"},
		{"the build's import", "import image layer sha256:ff", exporterComment, 1, "import image layer sha256:0b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			history := []v1.History{{CreatedBy: "COPY . /", Comment: ""}, {CreatedBy: "COPY . /", Comment: ""}}
			history[tc.layer] = v1.History{CreatedBy: tc.createdBy, Comment: tc.comment}
			nameLayersAsPushed(history, pushed, 1)
			assert.Equal(t, tc.want, history[tc.layer].CreatedBy)
		})
	}
}
