package snapshotpush

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
	"dagger/lowcode-pipeline/internal/testsupport/gittest"
	"dagger/lowcode-pipeline/internal/testsupport/leaktest"
)

func snapshot(t *testing.T, files ...string) string {
	dir := t.TempDir()
	for _, f := range files {
		gittest.Write(t, filepath.Join(dir, f), "{}")
	}
	return dir
}

func env(k string) string {
	if k == "GIT_TOKEN" {
		return gittest.Token
	}
	return ""
}

func TestTheEntryAfterAFailureIsNotAttemptedAndTheReportSaysSo(t *testing.T) {
	first, third := gittest.NewRemote(t), gittest.NewRemote(t)
	l := &leaktest.Recorder{}
	b := Batch{
		MaxAttempts: 5, MaxDeleteRatio: 1, Timeout: "1m", AllowHTTP: true,
		Entries: []Entry{
			{Name: "orders", Remote: first.URL, Branch: "main", OutputDir: "codeasdata/main", Snapshot: snapshot(t, "a.patch.json"), Message: "snapshot {folder}", TokenEnv: "GIT_TOKEN"},
			{Name: "empty", Remote: first.URL, Branch: "main", OutputDir: "codeasdata/other", Snapshot: snapshot(t), Message: "m", TokenEnv: "GIT_TOKEN"},
			{Name: "never", Remote: third.URL, Branch: "main", OutputDir: "codeasdata/main", Snapshot: snapshot(t, "b.patch.json"), Message: "m", TokenEnv: "GIT_TOKEN"},
		},
	}
	report := Run(context.Background(), b, env, time.Now(), l.Logf)
	require.Len(t, report.Entries, 3)
	assert.Equal(t, Pushed, report.Entries[0].Outcome)
	assert.Len(t, report.Entries[0].Commit, 40)
	assert.True(t, strings.HasPrefix(report.Entries[1].Outcome, "failed: the snapshot is empty"), report.Entries[1].Outcome)
	assert.Equal(t, NotAttempted, report.Entries[2].Outcome)
	assert.True(t, report.Failed())

	assert.Equal(t, "snapshot codeasdata/main", gittest.Git(t, first.Checkout(t), "log", "-1", "--format=%s"), "entry 0 stays pushed")
	assert.Zero(t, third.Pushes.Load(), "entry 2 never reached its remote")
	assert.Contains(t, report.Summary(), "[2] never (codeasdata/main → main): not attempted")

	data, err := json.Marshal(report)
	require.NoError(t, err)
	assert.NotContains(t, string(data), gittest.Token)
	l.AssertClean(t, gittest.Token)
}

func TestAWrongTimeoutFailsTheFirstEntryWithoutGit(t *testing.T) {
	r := gittest.NewRemote(t)
	report := Run(context.Background(), Batch{Timeout: "never", MaxAttempts: 1, Entries: []Entry{
		{Name: "a", Remote: r.URL, Branch: "main", OutputDir: "o", Snapshot: snapshot(t, "x"), TokenEnv: "GIT_TOKEN"},
		{Name: "b", Remote: r.URL, Branch: "main", OutputDir: "p", Snapshot: snapshot(t, "x"), TokenEnv: "GIT_TOKEN"},
	}}, env, time.Now(), nil)
	assert.Equal(t, `failed: --timeout "never": use a positive Go duration such as 500ms, 10s or 2m`, report.Entries[0].Outcome)
	assert.Equal(t, NotAttempted, report.Entries[1].Outcome)
	assert.Zero(t, r.Pushes.Load())
}

func TestEntryForTakesCredentialsFromTheURLUnlessGivenApart(t *testing.T) {
	entries, err := snapshotconfig.Parse([]byte(`[
		{"snapshooter": {"name": "bb", "rootTags": ["00000000000000000001"], "outputDir": "a"},
		 "git": {"repo": "https://x-token-auth:T0KEN@bitbucket.org/t/r.git", "branch": "main", "commitMessage": "m {folder}"}},
		{"snapshooter": {"name": "plain", "rootTags": ["00000000000000000001"], "outputDir": "b"},
		 "git": {"repo": "https://git.example.com/t/r.git", "branch": "dev", "commitMessage": "m"}}]`))
	require.NoError(t, err)

	a := EntryFor(0, entries[0], "/snapshots/0", "", false)
	assert.Equal(t, Entry{Name: "bb", Remote: "https://bitbucket.org/t/r.git", Branch: "main", OutputDir: "a", Snapshot: "/snapshots/0",
		Message: "m {folder}", Username: "x-token-auth", TokenEnv: "GIT_TOKEN_0"}, a.Entry, "the URL's user name is the one git uses")
	assert.Equal(t, "T0KEN", a.URLToken.Reveal())

	a = EntryFor(0, entries[0], "/snapshots/0", "oauth2", true)
	assert.Equal(t, "oauth2", a.Entry.Username, "--git-username overrides")
	assert.Equal(t, "GIT_TOKEN", a.Entry.TokenEnv, "--git-token wins")
	assert.False(t, a.URLToken.Set())

	a = EntryFor(1, entries[1], "/snapshots/1", "", false)
	assert.Empty(t, a.Entry.TokenEnv, "no token anywhere: none is sent")
	assert.Empty(t, a.Entry.Username)
}

// A remote's message (a pre-receive hook, a 403 body) and the
// configuration's names reach a terminal through Summary: nothing in them
// can move the cursor, end a line or reverse the text.
func TestSummaryShowsNoCharacterATerminalWouldObey(t *testing.T) {
	for _, tc := range []struct{ name, raw, shown string }{
		{"an escape sequence", "\x1b[2Jcleared", `\x1b[2Jcleared`},
		{"a carriage return", "ok\rforged", `ok\rforged`},
		{"a line break", "one\ntwo", `one\ntwo`},
		{"a bell, a backspace and a delete", "\a\b\x7f", `\a\b\x7f`},
		{"a C1 control sequence introducer", "\u009b2J", `\u009b2J`},
		{"a right-to-left override", "abc\u202edef", `abc\u202edef`},
		{"an isolate", "abc\u2066def", `abc\u2066def`},
		{"a line separator", "abc\u2028def", `abc\u2028def`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Report{Entries: []Result{{Name: tc.raw, OutputDir: tc.raw, Branch: tc.raw, Outcome: "failed: remote: " + tc.raw}}}
			assert.Equal(t, fmt.Sprintf("[0] %[1]s (%[1]s → %[1]s): failed: remote: %[1]s", tc.shown), r.Summary())
		})
	}
}

// P1 (issue #65): what a remote answers reaches the outcome escaped, once,
// so that the Outcome field and the report's JSON (which allows U+009B,
// U+202E, U+0085 and DEL raw in a string) show it as Summary does.
func TestARemotesWordsAreEscapedInTheOutcomeItself(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "denied \u009b2J\u009b31mFORGED\u202eexe.txt \u0085 DEL\x7f \x1b[2K")
	}))
	t.Cleanup(srv.Close)
	report := Run(context.Background(), Batch{MaxAttempts: 1, MaxDeleteRatio: 0.5, Timeout: "30s", AllowHTTP: true, Entries: []Entry{
		{Name: "app", Remote: srv.URL + "/org/repo.git", Branch: "main", OutputDir: "snapshot", Snapshot: snapshot(t, "a.json"), Message: "m", TokenEnv: "GIT_TOKEN"},
	}}, env, time.Now(), t.Logf)
	require.True(t, report.Failed())
	outcome := report.Entries[0].Outcome
	assert.Contains(t, outcome, `denied \u009b2J\u009b31mFORGED\u202eexe.txt \u0085 DEL\x7f \x1b[2K`, "the remote's words, escaped")
	assert.Equal(t, fielderr.Printable(outcome), outcome)
	assert.Contains(t, report.Summary(), `\u009b2J`, "Summary shows it as the outcome does, not escaped twice")
	assert.NotContains(t, report.Summary(), `\\u009b2J`)
	data, err := json.Marshal(report)
	require.NoError(t, err)
	for _, c := range []string{"\u009b", "\u202e", "\u0085", "\x7f", "\x1b"} {
		assert.NotContains(t, string(data), c, "%U", []rune(c)[0])
	}
}

// A git step that printed no report: its error repeats only the lines our
// tool wrote, escaped, an address in them without its secrets, never what
// git or a remote wrote (an echoed token), which the engine's log masks.
func TestAStepWithoutAReportRepeatsOnlyTheToolsOwnLines(t *testing.T) {
	for _, tc := range []struct{ name, stderr, want string }{
		{"the tool's line, escaped", "2024/01/01 remote: " + gittest.Token + "\nsnapshot-push: -batch: bad \x1b[2Jjson\u202e\n",
			"the git step exited 2 without a report:\nsnapshot-push: -batch: bad \\x1b[2Jjson\\u202e"},
		{"a time limit's line", "lowcode-pipeline: the git step did not finish within 5m, the time limit of one step: stopped\n",
			"the git step exited 124 without a report:\nlowcode-pipeline: the git step did not finish"},
		{"an address without its query", "snapshot-push: -batch: open https://g.example.com/r.git?private_token=" + gittest.Token + " (no such file)\n",
			"snapshot-push: -batch: open https://g.example.com/r.git (no such file)"},
		{"nothing of ours", "panic: " + gittest.Token + "\n\x1b[31mgoroutine 1\n", "without a report; its output is in the engine's log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := 2
			if strings.Contains(tc.stderr, "time limit") {
				code = 124
			}
			err := NoReport(code, tc.stderr)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), gittest.Token)
			for _, line := range strings.Split(err.Error(), "\n") {
				assert.Equal(t, fielderr.Printable(line), line)
			}
		})
	}
}
