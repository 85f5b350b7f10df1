package main

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheServerCreatesTheRepositoryAndTakesPushesWithTheToken(t *testing.T) {
	root := t.TempDir()
	h, err := handler(root, "code.git", "tok-123")
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	work := t.TempDir()
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x.invalid")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	url := strings.Replace(srv.URL, "http://", "http://ci:tok-123@", 1) + "/code.git"
	_, err = git("init", "--quiet", "--initial-branch=main", ".")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(work, "a.txt"), []byte("a"), 0o644))
	_, err = git("add", ".")
	require.NoError(t, err)
	_, err = git("commit", "--quiet", "-m", "first")
	require.NoError(t, err)
	out, err := git("push", "--quiet", url, "main")
	require.NoError(t, err, out)
	assert.DirExists(t, filepath.Join(root, "code.git"))

	out, err = git("push", "--quiet", strings.Replace(url, "tok-123", "wrong", 1), "main")
	assert.Error(t, err, "a wrong token is refused: %s", out)

	_, err = handler(root, "", "")
	assert.EqualError(t, err, "no token: set GIT_TOKEN")
}
