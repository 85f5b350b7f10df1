// Package snapshotpush is the git step of snapshot-push: every entry of the
// snapshot configuration that has a git section, committed and pushed in
// order, with a report that says what reached each remote. The first entry
// that fails stops the run: the ones before it stay pushed, the ones after
// it are not attempted, and the report says so.
package snapshotpush

import (
	"context"
	"fmt"
	"strings"
	"time"

	"dagger/lowcode-pipeline/internal/durationflag"
	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/gitsync"
	"dagger/lowcode-pipeline/internal/redact"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
)

// Entry is one folder to commit into one branch.
type Entry struct {
	Name      string `json:"name"`
	Remote    string `json:"remote"` // https address, without credentials
	Branch    string `json:"branch"`
	OutputDir string `json:"outputDir"`
	Snapshot  string `json:"snapshot"` // local folder with the snapshot's files
	Message   string `json:"message"`  // the commitMessage template
	Username  string `json:"username,omitempty"`
	TokenEnv  string `json:"tokenEnv,omitempty"` // environment variable holding its token
}

// Batch is the whole step.
type Batch struct {
	Entries        []Entry `json:"entries"`
	AuthorName     string  `json:"authorName,omitempty"`
	AuthorEmail    string  `json:"authorEmail,omitempty"`
	MaxAttempts    int     `json:"maxAttempts"`
	AllowEmpty     bool    `json:"allowEmpty,omitempty"`
	MaxDeleteRatio float64 `json:"maxDeleteRatio"`
	CreateBranch   bool    `json:"createBranch,omitempty"`
	CACert         string  `json:"caCert,omitempty"`
	Timeout        string  `json:"timeout"` // per entry, a Go duration
	AllowHTTP      bool    `json:"allowHttp,omitempty"`
}

// Outcomes an entry can have besides "failed: <reason>".
const (
	Pushed       = "pushed"
	Unchanged    = "unchanged"
	NotAttempted = "not attempted"
)

// Result is what happened to one entry.
type Result struct {
	Name      string `json:"name"`
	OutputDir string `json:"outputDir"`
	Branch    string `json:"branch"`
	Outcome   string `json:"outcome"` // pushed, unchanged, not attempted or failed: <reason> (failure)
	Changed   bool   `json:"changed"`
	Commit    string `json:"commit,omitempty"`
	Attempts  int    `json:"attempts"`
}

// Report lists every entry in order.
type Report struct {
	Entries []Result `json:"entries"`
}

// Failed says whether any entry failed.
func (r Report) Failed() bool {
	for _, e := range r.Entries {
		if strings.HasPrefix(e.Outcome, "failed") {
			return true
		}
	}
	return false
}

// Summary is the report in a few lines, one per entry, for an error and a
// terminal: names from the configuration and what a remote said are shown
// as fielderr.Printable shows them.
func (r Report) Summary() string {
	lines := make([]string, len(r.Entries))
	for i, e := range r.Entries {
		lines[i] = fmt.Sprintf("[%d] %s", i, fielderr.Printable(fmt.Sprintf("%s (%s → %s): %s", e.Name, e.OutputDir, e.Branch, e.Outcome)))
	}
	return strings.Join(lines, "\n")
}

// Run pushes the entries in order; getenv gives each entry's token.
func Run(ctx context.Context, b Batch, getenv func(string) string, now time.Time, logf func(string, ...any)) Report {
	report := Report{Entries: make([]Result, len(b.Entries))}
	timeout, err := durationflag.Parse("--timeout", b.Timeout)
	failed := false
	for i, e := range b.Entries {
		res := Result{Name: e.Name, OutputDir: e.OutputDir, Branch: e.Branch, Outcome: NotAttempted}
		switch {
		case failed:
		case err != nil:
			res.Outcome, failed = failure(err), true
		default:
			synced, serr := gitsync.Sync(ctx, gitsync.Options{
				RemoteURL: e.Remote, Branch: e.Branch, OutputDir: e.OutputDir, Snapshot: e.Snapshot,
				Message: snapshotconfig.RenderMessage(e.Message, now, e.OutputDir), Token: secret.New(getenv(e.TokenEnv)), Username: e.Username,
				AuthorName: b.AuthorName, AuthorEmail: b.AuthorEmail, MaxAttempts: b.MaxAttempts, AllowEmpty: b.AllowEmpty,
				MaxDeleteRatio: b.MaxDeleteRatio, CreateBranch: b.CreateBranch, CACert: b.CACert, Timeout: timeout,
				AllowHTTP: b.AllowHTTP, Logf: logf,
			})
			if serr != nil {
				res.Outcome, failed = failure(serr), true
				break
			}
			res.Outcome, res.Changed, res.Commit, res.Attempts = synced.Outcome(), synced.Changed, synced.Commit, synced.Attempts
		}
		report.Entries[i] = res
	}
	return report
}

// MaxReason bounds the bytes a failed entry's outcome repeats of its error.
const MaxReason = 600

// failure is a failed entry's outcome. Its reason may repeat what a remote
// said (a 403 body, a pre-receive hook's words, as git prints them) and JSON
// carries U+009B or U+202E raw: it is made fielderr.Printable here, once, so
// that the report's Summary, its JSON and the Outcome field all show it so.
func failure(err error) string {
	return "failed: " + fielderr.Printable(fielderr.Cut(err.Error(), MaxReason))
}

// NoReport is the error of a git step that exited with code and printed no
// report (its batch unreadable, the step stopped or crashed). It repeats of
// stderr only the lines the module's tools wrote for the user
// (fielderr.ToolLines: escaped), any address in them without its user-info
// or query: the rest may hold what git or a remote said, token included,
// and stays in the engine's log, where Dagger masks secrets.
func NoReport(code int, stderr string) error {
	said := fielderr.ToolLines(stderr)
	if len(said) == 0 {
		return fmt.Errorf("the git step exited %d without a report; its output is in the engine's log", code)
	}
	return fmt.Errorf("the git step exited %d without a report:\n%s", code, redact.Shown(strings.Join(said, "\n")))
}

// Auth is how one entry authenticates to its remote.
type Auth struct {
	Entry    Entry
	URLToken secret.Text // a token kept in git.repo, to pass as the entry's own secret
}

// EntryFor turns a configuration entry into a git step entry. The token and
// user name in git.repo are used unless given apart: a --git-token (in
// $GIT_TOKEN) wins over git.repo's, a --git-username over the URL's; the
// user name otherwise is git's default for tokens.
func EntryFor(i int, e snapshotconfig.Entry, snapshotDir, flagUsername string, flagToken bool) Auth {
	remote, user, token := e.Git.Remote()
	a := Auth{Entry: Entry{
		Name: e.Snapshooter.Name, Remote: remote, Branch: e.Git.Branch, OutputDir: e.Snapshooter.OutputDir,
		Snapshot: snapshotDir, Message: e.Git.CommitMessage, Username: user,
	}}
	if flagUsername != "" {
		a.Entry.Username = flagUsername
	}
	switch {
	case flagToken:
		a.Entry.TokenEnv = "GIT_TOKEN"
	case token != "":
		a.Entry.TokenEnv, a.URLToken = fmt.Sprintf("GIT_TOKEN_%d", i), secret.New(token)
	}
	return a
}
