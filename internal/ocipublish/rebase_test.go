package ocipublish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/testsupport/registrytest"
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

// registryServer is go-containerregistry's registry on 127.0.0.1, which a
// test may close.
type registryServer struct {
	srv  *httptest.Server
	addr string
}

func loopbackRegistryServer(t *testing.T) registryServer {
	t.Helper()
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	return registryServer{srv: srv, addr: strings.TrimPrefix(srv.URL, "http://")}
}

// inRegistry writes base to a loopback registry and returns its reference
// pinned by digest, as the engine resolves a base (Container.imageRef).
func inRegistry(t *testing.T, base v1.Image) string {
	t.Helper()
	host := loopbackRegistry(t)
	registrytest.Write(t, host+"/library/base:stable", base)
	d, err := base.Digest()
	require.NoError(t, err)
	return host + "/library/base:stable@" + d.String()
}

// normalizedOn is built normalized as oci-publish normalize does it, its
// base read from the registry at ref: the image, and what was said.
func normalizedOn(t *testing.T, built v1.Image, ref string, v Cache) (v1.Image, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	var warn strings.Builder
	require.NoError(t, Normalized(context.Background(), Prepare{Kind: "backend", Tarball: layoutTarball(t, built), Created: commit, BaseRef: ref, Cache: v.Dir}, t.TempDir(), out, &warn))
	a, err := loadBack(t, out)
	require.NoError(t, err)
	img := a.(v1.Image)
	require.NoError(t, validate.Image(img), "every blob there, each as its digest and diff ID say")
	return img, warn.String()
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
			ref := inRegistry(t, base)
			want, warned := normalizedOn(t, fresh, ref, Cache{})
			require.Empty(t, warned)
			got, said := normalizedOn(t, imageOf(t, tc.anew, app), ref, Cache{})
			assert.Equal(t, tc.rebased, strings.Contains(said, "1 of its base's layers are the registry's"), said)
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
			ref := inRegistry(t, imageOf(t, lowerLayer, upper))
			want, _ := normalizedOn(t, imageOf(t, lowerLayer, upper, app), ref, Cache{})
			got, _ := normalizedOn(t, imageOf(t, lowerLayer, anew, app), ref, Cache{})
			if tc.rebased {
				assert.Equal(t, digestOf(t, want), digestOf(t, got))
			} else {
				assert.NotEqual(t, digestOf(t, want), digestOf(t, got))
			}
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
// only the first: the registry's layers never change, where the engine's
// own export of the base is remade too once it has exported one such image.
func TestEveryImageOnARemadeBaseGetsItsFreshDigest(t *testing.T) {
	pulled, anew := remadeBase(t)
	ref := inRegistry(t, imageOf(t, pulled))
	v := Cache{Dir: t.TempDir()}
	for _, app := range []map[string]string{{"usr/share/nginx/html/index.html": "<p>"}, {"app/server.mjs": "listen()"}} {
		own := layer(t, commit.Add(time.Hour), app)
		fresh, _ := normalizedOn(t, imageOf(t, pulled, own), ref, v)
		restarted, said := normalizedOn(t, imageOf(t, anew, own), ref, v)
		assert.Equal(t, "oci-publish: the backend image: 1 of its base's layers are the registry's, in place of the engine's copies made anew from the same files (tests/engine-facts.md, fact 48)\n", said)
		assert.Equal(t, digestOf(t, fresh), digestOf(t, restarted))
	}
}

// A base read from its registry is kept by its digest: the next publish on
// that engine reads nothing there, its layers' canonical blobs included.
func TestABaseIsReadFromItsRegistryOncePerEngine(t *testing.T) {
	pulled, anew := remadeBase(t)
	base := imageOf(t, pulled)
	host := loopbackRegistryServer(t)
	registrytest.Write(t, host.addr+"/library/base:stable", base)
	d, err := base.Digest()
	require.NoError(t, err)
	ref := host.addr + "/library/base:stable@" + d.String()
	own := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})
	v := Cache{Dir: t.TempDir()}
	want, _ := normalizedOn(t, imageOf(t, pulled, own), ref, Cache{})
	first, said := normalizedOn(t, imageOf(t, anew, own), ref, v)
	require.Contains(t, said, "are the registry's")
	host.srv.Close()
	again, said := normalizedOn(t, imageOf(t, anew, own), ref, v)
	assert.NotContains(t, said, "from its registry", "nothing asked of the registry, now gone")
	assert.Contains(t, said, "are the registry's")
	assert.Equal(t, digestOf(t, want), digestOf(t, first))
	assert.Equal(t, digestOf(t, want), digestOf(t, again))
}

// A base whose registry cannot be read is read from its tarball, and the
// publish says what it may then not hold: the base's ref, what failed,
// the fact that explains it. Nothing of the base's is half taken: an image
// whose base layers could not all be fetched keeps the engine's.
func TestABaseItsRegistryCannotGiveIsSaidAndTheEnginesIsKept(t *testing.T) {
	pulled, anew := remadeBase(t)
	base := imageOf(t, pulled)
	own := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})
	built := imageOf(t, anew, own)
	fromTarball := func(t *testing.T) string {
		out := filepath.Join(t.TempDir(), "out")
		require.NoError(t, Normalized(context.Background(), Prepare{Kind: "backend", Tarball: layoutTarball(t, built), Created: commit, BaseTarball: layoutTarball(t, imageOf(t, anew))}, t.TempDir(), out, io.Discard))
		a, err := loadBack(t, out)
		require.NoError(t, err)
		return digestOf(t, a)
	}(t)
	d, err := base.Digest()
	require.NoError(t, err)

	t.Run("no registry there", func(t *testing.T) {
		gone := loopbackRegistryServer(t)
		gone.srv.Close()
		out := filepath.Join(t.TempDir(), "out")
		var warn strings.Builder
		require.NoError(t, Normalized(context.Background(), Prepare{Kind: "backend", Tarball: layoutTarball(t, built), Created: commit,
			BaseTarball: layoutTarball(t, imageOf(t, anew)), BaseRef: gone.addr + "/library/base:stable@" + d.String()}, t.TempDir(), out, &warn))
		a, err := loadBack(t, out)
		require.NoError(t, err)
		assert.Equal(t, fromTarball, digestOf(t, a))
		assert.Contains(t, warn.String(), "the backend image's base: read "+gone.addr+"/library/base from its registry")
		assert.Contains(t, warn.String(), "fact 48")
	})
	t.Run("a registry that does not answer", func(t *testing.T) {
		defer func(was time.Duration) { baseReadLimit = was }(baseReadLimit)
		baseReadLimit = 200 * time.Millisecond
		hang := make(httpHang)
		srv := httptest.NewServer(hang)
		t.Cleanup(func() { close(hang); srv.Close() })
		ref := strings.TrimPrefix(srv.URL, "http://") + "/library/base@" + d.String()
		v := Cache{Dir: t.TempDir()}
		var warn strings.Builder
		require.NoError(t, Normalized(context.Background(), Prepare{Kind: "backend", Tarball: layoutTarball(t, built), Created: commit,
			BaseRef: ref, Cache: v.Dir}, t.TempDir(), filepath.Join(t.TempDir(), "out"), &warn))
		assert.Contains(t, warn.String(), "its registry did not answer within 200ms")

		// the next publish on the engine takes that answer: no wait
		baseReadLimit = time.Hour
		start := time.Now()
		_, err := RegistryBases(context.Background(), ref, v)
		assert.Less(t, time.Since(start), time.Second)
		assert.ErrorContains(t, err, "its registry did not answer within 200ms (0s ago, tried again after 1h0m0s)")
	})
	t.Run("its layers gone", func(t *testing.T) {
		reg := loopbackRegistryServer(t)
		registrytest.Write(t, reg.addr+"/library/base:stable", base)
		ref := reg.addr + "/library/base:stable@" + d.String()
		v := Cache{Dir: t.TempDir()}
		_, err := RegistryBases(context.Background(), ref, v) // kept: the metadata alone
		require.NoError(t, err)
		reg.srv.Close()
		out := filepath.Join(t.TempDir(), "out")
		var warn strings.Builder
		require.NoError(t, Normalized(context.Background(), Prepare{Kind: "backend", Tarball: layoutTarball(t, built), Created: commit, BaseRef: ref, Cache: v.Dir}, t.TempDir(), out, &warn))
		a, err := loadBack(t, out)
		require.NoError(t, err)
		cfg, err := a.(v1.Image).ConfigFile()
		require.NoError(t, err)
		anewID, err := anew.DiffID()
		require.NoError(t, err)
		assert.Equal(t, anewID, cfg.RootFS.DiffIDs[0], "the engine's layer, whole")
		assert.Contains(t, warn.String(), "the backend image: the base's layer 0")
		assert.Contains(t, warn.String(), "its base layers are pushed as the engine made them")
	})
}

// Each platform of a base read from an index gets its own layers; an
// attestation is none.
func TestABaseIndexGivesEachPlatformItsLayers(t *testing.T) {
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	arm := baseImage(t, arm64)
	index := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: baseImage(t, amd64), Descriptor: v1.Descriptor{Platform: &amd64}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &arm64}})
	host := loopbackRegistry(t)
	registrytest.WriteIndex(t, host+"/library/base:stable", index)
	d, err := index.Digest()
	require.NoError(t, err)
	bases, err := RegistryBases(context.Background(), host+"/library/base:stable@"+d.String(), Cache{})
	require.NoError(t, err)
	require.Len(t, bases, 2)
	cfg, err := arm.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, cfg.RootFS.DiffIDs, baseFor(bases, &arm64).DiffIDs)
	assert.Equal(t, "arm64", baseFor(bases, &arm64).Platform.Architecture)
}

func TestRegistryBasesNeedsADigest(t *testing.T) {
	_, err := RegistryBases(context.Background(), "nginx:stable", Cache{})
	assert.ErrorContains(t, err, `base image "nginx:stable"`)
}

// A registry that could not be read is asked again once baseRetryAfter
// has passed; what it said is kept.
func TestAFailedRegistryReadIsRetriedAfterItsTime(t *testing.T) {
	pulled, h, repo := servedBase(t)
	v := Cache{Dir: t.TempDir()}
	v.keepRegistryFailure(h, repo, errors.New("dial tcp: connection refused"))
	_, err := RegistryBases(context.Background(), repo+"@"+h.String(), v)
	require.ErrorContains(t, err, "connection refused")

	old := time.Now().Add(-baseRetryAfter - time.Minute)
	require.NoError(t, os.Chtimes(v.registryFailureFile(h, repo), old, old))
	bases, err := RegistryBases(context.Background(), repo+"@"+h.String(), v)
	require.NoError(t, err)
	require.Len(t, bases, 1)
	id, err := pulled.DiffID()
	require.NoError(t, err)
	assert.Equal(t, []v1.Hash{id}, bases[0].DiffIDs)
}

// That one registry could not be read says nothing of another holding the
// same image: a Dockerfile moved from Docker Hub to a mirror of it reads
// the mirror at once, not an hour later.
func TestAFailedReadStaysWithItsRegistry(t *testing.T) {
	_, h, repo := servedBase(t)
	v := Cache{Dir: t.TempDir()}
	v.keepRegistryFailure(h, "index.docker.io/library/base", errors.New("dial tcp: i/o timeout"))
	_, err := RegistryBases(context.Background(), "index.docker.io/library/base@"+h.String(), v)
	require.ErrorContains(t, err, "i/o timeout", "the failed registry is not asked again")
	bases, err := RegistryBases(context.Background(), repo+"@"+h.String(), v)
	require.NoError(t, err)
	require.Len(t, bases, 1)
}

// A base whose answer is kept asks its registry nothing, not even whether
// it speaks https: one that takes connections and never answers (a firewall
// that drops them, say) would hold the publish until the handshake's own
// time limit, outside the read's.
func TestAKeptBaseAsksItsRegistryNothing(t *testing.T) {
	_, h, repo := servedBase(t)
	v := Cache{Dir: t.TempDir()}
	_, err := RegistryBases(context.Background(), repo+"@"+h.String(), v)
	require.NoError(t, err)

	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	require.NoError(t, err)
	t.Cleanup(func() { silent.Close() })
	start := time.Now()
	bases, err := RegistryBases(context.Background(), silent.Addr().String()+"/library/base@"+h.String(), v)
	require.NoError(t, err)
	require.Len(t, bases, 1)
	assert.Less(t, time.Since(start), time.Second)
}

// servedBase is a base image of one layer (pulled) that a registry on
// loopback holds: the layer, the image's digest and its repository there.
func servedBase(t *testing.T) (pulled v1.Layer, h v1.Hash, repo string) {
	t.Helper()
	pulled, _ = remadeBase(t)
	base := imageOf(t, pulled)
	h, err := base.Digest()
	require.NoError(t, err)
	reg := loopbackRegistryServer(t)
	repo = reg.addr + "/library/base"
	registrytest.Write(t, repo+":stable", base)
	return pulled, h, repo
}

// A base the registry holds for one platform only is no other platform's:
// an image of that other platform fetches none of its layers (a publish of
// two platforms would download the first's base for nothing).
func TestABaseOfAnotherPlatformIsNotFetched(t *testing.T) {
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}
	pulled, _ := remadeBase(t)
	base := imageOf(t, pulled) // amd64
	d, err := base.Digest()
	require.NoError(t, err)
	reg := loopbackRegistryServer(t)
	registrytest.Write(t, reg.addr+"/library/base:stable", base)
	ref := reg.addr + "/library/base:stable@" + d.String()
	v := Cache{Dir: t.TempDir()}
	_, err = RegistryBases(context.Background(), ref, v) // the metadata kept
	require.NoError(t, err)
	reg.srv.Close() // a fetch would fail, and say so

	armBuilt := imageOn(t, arm64, layer(t, commit.Add(-time.Hour), map[string]string{"etc/os-release": "ID=arm\n"}))
	out := filepath.Join(t.TempDir(), "out")
	var said strings.Builder
	require.NoError(t, Normalized(context.Background(), Prepare{Kind: "backend", Tarball: layoutTarball(t, armBuilt), Created: commit, BaseRef: ref, Cache: v.Dir}, t.TempDir(), out, &said))
	assert.Empty(t, said.String())
}

// The base's layer put back in place after a restart gives the image the
// digest a fresh engine gives it, whatever its registry's blob is: another
// compression of the tar than the canonical one, or a Docker layer under
// the OCI image the engine exports (the same bytes, named as the image's
// manifest names its layers). Its blob is fetched once per engine, even
// when it takes no remade layer's place.
func TestABaseLayerPutBackGivesTheFreshDigestWhateverItsRegistrysBlob(t *testing.T) {
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
		{"the registry's blob compressed otherwise", imageOf(t, best)},
		{"a Docker image at its registry", dockerBase},
	} {
		for _, cached := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, cache %v", tc.name, cached), func(t *testing.T) {
				reg := newCountingRegistry(t)
				registrytest.Write(t, reg.addr+"/library/base:stable", tc.base)
				d, err := tc.base.Digest()
				require.NoError(t, err)
				ref := reg.addr + "/library/base:stable@" + d.String()
				blob, err := best.Digest()
				require.NoError(t, err)
				reg.counted.Store(blob.String())
				v := Cache{}
				if cached {
					v.Dir = t.TempDir()
				}
				if cached {
					// a layer that is not the base's: fetched to compare, not put back
					changed := rawLayer(t, file{name: "bin/sh", body: "changed", mtime: commit})
					normalizedOn(t, imageOf(t, changed, own), ref, v)
					normalizedOn(t, imageOf(t, changed, own), ref, v)
					assert.Equal(t, int64(1), reg.blobs.Load(), "the base's layer fetched once per engine")
				}
				fresh, _ := normalizedOn(t, imageOf(t, best, own), ref, v)
				restarted, said := normalizedOn(t, imageOf(t, anew, own), ref, v)
				assert.Contains(t, said, "1 of its base's layers are the registry's")
				assert.Equal(t, digestOf(t, fresh), digestOf(t, restarted), "the fresh engine's digest")
				if cached {
					assert.Equal(t, int64(1), reg.blobs.Load(), "the base's layer fetched once per engine")
				}
			})
		}
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

// A base read from its registry while the engine held another blob of its
// layer (fact 41) is repaired after a restart with its registry gone: the
// layer's canonical blob was kept by the registry's digest too.
func TestARepairFindsTheBaseReadOnceThoughItsRegistryIsGone(t *testing.T) {
	raw := baseTar(t)
	own := layer(t, commit.Add(time.Hour), map[string]string{"app/server.mjs": "listen()"})
	reg := loopbackRegistryServer(t)
	base := imageOf(t, gzipLayer(t, raw, gzip.BestCompression))
	registrytest.Write(t, reg.addr+"/library/base:stable", base)
	d, err := base.Digest()
	require.NoError(t, err)
	ref := reg.addr + "/library/base:stable@" + d.String()
	v := Cache{Dir: t.TempDir()}
	fresh, said := normalizedOn(t, imageOf(t, gzipLayer(t, raw, gzip.BestSpeed), own), ref, v)
	require.Empty(t, said)
	reg.srv.Close()
	restarted, said := normalizedOn(t, imageOf(t, remadeFrom(t, raw), own), ref, v)
	assert.Contains(t, said, "1 of its base's layers are the registry's")
	assert.Equal(t, digestOf(t, fresh), digestOf(t, restarted), "the fresh engine's digest")
}
