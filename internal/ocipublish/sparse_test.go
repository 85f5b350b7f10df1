package ocipublish

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sparseEntry is a tar holding one PAX (GNU 1.0) sparse file named name
// that declares size bytes, all hole: archive/tar reads it as size bytes of
// zeros, from 3 KiB of tar. archive/tar writes no sparse file, so the blocks
// are made here.
func sparseEntry(name string, size int64) []byte {
	record := func(k, v string) string {
		line := fmt.Sprintf(" %s=%s\n", k, v)
		n := len(line) + 1
		for len(fmt.Sprint(n))+len(line) != n {
			n = len(fmt.Sprint(n)) + len(line)
		}
		return fmt.Sprint(n) + line
	}
	header := func(name string, flag byte, size int) []byte {
		b := make([]byte, 512)
		copy(b, name)
		copy(b[100:], "0000644\x00")
		copy(b[124:], fmt.Sprintf("%011o\x00", size))
		copy(b[136:], "00000000000\x00")
		b[156] = flag
		copy(b[257:], "ustar\x0000")
		copy(b[148:], "        ")
		sum := 0
		for _, c := range b {
			sum += int(c)
		}
		copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
		return b
	}
	block := func(data string) []byte { return append([]byte(data), make([]byte, 511-(len(data)+511)%512)...) }
	pax := record("GNU.sparse.major", "1") + record("GNU.sparse.minor", "0") + record("GNU.sparse.name", name) +
		record("GNU.sparse.realsize", fmt.Sprint(size))
	var b bytes.Buffer
	b.Write(header("PaxHeaders/0", 'x', len(pax)))
	b.Write(block(pax))
	b.Write(header("GNUSparseFile.0/0", '0', 512))
	b.Write(block("0\n")) // a sparse map of no data
	b.Write(make([]byte, 1024))
	return b.Bytes()
}

// A sparse entry, which archive/tar would expand to the size it declares
// (up to 2^63 bytes), is refused in the image tarball and in a layer, not
// written out or read (round-19 probes F1, F2): no engine export holds one.
func TestASparseFileIsRefusedNotExpanded(t *testing.T) {
	dir := t.TempDir()
	tarball := filepath.Join(dir, "image.tar")
	require.NoError(t, os.WriteFile(tarball, sparseEntry("blobs/sha256/junk", 1<<40), 0o644))
	err := unpack(tarball, filepath.Join(dir, "out"), -1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `read the image tarball: "blobs/sha256/junk" is a sparse file, which no image the engine exports holds`)
	assert.NoFileExists(t, filepath.Join(dir, "out", "blobs", "sha256", "junk"))

	data := sparseEntry("app/big", 1<<40)
	h, _, err := v1.SHA256(bytes.NewReader(data))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(blobPath(dir, h)), 0o755))
	require.NoError(t, os.WriteFile(blobPath(dir, h), data, 0o644))
	l := v1.Descriptor{MediaType: types.OCIUncompressedLayer, Digest: h, Size: int64(len(data))}
	for name, read := range map[string]func() error{
		"the check for later times": func() error { _, err := hasTimeAfter(dir, l, commit); return err },
		"the rewrite": func() error {
			_, _, err := rewrite(dir, l, commit)
			return err
		},
		"the comparison with the base's": func() error { _, err := entriesOf(blobPath(dir, h), l); return err },
	} {
		err := read()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), `"app/big" is a sparse file`, name)
	}
}
