package gitsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/testsupport/gittest"
	"dagger/lowcode-pipeline/internal/testsupport/leaktest"
)

const token = gittest.Token

func snapshotDir(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, content := range files {
		gittest.Write(t, filepath.Join(dir, name), content)
	}
	return dir
}

func opts(r *gittest.Remote, t *testing.T, snapshot string, l *leaktest.Recorder) Options {
	return Options{
		RemoteURL: r.URL, Branch: "main", OutputDir: "codeasdata/main", Snapshot: snapshot,
		Message: "snapshot codeasdata/main", Token: secret.New(token), AllowHTTP: true,
		WorkDir: filepath.Join(t.TempDir(), "clone"), Logf: l.Logf,
		MaxDeleteRatio: 1, // these tests are about git; guards_test.go is about the guard
	}
}

func TestAFirstSnapshotIsCommittedAndPushed(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	snap := snapshotDir(t, map[string]string{"00000000000000000001/project.patch.json": `{"a":1}`, "00000000000000000001/sub/x.patch.json": `{"x":1}`})
	o := opts(r, t, snap, l)
	res, err := Sync(context.Background(), o)
	require.NoError(t, err)
	assert.True(t, res.Changed)
	assert.Equal(t, 1, res.Attempts)
	assert.Len(t, res.Commit, 40)

	co := r.Checkout(t)
	assert.Equal(t, res.Commit, gittest.Git(t, co, "rev-parse", "HEAD"))
	assert.Equal(t, "snapshot codeasdata/main", gittest.Git(t, co, "log", "-1", "--format=%s"))
	assert.Equal(t, "lowcode-pipeline <lowcode-pipeline@users.noreply.invalid>", gittest.Git(t, co, "log", "-1", "--format=%an <%ae>"))
	assert.FileExists(t, filepath.Join(co, "codeasdata/main/00000000000000000001/sub/x.patch.json"))
	assert.NoFileExists(t, filepath.Join(co, "codeasdata/main/stale.patch.json"), "what the snapshot no longer has disappears")
	assert.FileExists(t, filepath.Join(co, "other/keep.txt"), "nothing outside outputDir is touched")
	assert.FileExists(t, filepath.Join(co, "README.md"))
	assert.Equal(t, "codeasdata/main/00000000000000000001/project.patch.json\ncodeasdata/main/00000000000000000001/sub/x.patch.json\ncodeasdata/main/stale.patch.json",
		gittest.Git(t, co, "show", "--format=", "--name-only", "HEAD"), "the commit touches outputDir only")

	config, err := os.ReadFile(filepath.Join(o.WorkDir, ".git", "config"))
	require.NoError(t, err)
	assert.NotContains(t, string(config), token, "the token is never written into the clone")
	assert.NotContains(t, string(config), "Authorization")
	l.AssertClean(t, token)
}

func TestAnIdenticalSecondRunMakesNoCommit(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	snap := snapshotDir(t, map[string]string{"p.patch.json": "{}"})
	first, err := Sync(context.Background(), opts(r, t, snap, l))
	require.NoError(t, err)
	require.True(t, first.Changed)
	assert.Equal(t, "pushed", first.Outcome())

	second, err := Sync(context.Background(), opts(r, t, snap, l))
	require.NoError(t, err)
	assert.False(t, second.Changed)
	assert.Equal(t, "unchanged", second.Outcome())
	assert.Equal(t, first.Commit, second.Commit)
	assert.EqualValues(t, 1, r.Pushes.Load(), "nothing is pushed when nothing changed")
}

func TestAFileRemovedFromTheSnapshotIsRemoved(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	_, err := Sync(context.Background(), opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}", "b.patch.json": "{}"}), l))
	require.NoError(t, err)
	res, err := Sync(context.Background(), opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l))
	require.NoError(t, err)
	assert.True(t, res.Changed)
	co := r.Checkout(t)
	assert.FileExists(t, filepath.Join(co, "codeasdata/main/a.patch.json"))
	assert.NoFileExists(t, filepath.Join(co, "codeasdata/main/b.patch.json"))
}

func TestAPushRaceEndsWithBothCommitsOnTheBranch(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": `{"v":2}`}), l)
	o.beforePush = func(attempt int) {
		if attempt > 1 {
			return
		}
		// Someone else pushes to the branch between our clone and our push.
		other := filepath.Join(t.TempDir(), "other")
		gittest.Git(t, "", "clone", "--quiet", "--branch", "main", r.Bare, other)
		gittest.Write(t, filepath.Join(other, "other/news.txt"), "meanwhile\n")
		gittest.Git(t, other, "add", ".")
		gittest.Git(t, other, "commit", "--quiet", "-m", "a concurrent commit")
		gittest.Git(t, other, "push", "--quiet", "origin", "main")
	}
	res, err := Sync(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts)
	co := r.Checkout(t)
	assert.Equal(t, "snapshot codeasdata/main\na concurrent commit\nseed", gittest.Git(t, co, "log", "--format=%s"))
	assert.FileExists(t, filepath.Join(co, "other/news.txt"))
	assert.FileExists(t, filepath.Join(co, "codeasdata/main/a.patch.json"))
	l.AssertClean(t, token)
}

func TestABranchThatKeepsMovingFailsWithoutForcing(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.MaxAttempts = 2
	n := 0
	o.beforePush = func(int) {
		n++
		other := filepath.Join(t.TempDir(), "other")
		gittest.Git(t, "", "clone", "--quiet", "--branch", "main", r.Bare, other)
		gittest.Write(t, filepath.Join(other, fmt.Sprintf("other/%d.txt", n)), "x")
		gittest.Git(t, other, "add", ".")
		gittest.Git(t, other, "commit", "--quiet", "-m", fmt.Sprintf("concurrent %d", n))
		gittest.Git(t, other, "push", "--quiet", "origin", "main")
	}
	_, err := Sync(context.Background(), o)
	require.ErrorIs(t, err, ErrRejected)
	assert.Contains(t, err.Error(), "2 times in a row; nothing was forced")
	assert.Equal(t, "concurrent 2", gittest.Git(t, r.Checkout(t), "log", "-1", "--format=%s"), "the others' commits stay")
}

func TestAWrongTokenIsAClearErrorWithoutTheToken(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.Token = secret.New("wrong-" + token)
	_, err := Sync(context.Background(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read the branches of "+r.URL)
	assert.Contains(t, err.Error(), "the server refused the credentials: check the git token")
	assert.NotContains(t, err.Error(), token)
	assert.Zero(t, r.Pushes.Load())
}

func TestAMissingBranchIsNamedWithTheFlagThatCreatesIt(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.Branch = "snapshots"
	_, err := Sync(context.Background(), o)
	require.ErrorIs(t, err, ErrNoBranch)
	assert.Contains(t, err.Error(), `branch "snapshots" is not on `+r.URL+"; pass --create-branch")
	assert.Zero(t, r.Pushes.Load())
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
		{"a delete ratio above 1", Options{RemoteURL: "https://git.example.com/r.git", Branch: "main", OutputDir: "o", Snapshot: "s", MaxDeleteRatio: 1.5}, "max delete ratio 1.5: must be above 0 and at most 1"},
		{"negative attempts", Options{RemoteURL: "https://git.example.com/r.git", Branch: "main", OutputDir: "o", Snapshot: "s", MaxAttempts: -1}, "must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Sync(context.Background(), tc.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), token)
		})
	}
}

func TestARemotesQueryNeverShowsInAnError(t *testing.T) {
	o := Options{RemoteURL: "https://127.0.0.1:1/code.git?private_token=glpat-SECRET-0815", Branch: "main", OutputDir: "o",
		Snapshot: snapshotDir(t, map[string]string{"a.json": "{}"}), Message: "m", Token: secret.New(token), MaxDeleteRatio: 1,
		WorkDir: filepath.Join(t.TempDir(), "clone")}
	_, err := Sync(context.Background(), o)
	require.Error(t, err, "nothing listens on port 1")
	assert.NotContains(t, err.Error(), "glpat-SECRET-0815")
	assert.Contains(t, err.Error(), "https://127.0.0.1:1/code.git")
}
