// Package tartest writes folders as tarballs for tests, as
// Container.asTarball gives an OCI image layout.
package tartest

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Pack writes dir as a tarball at out, then the extra headers (entries a
// test needs that no folder can hold, such as one outside it).
func Pack(t testing.TB, dir, out string, extra ...*tar.Header) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		h, err := tar.FileInfoHeader(info, "")
		require.NoError(t, err)
		h.Name = filepath.ToSlash(rel)
		require.NoError(t, tw.WriteHeader(h))
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			_, err = tw.Write(data)
			require.NoError(t, err)
		}
		return nil
	}))
	for _, h := range extra {
		require.NoError(t, tw.WriteHeader(h))
	}
	require.NoError(t, tw.Close())
	require.NoError(t, os.WriteFile(out, buf.Bytes(), 0o600))
}
