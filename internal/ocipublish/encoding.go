package ocipublish

import (
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/klauspost/pgzip"
)

// canonicalBlock is the size of the blocks a gzip layer is compressed in.
// It is part of the encoding: another size gives other bytes.
const canonicalBlock = 1 << 20

// newCanonicalWriter compresses a layer's tar into w in its canonical
// encoding: klauspost/pgzip at BestSpeed, in blocks of canonicalBlock, each
// deflated with the previous block's last 32 KiB as its dictionary. Its
// bytes depend on the tar's bytes alone: not on how they are written, nor on
// how many blocks are compressed at once. It compresses on every core: the
// layers of a base image, which an engine's first publish re-encodes, are
// its largest, and one of them (a distribution's, about 80 MB compressed) took
// about as long as the rest of the normalize with the standard library's
// gzip on one core.
func newCanonicalWriter(w io.Writer) (*pgzip.Writer, error) {
	zw, err := pgzip.NewWriterLevel(w, pgzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if err := zw.SetConcurrency(canonicalBlock, max(runtime.GOMAXPROCS(0), 2)); err != nil {
		return nil, err
	}
	return zw, nil
}

// newLayerReader is a gzip layer's tar stream, decompressed ahead of its
// reader on a goroutine of its own, so reading a layer and compressing it
// again run at once.
func newLayerReader(r io.Reader) (*pgzip.Reader, error) {
	return pgzip.NewReader(r)
}

// encoder names the canonical encoding, as the folder the re-encoded blobs
// kept across publishes are in: the versions of the libraries that compress
// and the block size. Another version may give other bytes, and a blob kept
// by an older module must not stand for this one's.
var encoder = encoderName(dependencyVersions())

// encoderName is encoder for the compressing libraries' versions (module
// path → version); a version unknown (a test binary) is said so.
func encoderName(versions map[string]string) string {
	name := "pgzip-" + versionOr(versions, "github.com/klauspost/pgzip") +
		"-flate-" + versionOr(versions, "github.com/klauspost/compress") + "-block-" + strconv.Itoa(canonicalBlock)
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, name)
}

func versionOr(versions map[string]string, path string) string {
	if v := versions[path]; v != "" && v != "(devel)" {
		return v
	}
	return "unknown"
}

// dependencyVersions are the module's dependencies' versions, by module path,
// as the binary was built with them.
func dependencyVersions() map[string]string {
	versions := map[string]string{}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return versions
	}
	for _, d := range info.Deps {
		versions[d.Path] = d.Version
		if d.Replace != nil {
			versions[d.Path] = d.Replace.Version
		}
	}
	return versions
}
