package gitsync

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/testsupport/gittest"
	"dagger/lowcode-pipeline/internal/testsupport/leaktest"
)

func TestAnEmptySnapshotIsRefusedAndNothingIsPushed(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, t.TempDir(), l)
	_, err := Sync(context.Background(), o)
	require.ErrorIs(t, err, ErrEmpty)
	assert.Contains(t, err.Error(), "the platform CLI wrote no file into codeasdata/main; nothing was pushed")
	assert.Contains(t, err.Error(), "--allow-empty")
	assert.Zero(t, r.Pushes.Load())
	assert.FileExists(t, filepath.Join(r.Checkout(t), "codeasdata/main/stale.patch.json"))
}

func TestAllowEmptyPushesTheDeletion(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, t.TempDir(), l)
	o.AllowEmpty, o.MaxDeleteRatio = true, 0 // the default ratio: an allowed empty snapshot is not a partial one
	res, err := Sync(context.Background(), o)
	require.NoError(t, err)
	assert.True(t, res.Changed)
	co := r.Checkout(t)
	assert.NoDirExists(t, filepath.Join(co, "codeasdata/main"))
	assert.FileExists(t, filepath.Join(co, "other/keep.txt"))
}

// fiveFiles puts five patch files into codeasdata/main on the remote.
func fiveFiles(t *testing.T, r *gittest.Remote, l *leaktest.Recorder) {
	files := map[string]string{}
	for i := range 5 {
		files[fmt.Sprintf("p%d.patch.json", i)] = "{}"
	}
	_, err := Sync(context.Background(), opts(r, t, snapshotDir(t, files), l))
	require.NoError(t, err)
}

func TestTheDeletionGuardRefusesMostOfTheFolderGone(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	fiveFiles(t, r, l)
	pushes := r.Pushes.Load()

	twoLeft := snapshotDir(t, map[string]string{"p0.patch.json": "{}", "p1.patch.json": "{}"})
	o := opts(r, t, twoLeft, l)
	o.MaxDeleteRatio = 0 // the default, 0.5
	_, err := Sync(context.Background(), o)
	require.ErrorIs(t, err, ErrTooManyDeletions)
	assert.Contains(t, err.Error(), `codeasdata/main on "main" holds 5 files, the snapshot 2, so the commit would delete 3 (60%), more than --max-delete-ratio 0.5 allows; nothing was pushed`)
	assert.Equal(t, pushes, r.Pushes.Load())

	o = opts(r, t, twoLeft, l)
	o.MaxDeleteRatio = 0.7
	res, err := Sync(context.Background(), o)
	require.NoError(t, err, "a raised ratio lets it through")
	assert.True(t, res.Changed)
	assert.NoFileExists(t, filepath.Join(r.Checkout(t), "codeasdata/main/p4.patch.json"))
}

func TestCreateBranchStartsFromTheDefaultBranch(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.Branch, o.CreateBranch = "snapshots/dev", true
	res, err := Sync(context.Background(), o)
	require.NoError(t, err)
	assert.True(t, res.Changed)
	co := r.CheckoutBranch(t, "snapshots/dev")
	assert.Equal(t, "snapshot codeasdata/main\nseed", gittest.Git(t, co, "log", "--format=%s"), "branched off main")
	assert.FileExists(t, filepath.Join(co, "other/keep.txt"))
	assert.Equal(t, "seed", gittest.Git(t, r.Checkout(t), "log", "-1", "--format=%s"), "main is untouched")
}

func TestCreateBranchBootstrapsAnEmptyRepository(t *testing.T) {
	r, l := gittest.NewEmptyRemote(t), &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"00000000000000000001/p.patch.json": "{}"}), l)
	o.CreateBranch = true
	res, err := Sync(context.Background(), o)
	require.NoError(t, err)
	assert.True(t, res.Changed)
	co := r.Checkout(t)
	assert.Equal(t, "snapshot codeasdata/main", gittest.Git(t, co, "log", "--format=%s"), "a root commit")
	assert.FileExists(t, filepath.Join(co, "codeasdata/main/00000000000000000001/p.patch.json"))

	_, err = Sync(context.Background(), opts(gittest.NewEmptyRemote(t), t, snapshotDir(t, map[string]string{"a": "{}"}), l))
	assert.ErrorIs(t, err, ErrNoBranch, "without --create-branch an empty repository is not written to")
}

func TestAStalledRemoteEndsAtTheTimeLimit(t *testing.T) {
	url := gittest.Stalled(t)
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		slow    time.Duration
		want    string
	}{
		{"the whole push's time limit", 2 * time.Second, time.Hour, "stopped by the time limit (--timeout 2s)"},
		{"git's low-speed limit", time.Hour, time.Second, "the remote sent less than 1000 bytes/s for 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &leaktest.Recorder{}
			o := Options{RemoteURL: url, Branch: "main", OutputDir: "o", Snapshot: snapshotDir(t, map[string]string{"a": "{}"}),
				Message: "m", Token: secret.New(token), AllowHTTP: true, Timeout: tc.timeout, LowSpeedTime: tc.slow, Logf: l.Logf}
			start := time.Now()
			_, err := Sync(context.Background(), o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), token)
			assert.Less(t, time.Since(start), 30*time.Second)
		})
	}
}

func TestAPrivateCAIsTrustedOnlyWhenGiven(t *testing.T) {
	r, ca := gittest.NewTLSRemote(t)
	l := &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.AllowHTTP = false
	_, err := Sync(context.Background(), o)
	require.Error(t, err, "an unknown CA is not trusted")
	assert.Contains(t, err.Error(), "certificate")

	o = opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.AllowHTTP, o.CACert = false, ca
	res, err := Sync(context.Background(), o)
	require.NoError(t, err)
	assert.True(t, res.Changed)
	l.AssertClean(t, token)
}

func TestTheUserNameGoesWithTheToken(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.Username = "x-token-auth"
	_, err := Sync(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, []string{"x-token-auth"}, r.Users(), "the server saw the user name given")
}

// The options and the git runner hold the token and the login's header: a
// printed one (a log line, an error's %v) shows neither, while git gets the
// header (TestTheUserNameGoesWithTheToken: the server saw the login).
func TestAPrintedGitHidesTheLogin(t *testing.T) {
	o := Options{RemoteURL: "https://git.example.com/r.git", Branch: "main", OutputDir: "o", Snapshot: t.TempDir(),
		Username: "x-token-auth", Token: secret.New(token)}
	g, err := newGit(o)
	require.NoError(t, err)
	basic := base64.StdEncoding.EncodeToString([]byte("x-token-auth:" + token))
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{o, &o, g, *g} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, token, verb)
			assert.NotContains(t, out, basic, verb)
		}
	}
	assert.Contains(t, g.environ(), fmt.Sprintf("GIT_CONFIG_VALUE_%d=Authorization: Basic %s", g.authAt, basic))
	assert.Contains(t, g.environ(), fmt.Sprintf("GIT_CONFIG_KEY_%d=http.extraHeader", g.authAt))

	o.Token = secret.Text{}
	g, err = newGit(o)
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(g.environ(), "\n"), "extraHeader", "no token, no header")
}

func TestParseLsRemote(t *testing.T) {
	heads, def := parseLsRemote("ref: refs/heads/trunk\tHEAD\nabc\tHEAD\nabc\trefs/heads/trunk\ndef\trefs/heads/dev\nfff\trefs/tags/v1\n")
	assert.Equal(t, map[string]bool{"trunk": true, "dev": true}, heads)
	assert.Equal(t, "trunk", def)

	heads, def = parseLsRemote("")
	assert.Empty(t, heads)
	assert.Empty(t, def, "an empty repository has no default branch")

	_, def = parseLsRemote("abc\trefs/heads/only\n")
	assert.Equal(t, "only", def, "without a symbolic HEAD, any branch")
}

// pushSymlink commits a symbolic link name -> target to the remote's main.
func pushSymlink(t *testing.T, r *gittest.Remote, name, target string) {
	t.Helper()
	co := r.Checkout(t)
	require.NoError(t, os.Symlink(target, filepath.Join(co, name)))
	gittest.Git(t, co, "add", name)
	gittest.Git(t, co, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "link")
	gittest.Git(t, co, "push", "-q", "origin", "main")
}

func TestAnOutputDirThroughASymlinkIsRefusedBeforeAnythingIsWritten(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	pushSymlink(t, r, "meta", ".git")
	pushes := r.Pushes.Load()
	o := opts(r, t, snapshotDir(t, map[string]string{"pre-push": "#!/bin/sh\necho owned\n"}), l)
	o.OutputDir = "meta/hooks"
	_, err := Sync(context.Background(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "outputDir meta/hooks crosses the symbolic link meta on the branch; nothing was written")
	assert.NoFileExists(t, filepath.Join(o.WorkDir, ".git/hooks/pre-push"), "no hook was written into the clone")
	assert.Equal(t, pushes, r.Pushes.Load())
}

func TestAnOutputDirIsAPathNeverAPathspec(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.OutputDir = ":(top)codeasdata/main"
	res, err := Sync(context.Background(), o)
	require.NoError(t, err)
	assert.True(t, res.Changed, "the snapshot was committed, not dropped as a pathspec that matched nothing")
	assert.FileExists(t, filepath.Join(r.Checkout(t), ":(top)codeasdata/main/a.patch.json"))
}

// A branch git would refuse to create by name is refused before any git
// work, even where git itself lets it through: on an empty remote with
// CreateBranch, symbolic-ref and push take refs/heads/HEAD as it is.
func TestABranchGitRefusesIsRefusedBeforeAnyGitWork(t *testing.T) {
	for _, branch := range []string{"HEAD", "release.lock/1", "a/b.lock/c", "-x", "a..b"} {
		t.Run(branch, func(t *testing.T) {
			r, l := gittest.NewEmptyRemote(t), &leaktest.Recorder{}
			o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
			o.Branch, o.CreateBranch = branch, true
			_, err := Sync(context.Background(), o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf("branch %q: not a branch name git accepts", branch))
			assert.Zero(t, r.Pushes.Load(), "nothing was pushed")
			assert.NoDirExists(t, o.WorkDir, "no git work was done")
		})
	}
}

// A remote that echoes the login back in its message (git prints a
// text/plain answer as "remote: …" lines) gets no piece of it into the
// error: not the token split across lines, not the header's base64
// wrapped as MIME wraps it.
func TestARemoteThatEchoesTheLoginGetsNoneOfItPrinted(t *testing.T) {
	var basic string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		basic = strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		header := base64.StdEncoding.EncodeToString([]byte("Authorization: " + r.Header.Get("Authorization")))
		fmt.Fprintf(w, "denied for %s\n%s\nheaders:\n", token[:9], token[9:])
		for len(header) > 76 {
			fmt.Fprintln(w, header[:76])
			header = header[76:]
		}
		fmt.Fprintln(w, header)
	}))
	t.Cleanup(srv.Close)
	l := &leaktest.Recorder{}
	o := Options{RemoteURL: srv.URL + "/code.git", Branch: "main", OutputDir: "o", Snapshot: snapshotDir(t, map[string]string{"a": "{}"}),
		Message: "m", Token: secret.New(token), AllowHTTP: true, Logf: l.Logf}
	_, err := Sync(context.Background(), o)
	require.Error(t, err)
	require.NotEmpty(t, basic, "the remote was asked")
	require.Contains(t, err.Error(), "denied for", "the remote's message is shown")
	l.Add(err.Error())
	joined := strings.NewReplacer("\n", "", "remote: ", "", " ", "").Replace(err.Error())
	l.Add(joined)
	l.AssertClean(t, token, token[:9], token[9:], basic, basic[4:20])
}

// A branch git takes may hold a bidi override, a Hangul filler or a blank
// Braille pattern: every log line shows it escaped, "creating branch %q"
// (%q keeps U+3164) and "pushed" alike.
func TestEveryLogLineShowsTheBranchPrintable(t *testing.T) {
	for _, branch := range []string{"snap\u202eshots", "snap\u3164shots", "snap\u2800shots"} {
		r := gittest.NewRemote(t)
		var lines []string
		o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), &leaktest.Recorder{})
		o.Branch, o.CreateBranch = branch, true
		o.Logf = func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
		_, err := Sync(context.Background(), o)
		require.NoError(t, err)
		require.Len(t, lines, 2, "creating the branch, pushed")
		for _, line := range lines {
			assert.Equal(t, fielderr.Printable(line), line, "%q", branch)
			assert.NotContains(t, line, branch)
		}
	}
}

// A branch whose name holds an @ (git takes snap@2024) is found on the remote
// as it is: git's output is read with its addresses alone hidden, never a
// word with an @ in it (round-17 probe F1).
func TestABranchWithAnAtIsFoundOnTheRemote(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.Branch, o.CreateBranch = "snap@2024", true
	_, err := Sync(context.Background(), o)
	require.NoError(t, err)
	o = opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": `{"b":1}`}), l)
	o.Branch = "snap@2024"
	res, err := Sync(context.Background(), o)
	require.NoError(t, err, "the branch exists")
	assert.True(t, res.Changed)
	assert.Equal(t, 1, res.Attempts)
	assert.Equal(t, "snapshot codeasdata/main\nsnapshot codeasdata/main\nseed", gittest.Git(t, r.CheckoutBranch(t, "snap@2024"), "log", "--format=%s"))
}

// A branch whose name clashes with one the remote has (main/sub beside main,
// snap beside snap/a) is no race: the error names the other branch and says
// to choose another name, and nothing is tried again (round-18 probe F3).
func TestABranchClashingWithAnotherIsNamedNotRetried(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.Branch, o.CreateBranch = "main/sub", true
	_, err := Sync(context.Background(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `push to "main/sub": the remote has the branch "main", and git cannot keep "main/sub" beside it (a branch cannot be another's folder): choose another git.branch`)
	assert.Zero(t, l.Count("moved while the snapshot was committed"), "no race said")
}

// declineWith makes r's pre-receive hook run script, then refuse every
// push. A script that floods must end even when no one reads it any more
// (timeout 5 …), so that the test server's processes end with the test.
func declineWith(t *testing.T, r *gittest.Remote, script string) {
	t.Helper()
	hook := filepath.Join(r.Bare, "hooks", "pre-receive")
	require.NoError(t, os.MkdirAll(filepath.Dir(hook), 0o755))
	require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\n"+script+"\nexit 1\n"), 0o755))
}

// syncCost is how long Sync on r took, what it allocated, and its error.
func syncCost(t *testing.T, r *gittest.Remote) (time.Duration, uint64, error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := Sync(context.Background(), opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), &leaktest.Recorder{}))
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	return took, after.TotalAlloc - before.TotalAlloc, err
}

// A remote's words are read as its words, never as git's status: a hook
// declining a push with words git also says (non-fast-forward, 403, a
// ref that exists, "Operation too slow") fails once, showing the hook's
// message, and is not taken for a race, a refused login, a clash or a slow
// remote (round-24 probe F1).
func TestAHooksWordsAreNotReadAsGitsStatus(t *testing.T) {
	for _, tc := range []struct{ said, notSaid string }{
		{"policy: direct pushes are refused (no non-fast-forward either)", "moved"},
		{"commit message must name a ticket, e.g. OPS-4031", "refused the credentials"},
		{"pushes frozen: 'refs/heads/release' exists; cannot create tag", "cannot keep"},
		{"CI gate: Operation too slow to verify signatures", "bytes/s"},
	} {
		t.Run(tc.said, func(t *testing.T) {
			r, l := gittest.NewRemote(t), &leaktest.Recorder{}
			declineWith(t, r, "echo \""+tc.said+"\" >&2")
			_, err := Sync(context.Background(), opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.said, "the hook's own words")
			assert.Contains(t, err.Error(), "pre-receive hook declined")
			assert.NotContains(t, err.Error(), tc.notSaid)
			assert.Zero(t, l.Count("moved while the snapshot was committed"), "no race said")
		})
	}
}

// A remote writing without end (a hook's 9 MB of messages) stops git at 8
// MiB, soon, in bounded memory, saying so (round-24 probe F2); before, all
// of it was held and scrubbed, 1.75 s a MiB, past --timeout.
func TestARemoteWritingWithoutEndIsStoppedAtTheOutputLimit(t *testing.T) {
	r := gittest.NewRemote(t)
	declineWith(t, r, `timeout 5 sh -c "yes 'remote chatter line, again and again' | head -c 9000000 >&2"`)
	took, allocated, err := syncCost(t, r)
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 1024)
	assert.Contains(t, err.Error(), "git push: wrote more than 8 MiB (a remote that does not stop?): stopped; the first of it: remote: remote chatter line")
	assert.Less(t, took, 30*time.Second)
	assert.Less(t, allocated, uint64(128<<20), "bytes allocated")
}

// A failed command's megabytes of a remote's messages cost little to show:
// its error shows git's first and last words, scrubbed, the rest left out,
// the token nowhere (round-24 probe F2: 4 MB took 8.5 s and 80 MiB).
func TestAFailedCommandsLongOutputIsShownByItsEnds(t *testing.T) {
	r := gittest.NewRemote(t)
	declineWith(t, r, `timeout 5 sh -c "yes 'remote chatter line' | head -c 4000000 >&2"`+"\necho 'last: "+token+"' >&2")
	took, allocated, err := syncCost(t, r)
	require.Error(t, err)
	assert.Less(t, took, 10*time.Second)
	assert.Less(t, allocated, uint64(64<<20), "bytes allocated")
	assert.Less(t, len(err.Error()), 12<<10)
	assert.Contains(t, err.Error(), "bytes of git's output left out")
	assert.Contains(t, err.Error(), "pre-receive hook declined", "git's last words")
	assert.Contains(t, err.Error(), "remote: last: ***")
	assert.NotContains(t, err.Error(), token)
}

// inFront serves r through a proxy that answers what answer picks (a status
// and a plain-text body) itself, and passes the rest on.
func inFront(t *testing.T, r *gittest.Remote, answer func(*http.Request, []byte) (int, string)) string {
	t.Helper()
	target, err := url.Parse(r.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if status, said := answer(req, body); status != 0 {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(status)
			io.WriteString(w, said)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + target.Path
}

// The remote's default branch, its word, is scrubbed in an error as in the
// log: a server naming it after the token it was sent shows none of it
// when the fetch of that branch fails (round-25 probe F1).
func TestTheDefaultBranchsNameIsScrubbedInAnError(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	gittest.Git(t, r.Bare, "branch", "echo-"+token, "main")
	gittest.Git(t, r.Bare, "symbolic-ref", "HEAD", "refs/heads/echo-"+token)
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.Branch, o.CreateBranch = "feature", true
	o.RemoteURL = inFront(t, r, func(req *http.Request, body []byte) (int, string) {
		if req.Method == http.MethodPost && bytes.Contains(body, []byte("command=fetch")) {
			return http.StatusServiceUnavailable, "busy"
		}
		return 0, ""
	})
	_, err := Sync(context.Background(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `fetch branch "echo-***" of `)
	assert.NotContains(t, err.Error(), token)
	l.AssertClean(t, token)
}

// A server's error body, which git shows as remote: lines split at line
// feeds only, is its words after a CR too: never read as git's own
// (round-25 probe F2).
func TestAServersErrorBodyIsNeverReadAsGitsOwnLines(t *testing.T) {
	for _, body := range []string{
		"backend down (incident 12)\rfatal: Authentication failed for 'x'\n",
		"backend down\rerror: RPC failed; Operation too slow\n",
	} {
		r, l := gittest.NewRemote(t), &leaktest.Recorder{}
		o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
		o.RemoteURL = inFront(t, r, func(req *http.Request, _ []byte) (int, string) {
			if strings.HasSuffix(req.URL.Path, "/info/refs") {
				return http.StatusInternalServerError, body
			}
			return 0, ""
		})
		_, err := Sync(context.Background(), o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "backend down", "the server's words, shown")
		assert.NotContains(t, err.Error(), "refused the credentials", body)
		assert.NotContains(t, err.Error(), "bytes/s", body)
	}
}

// A repository the server says is not found may be one the token may not
// read (GitHub hides a private one so): the error says to check both
// (round-26 probe F1).
func TestARepositoryNotFoundSaysToCheckTheAddressAndTheToken(t *testing.T) {
	r, l := gittest.NewRemote(t), &leaktest.Recorder{}
	o := opts(r, t, snapshotDir(t, map[string]string{"a.patch.json": "{}"}), l)
	o.RemoteURL = inFront(t, r, func(req *http.Request, _ []byte) (int, string) {
		if strings.HasSuffix(req.URL.Path, "/info/refs") {
			return http.StatusNotFound, "Repository not found.\n"
		}
		return 0, ""
	})
	_, err := Sync(context.Background(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not found")
	assert.Contains(t, err.Error(), "(check git.repo, and that the git token may read this repository: a host hides a private repository from a token without access)")
}
