package ocipublish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// file is one entry of a layer written as given: a directory, a hard link
// to link, or a file of body.
type file struct {
	name, body, link string
	dir              bool
	mtime            time.Time
	mode             int64 // none: 0644, a directory 0755
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
		if f.mode != 0 {
			h.Mode = f.mode
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
	return imageOn(t, amd64, layers...)
}

// imageOn is an image of layers, on platform p.
func imageOn(t *testing.T, p v1.Platform, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), layers...)
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = p.OS, p.Architecture
	img, err = mutate.ConfigFile(img, cfg)
	require.NoError(t, err)
	return img
}

// putBack is what a publish says when a base's first exported layer took
// the place of the engine's remade copy.
const putBack = "of its base's layers are the ones the engine first exported"

// firstExported keeps base in v as an engine that pulled it exports it (a
// publish of the base itself, on a fresh engine), and returns its ref,
// pinned by digest as the engine resolves a base (Container.imageRef).
func firstExported(t *testing.T, base v1.Image, v Cache) string {
	t.Helper()
	ref := "registry.example/library/base:stable@" + digestOf(t, base)
	publishedOn(t, base, base, ref, v)
	_, kept := v.keptBases(v.firstExportFile(ref))
	require.True(t, kept, "the base's first export kept")
	return ref
}

// publishedOn is built normalized as a publish does it on an engine that
// exports its base as export and resolved it to ref: the image, and what
// was said.
func publishedOn(t *testing.T, built, export v1.Image, ref string, v Cache) (v1.Image, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	var said strings.Builder
	require.NoError(t, Normalized(Prepare{Kind: "backend", Tarball: layoutTarball(t, built), Created: commit,
		BaseTarball: layoutTarball(t, export), BaseRef: ref, Cache: v.Dir}, t.TempDir(), out, &said))
	a, err := loadBack(t, out)
	require.NoError(t, err)
	img := a.(v1.Image)
	require.NoError(t, validate.Image(img), "every blob there, each as its digest and diff ID say")
	notes, err := os.ReadFile(filepath.Join(out, notesFile))
	if said.Len() > 0 || !errors.Is(err, os.ErrNotExist) {
		assert.Equal(t, said.String(), string(notes), "what was said, kept for the push")
	}
	return img, said.String()
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
			v := Cache{Dir: t.TempDir()}
			ref := firstExported(t, base, v)
			want, warned := publishedOn(t, fresh, base, ref, v)
			require.Empty(t, warned)
			got, said := publishedOn(t, imageOf(t, tc.anew, app), imageOf(t, tc.anew), ref, v)
			assert.Equal(t, tc.rebased, strings.Contains(said, "1 "+putBack), said)
			gotCfg, err := got.ConfigFile()
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
// that the layers below have, whatever its time there, a file the base's
// layer wrote again as the layers below have it, and the marker of an
// opaque folder over nothing below; it names a parent folder the base's tar
// leaves out. Anything else that differs makes it another layer than the
// base's.
func TestWhatTheEngineLeftOutIsTheLayersBelow(t *testing.T) {
	old := commit.Add(-30 * 24 * time.Hour)
	lowerLayer := rawLayer(t, file{name: "./", dir: true, mtime: old}, file{name: "./usr/", dir: true, mtime: old},
		file{name: "./usr/lib/", dir: true, mtime: old}, file{name: "./usr/bin/a", body: "a", mtime: old})
	app := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})
	for _, tc := range []struct {
		name       string
		libTime    time.Time
		libMode    int64
		upper      []file // more in the base's layer
		anew       []file // more in the engine's copy of it
		parentsOut bool   // the base's layer leaves out usr/ and its parent
		rebased    bool
	}{
		{"a folder as below", old, 0, nil, nil, false, true},
		{"a folder whose time differs below", old.Add(time.Hour), 0, nil, nil, false, true},
		{"a folder whose mode differs below", old, 0o700, nil, nil, false, false},
		{"a file written again as it was", old, 0, []file{{name: "./usr/bin/a", body: "a", mtime: old}}, nil, false, true},
		{"a file written again with another content", old, 0, []file{{name: "./usr/bin/a", body: "b", mtime: old}}, nil, false, false},
		{"a file written again with another time", old, 0, []file{{name: "./usr/bin/a", body: "a", mtime: old.Add(time.Second)}}, nil, false, false},
		{"a parent folder the engine names, as below but for its time", old, 0, nil,
			[]file{{name: "usr/", dir: true, mtime: commit}}, true, true},
		{"a parent folder the engine names, not as below", old, 0, nil,
			[]file{{name: "usr/", dir: true, mtime: old, mode: 0o700}}, true, false},
		{"a new folder marked opaque", old, 0,
			[]file{{name: "./usr/lib/new/", dir: true, mtime: old}, {name: "./usr/lib/new/.wh..wh..opq", mtime: old}, {name: "./usr/lib/new/n", body: "n", mtime: old}},
			[]file{{name: "usr/lib/new/", dir: true, mtime: old}, {name: "usr/lib/new/n", body: "n", mtime: old}}, false, true},
		{"a folder marked opaque over what the layers below hold", old, 0,
			[]file{{name: "./usr/bin/.wh..wh..opq", mtime: old}}, nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := []file{{name: "./usr/lib/", dir: true, mtime: tc.libTime, mode: tc.libMode}, {name: "./usr/lib/x.so", body: "x", mtime: old}}
			if !tc.parentsOut {
				files = append([]file{{name: "./", dir: true, mtime: old}, {name: "./usr/", dir: true, mtime: old}}, files...)
			}
			upper := rawLayer(t, append(files, tc.upper...)...)
			anew := rawLayer(t, append([]file{{name: "usr/lib/x.so", body: "x", mtime: old}}, tc.anew...)...)
			v := Cache{Dir: t.TempDir()}
			base := imageOf(t, lowerLayer, upper)
			ref := firstExported(t, base, v)
			want, _ := publishedOn(t, imageOf(t, lowerLayer, upper, app), base, ref, v)
			got, _ := publishedOn(t, imageOf(t, lowerLayer, anew, app), imageOf(t, lowerLayer, anew), ref, v)
			if tc.rebased {
				assert.Equal(t, digestOf(t, want), digestOf(t, got))
			} else {
				assert.NotEqual(t, digestOf(t, want), digestOf(t, got))
			}
		})
	}
}

// A layer whose files differ from the base's layer once the layers below
// are applied (their whiteouts and opaque folders) is the build's: its
// entries as the layers below hold them are no proof then.
func TestALayerThatDiffersOverTheLayersBelowIsTheBuilds(t *testing.T) {
	old := commit.Add(-30 * 24 * time.Hour)
	f := func(name, body string) file { return file{name: name, body: body, mtime: old} }
	dir := func(name string) file { return file{name: name, dir: true, mtime: old} }
	app := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})
	for _, tc := range []struct {
		name        string
		below       [][]file
		upper, anew []file
	}{
		{"a file a layer below deleted, brought back",
			[][]file{{dir("./"), dir("./etc/"), dir("./usr/"), f("./etc/secret", "s")}, {f("./etc/.wh.secret", "")}},
			[]file{dir("./usr/"), f("./usr/x", "x")}, []file{f("usr/x", "x"), f("etc/secret", "s")}},
		{"a whiteout written again over a file brought back",
			[][]file{{dir("./"), dir("./usr/"), f("./f", "f")}, {f("./.wh.f", "")}, {f("./f", "f2")}},
			[]file{dir("./usr/"), f("./usr/x", "x")}, []file{f("usr/x", "x"), f(".wh.f", "")}},
		{"a file the base's layer brings back, left out",
			[][]file{{dir("./"), dir("./etc/"), dir("./usr/"), f("./etc/f", "f")}, {f("./etc/.wh.f", "")}},
			[]file{f("./usr/x", "x"), f("./etc/f", "f")}, []file{f("usr/x", "x")}},
		{"a file as below, under the base's layer's opaque folder",
			[][]file{{dir("./"), dir("./etc/"), dir("./etc/conf.d/"), f("./etc/conf.d/old.conf", "o")}},
			[]file{dir("./etc/conf.d/"), f("./etc/conf.d/.wh..wh..opq", ""), f("./etc/conf.d/new.conf", "n")},
			[]file{dir("etc/conf.d/"), f("etc/conf.d/.wh..wh..opq", ""), f("etc/conf.d/new.conf", "n"), f("etc/conf.d/old.conf", "o")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var below []v1.Layer
			for _, files := range tc.below {
				below = append(below, rawLayer(t, files...))
			}
			stack := func(top ...v1.Layer) []v1.Layer { return append(append([]v1.Layer{}, below...), top...) }
			upper, anew := rawLayer(t, tc.upper...), rawLayer(t, tc.anew...)
			v := Cache{Dir: t.TempDir()}
			base := imageOf(t, stack(upper)...)
			ref := firstExported(t, base, v)
			want, _ := publishedOn(t, imageOf(t, stack(upper, app)...), base, ref, v)
			got, said := publishedOn(t, imageOf(t, stack(anew, app)...), imageOf(t, stack(anew)...), ref, v)
			assert.NotContains(t, said, putBack)
			assert.NotEqual(t, digestOf(t, want), digestOf(t, got))
		})
	}
}

// The exporter's entry for a base layer names the layer as pushed, whatever
// the engine called its snapshot; its entry for a layer of the build says
// nothing of the engine's snapshot, which a restarted engine describes
// otherwise; entries the exporter did not write stay as written.
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
		{"the build's step on a restarted engine", "rehydrated persisted snapshot", exporterComment, 1, ""},
		{"the build's step on a fresh engine", "Directory.withDirectoryDockerfileCompat", exporterComment, 1, ""},
		{"the build's own entry", "COPY dist/web /usr/share/nginx/html # buildkit", "buildkit.dockerfile.v0", 1, "COPY dist/web /usr/share/nginx/html # buildkit"},
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

// remade is a base's layer as an engine restarted on its state exports it
// (engine-facts 48): the pulled layer's files, names without "./".
func remadeBase(t *testing.T) (pulled, anew v1.Layer) {
	old := commit.Add(-30 * 24 * time.Hour)
	pulled = rawLayer(t, file{name: "./", dir: true, mtime: old}, file{name: "./etc/", dir: true, mtime: old},
		file{name: "./etc/os-release", body: "ID=base\n", mtime: old})
	anew = rawLayer(t, file{name: "etc", dir: true, mtime: old}, file{name: "etc/os-release", body: "ID=base\n", mtime: old})
	return pulled, anew
}

// Every image built on the base after a restart gets its fresh digest, not
// only the first: the first export is kept, where the engine's own export
// of the base is remade too once it has exported one such image.
func TestEveryImageOnARemadeBaseGetsItsFreshDigest(t *testing.T) {
	pulled, anew := remadeBase(t)
	v := Cache{Dir: t.TempDir()}
	ref := firstExported(t, imageOf(t, pulled), v)
	for _, app := range []map[string]string{{"usr/share/nginx/html/index.html": "<p>"}, {"app/server.mjs": "listen()"}} {
		own := layer(t, commit.Add(time.Hour), app)
		fresh, _ := publishedOn(t, imageOf(t, pulled, own), imageOf(t, pulled), ref, v)
		restarted, said := publishedOn(t, imageOf(t, anew, own), imageOf(t, anew), ref, v)
		assert.Equal(t, "oci-publish: the backend image: 1 "+putBack+" (kept in the publish's cache volume), in place of its copies made anew from the same files (tests/engine-facts.md, fact 48)\n", said)
		assert.Equal(t, digestOf(t, fresh), digestOf(t, restarted))
	}
}

// A first export whose canonical blobs are gone from the cache (a module
// built by another Go release, a cache that could not write them) puts
// nothing back: the image keeps the engine's layers, whole, as with nothing
// kept, and the next first export takes its place. A base ref without a
// digest keeps nothing.
func TestAFirstExportWithoutItsBlobsLeavesTheEnginesLayers(t *testing.T) {
	pulled, anew := remadeBase(t)
	own := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})
	built := imageOf(t, anew, own)
	unkept, _ := publishedOn(t, built, imageOf(t, anew), "", Cache{Dir: t.TempDir()})

	v := Cache{Dir: t.TempDir()}
	ref := firstExported(t, imageOf(t, pulled), v)
	fresh, _ := publishedOn(t, imageOf(t, pulled, own), imageOf(t, pulled), ref, v)
	require.NoError(t, os.RemoveAll(filepath.Join(v.Dir, encoder)))
	got, said := publishedOn(t, built, imageOf(t, anew), ref, v)
	assert.Empty(t, said)
	assert.Equal(t, digestOf(t, unkept), digestOf(t, got))

	// the next first export takes its place: after it, a restarted engine's
	// image gets its fresh digest again
	publishedOn(t, imageOf(t, pulled, own), imageOf(t, pulled), ref, v)
	again, said := publishedOn(t, built, imageOf(t, anew), ref, v)
	assert.Contains(t, said, "1 "+putBack)
	assert.Equal(t, digestOf(t, fresh), digestOf(t, again))

	none := Cache{Dir: t.TempDir()}
	publishedOn(t, imageOf(t, pulled), imageOf(t, pulled), "registry.example/library/base:stable", none)
	_, err := os.Stat(filepath.Join(none.Dir, "bases"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing kept without a digest")
}

// The base's layer put back in place after a restart gives the image the
// digest a fresh engine gives it, whatever blob the engine first exported
// it as: another compression of the tar than the canonical one (fact 41),
// or a Docker layer under the OCI image the engine exports now (the same
// bytes, named as the image's manifest names its layers).
func TestABaseLayerPutBackGivesTheFreshDigestWhateverItsFirstBlob(t *testing.T) {
	raw := baseTar(t)
	own := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})
	anew := remadeFrom(t, raw)
	best := gzipLayer(t, raw, gzip.BestCompression)
	compressed, err := best.Compressed()
	require.NoError(t, err)
	bestBytes, err := io.ReadAll(compressed)
	require.NoError(t, err)
	docker, err := tarball.LayerFromOpener(opener(bestBytes), tarball.WithMediaType(types.DockerLayer))
	require.NoError(t, err)
	dockerBase, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.DockerManifestSchema2), types.DockerConfigJSON), docker)
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		base v1.Image
	}{
		{"a blob compressed otherwise", imageOf(t, best)},
		{"a Docker image", dockerBase},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Cache{Dir: t.TempDir()}
			ref := firstExported(t, tc.base, v)
			fresh, _ := publishedOn(t, imageOf(t, gzipLayer(t, raw, gzip.BestSpeed), own), imageOf(t, best), ref, v)
			restarted, said := publishedOn(t, imageOf(t, anew, own), imageOf(t, anew), ref, v)
			assert.Contains(t, said, "1 "+putBack)
			assert.Equal(t, digestOf(t, fresh), digestOf(t, restarted), "the fresh engine's digest")
		})
	}
}

// remadeFrom is the layer of tar raw as a restarted engine makes it anew:
// the same files, written in another order.
func remadeFrom(t *testing.T, raw []byte) v1.Layer {
	t.Helper()
	type entry struct {
		h    *tar.Header
		body []byte
	}
	var entries []entry
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		entries = append(entries, entry{h, body})
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := len(entries) - 1; i >= 0; i-- {
		require.NoError(t, tw.WriteHeader(entries[i].h))
		_, err := tw.Write(entries[i].body)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NotEqual(t, raw, buf.Bytes())
	return canonicalLayer(t, buf.Bytes())
}
