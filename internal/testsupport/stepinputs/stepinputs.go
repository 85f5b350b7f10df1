// Package stepinputs lays out, on this machine, the project a build step
// sees when package.json declares what it reads (nodebuild.StepInputs), so
// that a test runs the step there with the real tools and compares its
// output with the one the whole project gives: the proof that a
// declaration misses nothing the step reads.
package stepinputs

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Project is a new folder holding what the step's container holds of the
// installed project at dir: the install's inputs (nodebuild's
// InstallInputs, by path) and node_modules (as the
// install container left them), then the declared paths over them.
func Project(t *testing.T, dir string, install, declared []string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(dir))
	require.NoError(t, os.MkdirAll(out, 0o755))
	for _, p := range append(append([]string{"node_modules"}, install...), declared...) {
		if _, err := os.Stat(filepath.Join(out, p)); err == nil {
			continue // inside an install input
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(out, p)), 0o755))
		// hard links: node_modules is hundreds of megabytes
		data, err := exec.Command("cp", "-al", filepath.Join(dir, p), filepath.Join(out, p)).CombinedOutput()
		require.NoError(t, err, "%s", data)
	}
	return out
}

// Tree is every file under dir with the SHA-256 of its bytes, by path.
func Tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(data)
		files[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	}))
	require.NotEmpty(t, files, "%s holds no file", dir)
	return files
}
