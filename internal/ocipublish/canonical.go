package ocipublish

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// newCanonicalWriter is a layer's canonical encoding: the standard
// library's gzip, fastest, no name, no time. Its bytes depend on the tar's
// alone (and on the Go release, which the engine version fixes).
func newCanonicalWriter(w io.Writer) (*gzip.Writer, error) {
	return gzip.NewWriterLevel(w, gzip.BestSpeed)
}

// newLayerReader decompresses the gzip layer r on a goroutine of its own,
// so that reading a layer and compressing it again run at once; r is closed
// once read, or once its reader is.
func newLayerReader(r io.ReadCloser) (io.ReadCloser, error) {
	zr, err := gzip.NewReader(bufio.NewReaderSize(r, 1<<20))
	if err != nil {
		r.Close()
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		defer r.Close()
		_, err := io.CopyBuffer(pw, zr, make([]byte, 256<<10))
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// encoder names the canonical encoding (Go release and level), as the
// folder of the blobs kept: another release may give other bytes.
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

// reencode is l's tar in the canonical encoding: the engine exports a
// layer as whichever blob it holds for that content (tests/engine-facts.md,
// fact 41). Kept in v by the digest it was made from: once per engine.
func reencode(dir string, l v1.Descriptor, diffID v1.Hash, v Cache) (v1.Descriptor, error) {
	if l.MediaType == types.OCIUncompressedLayer || l.MediaType == types.DockerUncompressedLayer {
		return l, nil
	}
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

// recompress writes l's tar as transform copies it, in one pass that
// hashes it (its diff ID, checked against want unless zero) and compresses
// a gzip layer canonically: a layer is never held whole.
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
	diffID := sha256.New()
	if err == nil {
		err = transform(r, io.MultiWriter(diffID, out))
	}
	if err == nil && zw != nil {
		err = zw.Close()
	}
	if got := sumOf(diffID); err == nil && want != (v1.Hash{}) && got != want {
		err = fmt.Errorf("the layer %s holds content %s, not the %s its image's config says", short(l.Digest), short(got), short(want))
	}
	if err != nil {
		w.abort()
		return v1.Descriptor{}, v1.Hash{}, err
	}
	d, err := w.commit(l.MediaType)
	return d, sumOf(diffID), err
}

// short is a digest's first 12 hex digits, as an error names it.
func short(h v1.Hash) string {
	if len(h.Hex) > 12 {
		return h.Algorithm + ":" + h.Hex[:12]
	}
	return h.String()
}

// Cache is a folder kept between publishes (a cache volume): re-encoded
// blobs and bases' first exports. What cannot be written only loses them.
type Cache struct {
	Dir string
}

// keep writes r to file whole: concurrent publishes share the folder.
func (v Cache) keep(file string, r io.Reader) {
	if v.Dir != "" {
		writeFile(file, r)
	}
}

// reencodedFile is where v keeps the canonical blob of the blob from.
func (v Cache) reencodedFile(from v1.Hash) string {
	return filepath.Join(v.Dir, encoder, from.Algorithm+"-"+from.Hex)
}

// reencoded copies into dir the canonical blob v keeps of l, if any.
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
