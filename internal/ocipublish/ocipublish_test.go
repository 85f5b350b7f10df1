package ocipublish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	commit    = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	baseBuilt = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC) // before the commit
)

// layer is a gzip layer of the files, every header at mtime, in a fixed
// order (the page's files first, as the tests read them back).
func opener(b []byte) tarball.Opener {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
}

func layer(t testing.TB, mtime time.Time, files map[string]string) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := []string{"index.html", "app.js"}
	for _, n := range slices.Sorted(maps.Keys(files)) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range names {
		body, ok := files[n]
		if !ok {
			continue
		}
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(body)), ModTime: mtime,
			AccessTime: mtime, ChangeTime: mtime, Format: tar.FormatPAX, Uname: "nginx", Gname: "root", Uid: 101}))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	// a blob in the canonical encoding, as one the module pushed: a layer
	// the normalize keeps is then the same bytes
	l, err := tarball.LayerFromOpener(opener(canonicalGzip(t, buf.Bytes())), tarball.WithMediaType(types.OCILayer))
	require.NoError(t, err)
	return l
}

// canonicalGzip is raw in the canonical encoding.
func canonicalGzip(t testing.TB, raw []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, err := newCanonicalWriter(&out)
	require.NoError(t, err)
	_, err = zw.Write(raw)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return out.Bytes()
}

// build is a frontend image as a build at buildClock makes it: a base
// layer (fixed), the site's layer with files at the build clock, a config
// and history stamped with the build clock.
func build(t *testing.T, buildClock time.Time, platform v1.Platform) v1.Image {
	t.Helper()
	base := layer(t, baseBuilt, map[string]string{"etc/os-release": "ID=base\n"})
	site := layer(t, buildClock.Add(123*time.Millisecond), map[string]string{"index.html": "<title>Example app</title>", "app.js": "go()"})
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, base, site)
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = platform.OS, platform.Architecture, platform.Variant
	cfg.Created = v1.Time{Time: buildClock}
	cfg.Config.Labels = map[string]string{"draw_version": "2.14.0"}
	cfg.History = []v1.History{{Created: v1.Time{Time: baseBuilt}, CreatedBy: "base"}, {Created: v1.Time{Time: buildClock}, CreatedBy: "COPY dist/web"}}
	img, err = mutate.ConfigFile(img, cfg)
	require.NoError(t, err)
	return img
}

var amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}

func digestOf(t testing.TB, a digester) string {
	t.Helper()
	d, err := a.Digest()
	require.NoError(t, err)
	return d.String()
}

func TestTheSameSourcesBuiltAtOtherTimesGiveTheSameDigest(t *testing.T) {
	monday, tuesday := build(t, commit.Add(24*time.Hour), amd64), build(t, commit.Add(48*time.Hour), amd64)
	require.NotEqual(t, digestOf(t, monday), digestOf(t, tuesday), "as built, the clock is in the digest")

	a, err := normalize(t, monday, Prepare{Kind: "frontend", Created: commit})
	require.NoError(t, err)
	b, err := normalize(t, tuesday, Prepare{Kind: "frontend", Created: commit})
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, a), digestOf(t, b), "normalized, only the inputs are")

	other, err := normalize(t, monday, Prepare{Kind: "frontend", Created: commit.Add(time.Second)})
	require.NoError(t, err)
	assert.NotEqual(t, digestOf(t, a), digestOf(t, other), "--created is an input")
}

func TestNormalizingClampsTimesAndKeepsWhatIsOlder(t *testing.T) {
	img := build(t, commit.Add(time.Hour), amd64)
	n, err := normalize(t, img, Prepare{Kind: "frontend", Created: commit})
	require.NoError(t, err)
	out := n.(v1.Image)

	cfg, err := out.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, commit, cfg.Created.UTC(), "created is the commit time")
	assert.Equal(t, baseBuilt, cfg.History[0].Created.UTC(), "the base image's history keeps its time")
	assert.Equal(t, commit, cfg.History[1].Created.UTC(), "the build's history is clamped")
	assert.Equal(t, "2.14.0", cfg.Config.Labels["draw_version"], "labels and settings stay")

	before, err := img.Layers()
	require.NoError(t, err)
	after, err := out.Layers()
	require.NoError(t, err)
	bd, _ := before[0].Digest()
	ad, _ := after[0].Digest()
	assert.Equal(t, bd, ad, "a layer with nothing newer than the commit is kept byte for byte")

	rc, err := after[1].Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
		assert.Equal(t, commit, h.ModTime.UTC(), "%s: file time clamped", h.Name)
		assert.True(t, h.AccessTime.IsZero() && h.ChangeTime.IsZero(), "%s: no access or change time", h.Name)
		assert.Equal(t, 101, h.Uid, "%s: owner kept", h.Name)
	}
	assert.Equal(t, []string{"index.html", "app.js"}, names)
	mt, err := after[1].MediaType()
	require.NoError(t, err)
	assert.Equal(t, types.OCILayer, mt, "media types kept")
	m, err := out.Manifest()
	require.NoError(t, err)
	assert.Equal(t, types.OCIManifestSchema1, m.MediaType)
}

func TestPlatformsAreCheckedBeforeAnythingIsPushed(t *testing.T) {
	arm := v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: build(t, commit.Add(time.Hour), amd64), Descriptor: v1.Descriptor{Platform: &amd64}},
		mutate.IndexAddendum{Add: build(t, commit.Add(time.Hour), amd64), Descriptor: v1.Descriptor{Platform: &arm}})

	_, err := normalize(t, idx, Prepare{Kind: "frontend", Created: commit, Platforms: []string{"linux/amd64", "linux/arm64"}})
	require.Error(t, err, "a base image without arm64 gives amd64 twice")
	assert.ErrorContains(t, err, "linux/arm64 is missing")
	assert.ErrorContains(t, err, "nothing was pushed")

	good := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: build(t, commit.Add(time.Hour), amd64), Descriptor: v1.Descriptor{Platform: &amd64}},
		mutate.IndexAddendum{Add: build(t, commit.Add(time.Hour), arm), Descriptor: v1.Descriptor{Platform: &arm}})
	n, err := normalize(t, good, Prepare{Kind: "frontend", Created: commit, Platforms: []string{"linux/amd64", "linux/arm64"}})
	require.NoError(t, err)
	im, err := n.(v1.ImageIndex).IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 2)
	assert.Equal(t, "arm64", im.Manifests[1].Platform.Architecture, "each manifest keeps its platform")

	_, err = normalize(t, build(t, commit, amd64), Prepare{Kind: "frontend", Created: commit, Platforms: []string{"linux/arm64"}})
	assert.ErrorContains(t, err, "linux/arm64 is missing")
}

func TestLoadReadsTheLayoutDaggerExports(t *testing.T) {
	dir := t.TempDir()
	img := build(t, commit.Add(time.Hour), amd64)
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	require.NoError(t, p.AppendImage(img))
	got, err := loadBack(t, dir)
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, img), digestOf(t, got))

	_, err = Load(t.TempDir())
	assert.ErrorContains(t, err, "read the OCI layout")
}

// loopbackRegistry is go-containerregistry's registry on 127.0.0.1.
func loopbackRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Host
}

func TestClampKeepsEarlierTimes(t *testing.T) {
	assert.Equal(t, commit, Clamp(commit.Add(time.Hour), commit))
	assert.Equal(t, baseBuilt, Clamp(baseBuilt, commit))
}

// httpHang is a handler that answers nothing until done closes.
type httpHang chan struct{}

func (h httpHang) ServeHTTP(_ http.ResponseWriter, r *http.Request) {
	select {
	case <-h:
	case <-r.Context().Done():
	}
}

func TestEpochIsCreatedOrTheUnixEpochNeverTheClock(t *testing.T) {
	assert.Equal(t, commit, Epoch(commit))
	assert.Equal(t, time.Unix(0, 0).UTC(), Epoch(time.Time{}))
}

// BenchmarkNormalize: a 32 MiB base layer older than --created (read, kept)
// and a 2 MiB layer of the build (rewritten), as a frontend image is.
func BenchmarkNormalize(b *testing.B) {
	big := func(n int, mtime time.Time) v1.Layer {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB, compressible like code
		for i := 0; i < n/len(chunk); i++ {
			require.NoError(b, tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("f%05d", i), Mode: 0o644, Size: int64(len(chunk)), ModTime: mtime}))
			_, err := tw.Write(chunk)
			require.NoError(b, err)
		}
		require.NoError(b, tw.Close())
		var gz bytes.Buffer // stored compressed, as a registry's and the engine's layers are
		zw := gzip.NewWriter(&gz)
		_, err := zw.Write(buf.Bytes())
		require.NoError(b, err)
		require.NoError(b, zw.Close())
		l, err := tarball.LayerFromOpener(opener(gz.Bytes()), tarball.WithMediaType(types.OCILayer))
		require.NoError(b, err)
		return l
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), big(32<<20, baseBuilt), big(2<<20, commit.Add(time.Hour)))
	require.NoError(b, err)
	a := loaded(b, img)
	imgs := a.images
	for b.Loop() {
		if _, err := normalizeImage(a.dir, imgs[0], commit, Cache{}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func TestARewrittenLayerIsTheSameBytesWhateverTheBuildsCompression(t *testing.T) {
	late := commit.Add(time.Hour)
	files := map[string]string{"index.html": "<html>", "app.js": strings.Repeat("console.log(1);\n", 20_000)}
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, n := range slices.Sorted(maps.Keys(files)) {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), ModTime: late}))
		_, err := tw.Write([]byte(files[n]))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	for _, mt := range []types.MediaType{types.OCILayer, types.DockerLayer, types.OCIUncompressedLayer} {
		t.Run(string(mt), func(t *testing.T) {
			var digests []v1.Hash
			for _, level := range []int{gzip.BestSpeed, gzip.BestCompression} { // the engine's exporter may use either
				opts := []tarball.LayerOption{tarball.WithMediaType(mt), tarball.WithCompressionLevel(level)}
				if mt == types.OCIUncompressedLayer {
					opts = append(opts, tarball.WithCompression("none"))
				}
				in, err := tarball.LayerFromOpener(opener(raw.Bytes()), opts...)
				require.NoError(t, err)
				c, err := in.Compressed()
				require.NoError(t, err)
				stored, err := io.ReadAll(c) // the layer's blob, as a layout holds it
				require.NoError(t, err)
				require.NoError(t, c.Close())
				if mt == types.OCIUncompressedLayer {
					stored = raw.Bytes()
				}
				dir := t.TempDir()
				h, _, err := v1.SHA256(bytes.NewReader(stored))
				require.NoError(t, err)
				require.NoError(t, os.MkdirAll(filepath.Dir(blobPath(dir, h)), 0o755))
				require.NoError(t, os.WriteFile(blobPath(dir, h), stored, 0o644))
				got, diffID, err := rewrite(dir, v1.Descriptor{MediaType: mt, Digest: h, Size: int64(len(stored))}, commit)
				require.NoError(t, err)

				blob, err := os.ReadFile(blobPath(dir, got.Digest))
				require.NoError(t, err)
				assert.EqualValues(t, len(blob), got.Size)
				assert.Equal(t, mt, got.MediaType)
				sum, _, err := v1.SHA256(bytes.NewReader(blob))
				require.NoError(t, err)
				assert.Equal(t, sum, got.Digest, "the digest is the blob's")
				clamped := blob
				if mt != types.OCIUncompressedLayer {
					zr, err := gzip.NewReader(bytes.NewReader(blob))
					require.NoError(t, err)
					clamped, err = io.ReadAll(zr)
					require.NoError(t, err)
				}
				h, _, err = v1.SHA256(bytes.NewReader(clamped))
				require.NoError(t, err)
				assert.Equal(t, h, diffID, "the diff ID is the clamped tar's")
				if mt != types.OCIUncompressedLayer {
					// the canonical encoding of the clamped tar, written at once:
					// the same bytes however the tar was written in pieces
					assert.Equal(t, canonicalGzip(t, clamped), blob)
				}
				digest := got.Digest
				digests = append(digests, digest)
			}
			assert.Equal(t, digests[0], digests[1], "the same contents give the same layer")
		})
	}
}
