package ocipublish

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// reencode returns the layer l (diff ID diffID) as its canonical blob: its
// tar stream as it is, in the canonical encoding (newCanonicalWriter), whose
// output depends on the bytes alone. The engine exports a
// layer as whichever blob it holds for that content (the registry's gzip, a
// zstd blob of another image with the same layer, its own gzip of that:
// tests/engine-facts.md, fact 41), so the blob a build's image comes with is
// no function of the image's content; this one is. An uncompressed layer is
// its tar already. A blob made once is kept in v's folder by the digest of
// the blob it was made from, so a base image's layers are re-encoded once
// per engine, not on every publish.
func reencode(dir string, l v1.Descriptor, diffID v1.Hash, v Cache) (v1.Descriptor, error) {
	switch l.MediaType {
	case types.OCIUncompressedLayer, types.DockerUncompressedLayer:
		return l, nil
	case types.OCILayer, types.DockerLayer:
	default:
		return v1.Descriptor{}, fmt.Errorf("media type %s: only gzip and uncompressed layers can be normalized", l.MediaType)
	}
	// publishes beside each other (a deliver's images, often of one base)
	// wait for the first to compress a layer they share, then copy it
	defer v.lock(v.reencodedFile(l.Digest))()
	if d, ok := v.reencoded(dir, l); ok {
		return d, nil
	}
	d, _, err := recompress(dir, l, diffID, func(r io.Reader, w io.Writer) error {
		if _, err := io.CopyBuffer(w, r, make([]byte, 256<<10)); err != nil {
			return fmt.Errorf("read the layer: %w", err)
		}
		return nil
	})
	if err != nil {
		return v1.Descriptor{}, err
	}
	d.Annotations = l.Annotations
	v.keepReencoded(dir, l, d)
	return d, nil
}

// recompress writes into the layout in dir the tar stream of the layer l
// (gzip or uncompressed) as transform copies it, in one pass: the tar is
// hashed (its diff ID, which must be want unless that is zero) and, for a
// gzip layer, compressed in the canonical encoding as it is written, so the
// layer is never held whole; an uncompressed one stays a plain tar.
func recompress(dir string, l v1.Descriptor, want v1.Hash, transform func(tar io.Reader, out io.Writer) error) (v1.Descriptor, v1.Hash, error) {
	f, err := os.Open(blobPath(dir, l.Digest))
	if err != nil {
		return v1.Descriptor{}, v1.Hash{}, fmt.Errorf("read the layer: %w", err)
	}
	defer f.Close()
	r, err := uncompressed(f, l.MediaType)
	if err != nil {
		return v1.Descriptor{}, v1.Hash{}, err
	}
	defer r.Close()
	w, err := newBlobWriter(dir)
	if err != nil {
		return v1.Descriptor{}, v1.Hash{}, err
	}
	var out io.Writer = w
	var zw *gzip.Writer
	if isGzip(l.MediaType) {
		zw, err = newCanonicalWriter(w)
		out = zw
	}
	diffID := newHashCounter()
	if err == nil {
		err = transform(r, io.MultiWriter(&diffID, out))
	}
	if err == nil && zw != nil {
		err = zw.Close()
	}
	if got := diffID.sum(); err == nil && want != (v1.Hash{}) && got != want {
		err = fmt.Errorf("the layer %s holds content %s, not the %s its image's config says", short(l.Digest), short(got), short(want))
	}
	if err != nil {
		w.abort()
		return v1.Descriptor{}, v1.Hash{}, err
	}
	d, err := w.commit(l.MediaType)
	return d, diffID.sum(), err
}

// short is a digest's first 12 hex digits, as an error names it.
func short(h v1.Hash) string {
	if len(h.Hex) > 12 {
		return h.Algorithm + ":" + h.Hex[:12]
	}
	return h.String()
}

// exporterImport is how the engine's exporter describes a layer of a base
// image that has no history: "import image layer <digest>", naming the blob
// it held for the layer, not the one it exported.
const (
	exporterImport  = "import image layer "
	exporterComment = "buildkit.exporter.image.v0"
)

// nameLayersAsPushed points each history entry the engine's exporter wrote
// for a layer of a base without history at the layer as it is pushed, when
// the history's layer entries match the layers one for one. For the first
// base layers (the base's, kept or rebased), any entry the exporter wrote
// is one: an engine restarted on its state describes such a layer as its
// snapshot, "rehydrated persisted snapshot" (tests/engine-facts.md, fact 48).
// The exporter's entry for a layer of the build describes the engine's
// snapshot of it too: the call that made it ("Directory.withDirectory…"),
// or "rehydrated persisted snapshot" where an engine restarted since reuses
// the snapshot for an output equal to one it made before (engine run: a
// source change that left the web build's output as it was). That says
// nothing of the layer and depends on the engine's past, so it is left out.
func nameLayersAsPushed(history []v1.History, layers []v1.Descriptor, base int) {
	var withLayer []int
	for i, h := range history {
		if !h.EmptyLayer {
			withLayer = append(withLayer, i)
		}
	}
	if len(withLayer) != len(layers) {
		return
	}
	for n, i := range withLayer {
		switch {
		case history[i].Comment != exporterComment:
		case n < base || strings.HasPrefix(history[i].CreatedBy, exporterImport):
			history[i].CreatedBy = exporterImport + layers[n].Digest.String()
		default:
			history[i].CreatedBy = ""
		}
	}
}

// reencodedFile is where v keeps the canonical blob of the blob from, under
// the encoding that made it (encoder).
func (v Cache) reencodedFile(from v1.Hash) string {
	return filepath.Join(v.Dir, encoder, from.Algorithm+"-"+from.Hex)
}

// reencodeWait is how long a publish waits for another to re-encode a layer
// they share before it re-encodes the layer itself.
const reencodeWait = 2 * time.Minute

// lock takes the lock of file, kept in v's folder, within reencodeWait,
// and returns what releases it; one not taken only loses the saving.
func (v Cache) lock(file string) (unlock func()) {
	if v.Dir == "" || os.MkdirAll(filepath.Dir(file), 0o755) != nil {
		return func() {}
	}
	f, err := lockFile(file+".lock", reencodeWait)
	if err != nil {
		return func() {}
	}
	return func() { f.Close() }
}

// reencoded copies into the layout in dir the canonical blob v keeps of l,
// if any.
func (v Cache) reencoded(dir string, l v1.Descriptor) (_ v1.Descriptor, ok bool) {
	if v.Dir == "" {
		return v1.Descriptor{}, false
	}
	f, err := os.Open(v.reencodedFile(l.Digest))
	if err != nil {
		return v1.Descriptor{}, false
	}
	defer f.Close()
	w, err := newBlobWriter(dir)
	if err != nil {
		return v1.Descriptor{}, false
	}
	if _, err := io.Copy(w, f); err != nil {
		w.abort()
		return v1.Descriptor{}, false
	}
	d, err := w.commit(l.MediaType)
	d.Annotations = l.Annotations
	return d, err == nil
}

// keepReencoded keeps a copy of the layout's blob d, the canonical blob
// made from l.
func (v Cache) keepReencoded(dir string, l, d v1.Descriptor) {
	if v.Dir == "" {
		return
	}
	src, err := os.Open(blobPath(dir, d.Digest))
	if err != nil {
		return
	}
	defer src.Close()
	v.keep(v.reencodedFile(l.Digest), src)
}
