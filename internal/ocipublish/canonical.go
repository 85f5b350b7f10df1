package ocipublish

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// newCanonicalWriter compresses a layer's tar into w in its canonical
// encoding: the standard library's gzip at BestSpeed, no name, no time. Its
// bytes depend on the tar's bytes alone (and on the Go release the module
// is built with, which the module's engine version fixes), not on how they
// are written.
func newCanonicalWriter(w io.Writer) (*gzip.Writer, error) {
	return gzip.NewWriterLevel(w, gzip.BestSpeed)
}

// newLayerReader is a gzip layer's tar stream, decompressed a piece ahead
// of its reader on a goroutine of its own, so reading a layer and
// compressing it again run at once; Close stops it.
func newLayerReader(r io.Reader) (io.ReadCloser, error) {
	zr, err := gzip.NewReader(bufio.NewReaderSize(r, 1<<20))
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := io.CopyBuffer(pw, zr, make([]byte, 256<<10))
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// encoder names the canonical encoding, as the folder the re-encoded blobs
// kept across publishes are in: the Go release whose gzip compresses, and
// its level. Another release may give other bytes, and a blob kept by a
// module built with it must not stand for this one's.
var encoder = encoderName(runtime.Version())

// encoderName is encoder for the Go release goVersion.
func encoderName(goVersion string) string {
	return "gzip-" + strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, goVersion) + "-level-1"
}

// reencode returns the layer l (diff ID diffID) as its canonical blob: its
// tar as it is, in the canonical encoding (newCanonicalWriter). The engine
// exports a layer as whichever blob it holds for that content (the
// registry's gzip, another image's zstd, its own gzip of that:
// tests/engine-facts.md, fact 41); this blob depends on the content alone.
// An uncompressed layer is its tar already. A blob made once is kept in v
// by the digest of the blob it was made from: once per engine, not on
// every publish.
func reencode(dir string, l v1.Descriptor, diffID v1.Hash, v Cache) (v1.Descriptor, error) {
	if l.MediaType == types.OCIUncompressedLayer || l.MediaType == types.DockerUncompressedLayer {
		return l, nil
	}
	// publishes beside each other (a deliver's images, often of one base)
	// wait for the first to compress a layer they share, then copy it
	defer v.lock(v.reencodedFile(l.Digest))()
	d, ok := v.reencoded(dir, l)
	if !ok {
		var err error
		d, _, err = recompress(dir, l, diffID, func(r io.Reader, w io.Writer) error {
			if _, err := io.CopyBuffer(w, r, make([]byte, 256<<10)); err != nil {
				return fmt.Errorf("read the layer: %w", err)
			}
			return nil
		})
		if err != nil {
			return v1.Descriptor{}, err
		}
		if blob, err := os.Open(blobPath(dir, d.Digest)); err == nil {
			v.keep(v.reencodedFile(l.Digest), blob)
			blob.Close()
		}
	}
	d.Annotations = l.Annotations
	return d, nil
}

// recompress writes into the layout in dir the tar stream of the layer l
// (gzip or uncompressed) as transform copies it, in one pass: the tar is
// hashed (its diff ID, which must be want unless that is zero) and, for a
// gzip layer, compressed in the canonical encoding as it is written, so the
// layer is never held whole; an uncompressed one stays a plain tar.
func recompress(dir string, l v1.Descriptor, want v1.Hash, transform func(tar io.Reader, out io.Writer) error) (v1.Descriptor, v1.Hash, error) {
	r, err := openLayer(blobPath(dir, l.Digest), l.MediaType)
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

// Cache is a folder kept between publishes (the module keeps it in a
// cache volume): the blob a layer was re-encoded to (reencode), so a layer
// is compressed once, and what the engine first exported of a base
// (firstexport.go). A zero Cache keeps nothing; what cannot be written or
// locked only loses the saving.
type Cache struct {
	Dir string
}

// keep writes what r holds to file in the folder, whole (writeFile), since
// concurrent publishes share the folder.
func (v Cache) keep(file string, r io.Reader) {
	if v.Dir != "" {
		writeFile(file, r)
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
// and returns what releases it.
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
	return d, err == nil
}
