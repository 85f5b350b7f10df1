package gitsync

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const token = "glpat-S3CRET-token-777"

// remote is a bare repository served over HTTP by git http-backend behind a
// Go server that demands the token, so the auth path is the real one.
type remote struct {
	bare, url string
	pushes    atomic.Int32
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func newRemote(t *testing.T) *remote {
	_, err := exec.LookPath("git")
	require.NoError(t, err, "these tests run the real git")
	root := t.TempDir()
	r := &remote{bare: filepath.Join(root, "code.git")}
	runGit(t, root, "init", "--quiet", "--bare", "--initial-branch=main", r.bare)
	runGit(t, r.bare, "config", "http.receivepack", "true")

	// Seed the branch: a README and a file outside the snapshot folder.
	seed := filepath.Join(root, "seed")
	runGit(t, root, "init", "--quiet", "--initial-branch=main", seed)
	write(t, filepath.Join(seed, "README.md"), "# code as data\n")
	write(t, filepath.Join(seed, "other/keep.txt"), "not the snapshot's\n")
	write(t, filepath.Join(seed, "codeasdata/main/stale.patch.json"), "{}\n")
	runGit(t, seed, "add", ".")
	runGit(t, seed, "commit", "--quiet", "-m", "seed")
	runGit(t, seed, "push", "--quiet", r.bare, "main")

	execPath := runGit(t, root, "--exec-path")
	backend := &cgi.Handler{
		Path: filepath.Join(execPath, "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, pw, ok := req.BasicAuth(); !ok || pw != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		if strings.HasSuffix(req.URL.Path, "/git-receive-pack") {
			r.pushes.Add(1)
		}
		backend.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/code.git"
	return r
}

func write(t *testing.T, path, content string) {
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func snapshotDir(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, content := range files {
		write(t, filepath.Join(dir, name), content)
	}
	return dir
}

// logs collects log lines to check they hold no token.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (r *remote) opts(t *testing.T, snapshot string, l *logs) Options {
	return Options{
		RemoteURL: r.url, Branch: "main", OutputDir: "codeasdata/main", Snapshot: snapshot,
		Message: "snapshot codeasdata/main", Token: token, AllowHTTP: true,
		WorkDir: filepath.Join(t.TempDir(), "clone"), Logf: l.logf,
	}
}

// checkout clones the remote's branch as it is now.
func (r *remote) checkout(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "check")
	runGit(t, "", "clone", "--quiet", "--branch", "main", r.bare, dir)
	return dir
}

func TestAFirstSnapshotIsCommittedAndPushed(t *testing.T) {
	r, l := newRemote(t), &logs{}
	snap := snapshotDir(t, map[string]string{"00000000000000000001/project.patch.json": `{"a":1}`, "00000000000000000001/sub/x.patch.json": `{"x":1}`})
	o := r.opts(t, snap, l)
	res, err := Sync(context.Background(), o)
	require.NoError(t, err)
	assert.True(t, res.Changed)
	assert.Equal(t, 1, res.Attempts)
	assert.Len(t, res.Commit, 40)

	co := r.checkout(t)
	assert.Equal(t, res.Commit, runGit(t, co, "rev-parse", "HEAD"))
	assert.Equal(t, "snapshot codeasdata/main", runGit(t, co, "log", "-1", "--format=%s"))
	assert.Equal(t, "lowcode-pipeline <lowcode-pipeline@users.noreply.invalid>", runGit(t, co, "log", "-1", "--format=%an <%ae>"))
	assert.FileExists(t, filepath.Join(co, "codeasdata/main/00000000000000000001/sub/x.patch.json"))
	assert.NoFileExists(t, filepath.Join(co, "codeasdata/main/stale.patch.json"), "what the snapshot no longer has disappears")
	assert.FileExists(t, filepath.Join(co, "other/keep.txt"), "nothing outside outputDir is touched")
	assert.FileExists(t, filepath.Join(co, "README.md"))
	assert.Equal(t, "codeasdata/main/00000000000000000001/project.patch.json\ncodeasdata/main/00000000000000000001/sub/x.patch.json\ncodeasdata/main/stale.patch.json",
		runGit(t, co, "show", "--format=", "--name-only", "HEAD"), "the commit touches outputDir only")

	config, err := os.ReadFile(filepath.Join(o.WorkDir, ".git", "config"))
	require.NoError(t, err)
	assert.NotContains(t, string(config), token, "the token is never written into the clone")
	assert.NotContains(t, string(config), "Authorization")
	assertNoToken(t, l.lines)
}

func TestAnIdenticalSecondRunMakesNoCommit(t *testing.T) {
	r, l := newRemote(t), &logs{}
	snap := snapshotDir(t, map[string]string{"p.patch.json": "{}"})
	first, err := Sync(context.Background(), r.opts(t, snap, l))
	require.NoError(t, err)
	require.True(t, first.Changed)

	second, err := Sync(context.Background(), r.opts(t, snap, l))
	require.NoError(t, err)
	assert.False(t, second.Changed)
	assert.Equal(t, first.Commit, second.Commit)
	assert.EqualValues(t, 1, r.pushes.Load(), "nothing is pushed when nothing changed")
}

func TestAFileRemovedFromTheSnapshotIsRemoved(t *testing.T) {
	r, l := newRemote(t), &logs{}
	_, err := Sync(context.Background(), r.opts(t, snapshotDir(t, map[string]string{"a.patch.json": "{}", "b.patch.json": "{}"}), l))
	require.NoError(t, err)
	res, err := Sync(context.Background(), r.opts(t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l))
	require.NoError(t, err)
	assert.True(t, res.Changed)
	co := r.checkout(t)
	assert.FileExists(t, filepath.Join(co, "codeasdata/main/a.patch.json"))
	assert.NoFileExists(t, filepath.Join(co, "codeasdata/main/b.patch.json"))
}

func TestAPushRaceEndsWithBothCommitsOnTheBranch(t *testing.T) {
	r, l := newRemote(t), &logs{}
	o := r.opts(t, snapshotDir(t, map[string]string{"a.patch.json": `{"v":2}`}), l)
	o.beforePush = func(attempt int) {
		if attempt > 1 {
			return
		}
		// Someone else pushes to the branch between our clone and our push.
		other := filepath.Join(t.TempDir(), "other")
		runGit(t, "", "clone", "--quiet", "--branch", "main", r.bare, other)
		write(t, filepath.Join(other, "other/news.txt"), "meanwhile\n")
		runGit(t, other, "add", ".")
		runGit(t, other, "commit", "--quiet", "-m", "a concurrent commit")
		runGit(t, other, "push", "--quiet", "origin", "main")
	}
	res, err := Sync(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts)
	co := r.checkout(t)
	assert.Equal(t, "snapshot codeasdata/main\na concurrent commit\nseed", runGit(t, co, "log", "--format=%s"))
	assert.FileExists(t, filepath.Join(co, "other/news.txt"))
	assert.FileExists(t, filepath.Join(co, "codeasdata/main/a.patch.json"))
	assertNoToken(t, l.lines)
}

func TestABranchThatKeepsMovingFailsWithoutForcing(t *testing.T) {
	r, l := newRemote(t), &logs{}
	o := r.opts(t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.MaxAttempts = 2
	n := 0
	o.beforePush = func(int) {
		n++
		other := filepath.Join(t.TempDir(), "other")
		runGit(t, "", "clone", "--quiet", "--branch", "main", r.bare, other)
		write(t, filepath.Join(other, fmt.Sprintf("other/%d.txt", n)), "x")
		runGit(t, other, "add", ".")
		runGit(t, other, "commit", "--quiet", "-m", fmt.Sprintf("concurrent %d", n))
		runGit(t, other, "push", "--quiet", "origin", "main")
	}
	_, err := Sync(context.Background(), o)
	require.ErrorIs(t, err, ErrRejected)
	assert.Contains(t, err.Error(), "2 times in a row; nothing was forced")
	assert.Equal(t, "concurrent 2", runGit(t, r.checkout(t), "log", "-1", "--format=%s"), "the others' commits stay")
}

func TestAWrongTokenIsAClearErrorWithoutTheToken(t *testing.T) {
	r, l := newRemote(t), &logs{}
	o := r.opts(t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.Token = "wrong-" + token
	_, err := Sync(context.Background(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `clone branch "main" of `+r.url)
	assert.Contains(t, err.Error(), "the server refused the credentials: check the git token")
	assert.NotContains(t, err.Error(), token)
	assert.Zero(t, r.pushes.Load())
}

func TestAMissingBranchIsNamed(t *testing.T) {
	r, l := newRemote(t), &logs{}
	o := r.opts(t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.Branch = "snapshots"
	_, err := Sync(context.Background(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `clone branch "snapshots"`)
	assert.Contains(t, err.Error(), "snapshots")
}

func TestOptionsAreCheckedBeforeAnyGitCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"credentials in the URL", Options{RemoteURL: "https://" + token + "@git.example.com/r.git", Branch: "main", OutputDir: "o", Snapshot: "s"}, "carries credentials"},
		{"plain http", Options{RemoteURL: "http://git.example.com/r.git", Branch: "main", OutputDir: "o", Snapshot: "s"}, "must be https"},
		{"no branch", Options{RemoteURL: "https://git.example.com/r.git", OutputDir: "o", Snapshot: "s"}, "required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Sync(context.Background(), tc.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), token)
		})
	}
}

func assertNoToken(t *testing.T, lines []string) {
	t.Helper()
	for _, l := range lines {
		assert.NotContains(t, l, token)
	}
}
