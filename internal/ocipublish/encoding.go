package ocipublish

import (
	"bufio"
	"compress/gzip"
	"io"
	"runtime"
	"strings"
)

// newCanonicalWriter compresses a layer's tar into w in its canonical
// encoding: the standard library's gzip at BestSpeed, no name, no time. Its
// bytes depend on the tar's bytes alone (and on the Go release the module
// is built with, which the module's engine version fixes), not on how they
// are written.
func newCanonicalWriter(w io.Writer) (*gzip.Writer, error) {
	return gzip.NewWriterLevel(w, gzip.BestSpeed)
}

// newLayerReader is a gzip layer's tar stream, decompressed ahead of its
// reader on a goroutine of its own, so reading a layer and compressing it
// again run at once.
func newLayerReader(r io.Reader) (io.ReadCloser, error) {
	zr, err := gzip.NewReader(bufio.NewReaderSize(r, 1<<20))
	if err != nil {
		return nil, err
	}
	return readAhead(zr), nil
}

// readAhead is r read on a goroutine of its own, a piece ahead of the
// reader; Close stops it.
func readAhead(r io.Reader) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 256<<10)
		_, err := io.CopyBuffer(pw, r, buf)
		pw.CloseWithError(err)
	}()
	return pr
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
