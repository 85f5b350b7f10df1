// Package gitsync commits a snapshot into a git branch: check out the branch
// (creating it when asked), replace one folder with the snapshot, commit only
// when the tree changed, push; a push rejected because the branch moved is
// redone on the new tip, a bounded number of times, never forced. An empty
// snapshot and a commit that deletes most of the folder are refused unless
// allowed. The token reaches git only through an HTTP header in git's
// environment: never a URL, a file or an error.
package gitsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/secret"
)

// Defaults for Options' zero values.
const (
	DefaultUsername       = "x-access-token"
	DefaultAuthorName     = "lowcode-pipeline"
	DefaultAuthorEmail    = "lowcode-pipeline@users.noreply.invalid"
	DefaultMaxAttempts    = 5
	DefaultMaxDeleteRatio = 0.5
	DefaultTimeout        = 10 * time.Minute
	DefaultLowSpeedLimit  = 1000 // bytes per second
	DefaultLowSpeedTime   = time.Minute
)

// Options is one snapshot to commit.
type Options struct {
	RemoteURL string // https address, without credentials
	Branch    string
	OutputDir string      // folder of the repository the snapshot replaces
	Snapshot  string      // local folder holding the snapshot's files
	Message   string      // the rendered commit message
	Token     secret.Text // access token; none for a repository that needs none
	// Username goes with the token in HTTP Basic auth (most hosts accept any).
	Username                string
	AuthorName, AuthorEmail string
	MaxAttempts             int
	// AllowEmpty lets an empty snapshot delete every file of OutputDir.
	AllowEmpty bool
	// MaxDeleteRatio refuses a commit that deletes more than this share of
	// OutputDir's files (0 means the default; 1 lets any through).
	MaxDeleteRatio float64
	// CreateBranch creates a missing Branch from the default branch, or as
	// the first commit of an empty repository.
	CreateBranch bool
	// CACert is a PEM file of the CAs git trusts for https, instead of the
	// system's roots (a self-hosted server's private CA).
	CACert string
	// Timeout bounds the whole sync; a transfer slower than LowSpeedLimit
	// bytes per second for LowSpeedTime is given up earlier.
	Timeout       time.Duration
	LowSpeedLimit int
	LowSpeedTime  time.Duration
	AllowHTTP     bool   // plain http (local test servers only)
	WorkDir       string // where to clone; a temporary folder when empty
	Logf          func(format string, args ...any)

	beforePush func(attempt int) // tests: make the branch move
}

// Result says what happened to one branch.
type Result struct {
	OutputDir string `json:"outputDir"`
	Branch    string `json:"branch"`
	Changed   bool   `json:"changed"`
	Commit    string `json:"commit"`
	Attempts  int    `json:"attempts"`
}

// Outcome names what the run did: pushed, or unchanged.
func (r Result) Outcome() string {
	if r.Changed {
		return "pushed"
	}
	return "unchanged"
}

var (
	// ErrRejected is wrapped when the branch kept moving past MaxAttempts.
	ErrRejected = errors.New("push rejected: the branch moved")
	// ErrEmpty is wrapped when the snapshot holds no file and that is not allowed.
	ErrEmpty = errors.New("the snapshot is empty")
	// ErrTooManyDeletions is wrapped when the deletion guard refuses a commit.
	ErrTooManyDeletions = errors.New("the snapshot would delete too many files")
	// ErrNoBranch is wrapped when the branch does not exist and may not be created.
	ErrNoBranch = errors.New("the branch does not exist on the remote")
)

// Sync commits and pushes the snapshot when it changes the branch.
func Sync(ctx context.Context, o Options) (*Result, error) {
	o, err := withDefaults(o)
	if err != nil {
		return nil, err
	}
	g, err := newGit(o)
	if err != nil {
		return nil, err
	}
	snapshot, err := listFiles(o.Snapshot)
	if err != nil {
		return nil, fmt.Errorf("read the snapshot of %s: %w", o.OutputDir, err)
	}
	if len(snapshot) == 0 && !o.AllowEmpty {
		return nil, fmt.Errorf("%w: the platform CLI wrote no file into %s; nothing was pushed, so the folder on %q is not deleted (--allow-empty pushes the deletion)",
			ErrEmpty, o.OutputDir, o.Branch)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	dir, cleanup, err := workDir(o)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	res := &Result{OutputDir: o.OutputDir, Branch: o.Branch}
	if err := g.checkout(ctx, dir, o); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		res.Attempts = attempt
		changed, err := g.stage(ctx, dir, o, snapshot, attempt)
		if err != nil {
			return nil, err
		}
		if !changed {
			res.Commit = g.head(ctx, dir)
			o.Logf("%s: no change in %s, nothing committed", o.Branch, o.OutputDir)
			return res, nil
		}
		if _, err := g.run(ctx, dir, "-c", "user.name="+o.AuthorName, "-c", "user.email="+o.AuthorEmail,
			"commit", "--quiet", "--no-verify", "-m", o.Message); err != nil {
			return nil, err
		}
		if o.beforePush != nil {
			o.beforePush(attempt)
		}
		out, err := g.run(ctx, dir, "push", "--porcelain", "origin", "HEAD:refs/heads/"+o.Branch)
		if err == nil {
			res.Changed = true
			res.Commit = g.head(ctx, dir)
			o.Logf("%s: pushed %s (%s)", o.Branch, shortSHA(res.Commit), o.OutputDir)
			return res, nil
		}
		said := gitsOwn(out + "\n" + err.Error())
		// the ref that exists is in receive-pack's own remote: line; git's
		// status says the ref could not be updated (a hook declining says so)
		if clash := branchClash.FindStringSubmatch(out); clash != nil && strings.Contains(said, "(failed to update ref)") {
			// no race: another branch's name holds this one's as a folder,
			// or this one's holds it, and git keeps branches as files
			return nil, fmt.Errorf("push to %q: the remote has the branch %q, and git cannot keep %q beside it (a branch cannot be another's folder): choose another git.branch",
				o.Branch, clash[1], o.Branch)
		}
		if !rejected(said) {
			return nil, fmt.Errorf("push to %q: %w%s", o.Branch, err, authHint(err))
		}
		if attempt >= o.MaxAttempts {
			return nil, fmt.Errorf("%w %d times in a row; nothing was forced: re-run the snapshot", ErrRejected, attempt)
		}
		o.Logf("%s moved while the snapshot was committed (attempt %d of %d): applying it again on the new tip", o.Branch, attempt, o.MaxAttempts)
	}
}

// workDir is where the branch is checked out: o.WorkDir, or a temporary
// folder that cleanup removes.
func workDir(o Options) (dir string, cleanup func(), err error) {
	if o.WorkDir != "" {
		return o.WorkDir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "gitsync-")
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(tmp, "repo"), func() { os.RemoveAll(tmp) }, nil
}

// stage puts the snapshot in the index on the branch's tip (fetched anew
// after a rejected push) and says whether the tree changed.
func (g *git) stage(ctx context.Context, dir string, o Options, snapshot map[string]bool, attempt int) (changed bool, err error) {
	if attempt > 1 {
		if _, err := g.run(ctx, dir, "fetch", "--quiet", "--depth", "1", "origin", "refs/heads/"+o.Branch); err != nil {
			return false, fmt.Errorf("fetch the new tip of %q: %w", o.Branch, err)
		}
		if _, err := g.run(ctx, dir, "reset", "--quiet", "--hard", "FETCH_HEAD"); err != nil {
			return false, err
		}
	}
	if len(snapshot) > 0 {
		if err := g.guardDeletions(ctx, dir, o, snapshot); err != nil {
			return false, err
		}
	}
	if err := replace(dir, o.OutputDir, o.Snapshot); err != nil {
		return false, err
	}
	if _, err := g.run(ctx, dir, "add", "--all", "--", o.OutputDir); err != nil {
		return false, err
	}
	// diff --quiet exits 1 when the index differs from HEAD; were it to fail
	// otherwise (the time limit), the commit that follows fails the same way
	_, err = g.run(ctx, dir, "diff", "--cached", "--quiet")
	return err != nil, nil
}

// withDefaults fills in zero values and refuses values that make no sense.
func withDefaults(o Options) (Options, error) {
	switch {
	case o.MaxAttempts < 0:
		return o, fmt.Errorf("max attempts %d: must be at least 1", o.MaxAttempts)
	case o.MaxDeleteRatio < 0 || o.MaxDeleteRatio > 1:
		return o, fmt.Errorf("max delete ratio %g: must be above 0 and at most 1 (1 lets any deletion through)", o.MaxDeleteRatio)
	case o.Timeout < 0 || o.LowSpeedTime < 0 || o.LowSpeedLimit < 0:
		return o, errors.New("time limits must be positive")
	}
	if o.Username == "" {
		o.Username = DefaultUsername
	}
	if o.AuthorName == "" {
		o.AuthorName = DefaultAuthorName
	}
	if o.AuthorEmail == "" {
		o.AuthorEmail = DefaultAuthorEmail
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.MaxDeleteRatio == 0 {
		o.MaxDeleteRatio = DefaultMaxDeleteRatio
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.LowSpeedLimit == 0 {
		o.LowSpeedLimit = DefaultLowSpeedLimit
	}
	if o.LowSpeedTime == 0 {
		o.LowSpeedTime = DefaultLowSpeedTime
	}
	o.Logf = printableLogf(o.Logf)
	return o, nil
}

// printableLogf is logf with every line made fielderr.Printable, at this
// one place: a line names the branch, which may hold a bidi override or a
// character drawn as nothing (git takes U+202E, U+3164), and it reaches the
// engine's log a CI shows.
func printableLogf(logf func(string, ...any)) func(string, ...any) {
	if logf == nil {
		return func(string, ...any) {}
	}
	return func(format string, args ...any) {
		logf("%s", fielderr.Printable(fmt.Sprintf(format, args...)))
	}
}

// guardDeletions refuses a commit that would delete more than
// MaxDeleteRatio of the files the branch holds under OutputDir.
func (g *git) guardDeletions(ctx context.Context, dir string, o Options, snapshot map[string]bool) error {
	out, err := g.run(ctx, dir, "ls-files", "-z", "--", o.OutputDir)
	if err != nil {
		return err
	}
	prefix := strings.TrimSuffix(filepathToSlash(o.OutputDir), "/") + "/"
	var before, deleted int
	for _, p := range strings.Split(out, "\x00") {
		if p == "" {
			continue
		}
		before++
		if !snapshot[strings.TrimPrefix(p, prefix)] {
			deleted++
		}
	}
	if before > 0 && float64(deleted)/float64(before) > o.MaxDeleteRatio {
		return fmt.Errorf("%w: %s on %q holds %d files, the snapshot %d, so the commit would delete %d (%.0f%%), more than --max-delete-ratio %g allows; nothing was pushed",
			ErrTooManyDeletions, o.OutputDir, o.Branch, before, len(snapshot), deleted, 100*float64(deleted)/float64(before), o.MaxDeleteRatio)
	}
	return nil
}

func filepathToSlash(p string) string { return filepath.ToSlash(filepath.Clean(p)) }

// listFiles lists the regular files under dir, slash-separated and relative.
func listFiles(dir string) (map[string]bool, error) {
	files := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	return files, err
}

// branchClash is a remote's refusal of a branch whose name clashes with an
// existing one's (main beside main/sub): git's "cannot lock ref
// 'refs/heads/main/sub': 'refs/heads/main' exists; cannot create …".
var branchClash = regexp.MustCompile(`'refs/heads/([^']+)' exists; cannot create`)

// gitsOwn is git's output without the lines a remote wrote (its hooks', its
// server's: git starts each with "remote:"), so that what git itself says
// is read, never a remote's words that happen to hold the same ones (a hook
// declining a push with "non-fast-forward" in its message, "403" in a
// ticket number).
func gitsOwn(out string) string {
	// split at line feeds alone: a CR inside a remote's line (a server's
	// error body, which git prefixes once a line) starts no line of git's
	lines := strings.Split(out, "\n")
	own := lines[:0]
	for _, l := range lines {
		// a remote's line, or git's first line an error prefixed (git push: remote: …)
		if !strings.HasPrefix(strings.TrimLeft(l, " \t"), "remote:") && !strings.Contains(l, ": remote:") {
			own = append(own, l)
		}
	}
	return strings.Join(own, "\n")
}

func rejected(out string) bool {
	return strings.Contains(out, "[rejected]") || strings.Contains(out, "non-fast-forward") ||
		strings.Contains(out, "fetch first") || strings.Contains(out, "[remote rejected]") && strings.Contains(out, "cannot lock ref")
}

// authHint explains git's words for a refused or missing token.
func authHint(err error) string {
	msg := gitsOwn(err.Error())
	if strings.Contains(msg, "could not read Username") || strings.Contains(msg, "Authentication failed") ||
		strings.Contains(msg, "returned error: 403") {
		return " (the server refused the credentials: check the git token and that it may read and push this repository)"
	}
	if strings.Contains(msg, "fatal: repository") && strings.Contains(msg, "not found") {
		// GitHub, GitLab answer so for a private repository the token may not read
		return " (check git.repo, and that the git token may read this repository: a host hides a private repository from a token without access)"
	}
	return ""
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// replace makes dir/outputDir hold exactly the snapshot's files: what the
// snapshot dropped disappears, nothing outside the folder is touched.
func replace(dir, outputDir, snapshot string) error {
	target := filepath.Join(dir, filepath.FromSlash(outputDir))
	if err := insideRepo(dir, target); err != nil {
		return err
	}
	if err := os.RemoveAll(target); err != nil {
		return err
	}
	return filepath.WalkDir(snapshot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(snapshot, p)
		dst := filepath.Join(target, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, data, info.Mode().Perm())
		}
		return fmt.Errorf("snapshot file %s is not a regular file or folder", rel)
	})
}

// insideRepo refuses an outputDir any of whose existing components, in the
// branch checked out, is a symbolic link: even one that stays inside the
// repository (meta -> .git) would let the snapshot write where git reads
// its own files (.git/hooks), before git add could refuse anything.
func insideRepo(dir, target string) error {
	rel, err := filepath.Rel(dir, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("outputDir %s is not inside the repository", filepath.ToSlash(rel))
	}
	p := dir
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			rp, _ := filepath.Rel(dir, p)
			return fmt.Errorf("outputDir %s crosses the symbolic link %s on the branch; nothing was written", filepath.ToSlash(rel), filepath.ToSlash(rp))
		}
	}
	return nil
}
