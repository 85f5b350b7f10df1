// Package gitsync commits a snapshot into a git branch: clone the branch,
// replace one folder with the snapshot, commit only when the tree changed,
// push; a push rejected because the branch moved is redone on the new tip, a
// bounded number of times, never forced. The token reaches git only through
// an HTTP header in git's environment: never a URL, a file or an error.
package gitsync

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Defaults for Options' zero values.
const (
	DefaultUsername    = "x-access-token"
	DefaultAuthorName  = "lowcode-pipeline"
	DefaultAuthorEmail = "lowcode-pipeline@users.noreply.invalid"
	DefaultMaxAttempts = 5
)

// Options is one snapshot to commit.
type Options struct {
	RemoteURL string // https address, without credentials
	Branch    string
	OutputDir string // folder of the repository the snapshot replaces
	Snapshot  string // local folder holding the snapshot's files
	Message   string // the rendered commit message
	Token     string // access token; empty for a repository that needs none
	// Username goes with the token in HTTP Basic auth (most hosts accept any).
	Username                string
	AuthorName, AuthorEmail string
	MaxAttempts             int
	AllowHTTP               bool   // plain http (local test servers only)
	WorkDir                 string // where to clone; a temporary folder when empty
	Logf                    func(format string, args ...any)

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

// ErrRejected is wrapped when the branch kept moving past MaxAttempts.
var ErrRejected = errors.New("push rejected: the branch moved")

// Sync commits and pushes the snapshot when it changes the branch.
func Sync(ctx context.Context, o Options) (*Result, error) {
	o = withDefaults(o)
	g, err := newGit(o)
	if err != nil {
		return nil, err
	}
	dir := o.WorkDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "gitsync-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "repo")
	}
	res := &Result{OutputDir: o.OutputDir, Branch: o.Branch}
	if _, err := g.run(ctx, "", "clone", "--quiet", "--branch", o.Branch, "--single-branch", "--no-tags", "--depth", "1", o.RemoteURL, dir); err != nil {
		return nil, fmt.Errorf("clone branch %q of %s: %w%s", o.Branch, o.RemoteURL, err, authHint(err))
	}
	for attempt := 1; ; attempt++ {
		res.Attempts = attempt
		if attempt > 1 {
			if _, err := g.run(ctx, dir, "fetch", "--quiet", "--depth", "1", "origin", o.Branch); err != nil {
				return nil, fmt.Errorf("fetch the new tip of %q: %w", o.Branch, err)
			}
			if _, err := g.run(ctx, dir, "reset", "--quiet", "--hard", "FETCH_HEAD"); err != nil {
				return nil, err
			}
		}
		if err := replace(dir, o.OutputDir, o.Snapshot); err != nil {
			return nil, err
		}
		if _, err := g.run(ctx, dir, "add", "--all", "--", o.OutputDir); err != nil {
			return nil, err
		}
		if _, err := g.run(ctx, dir, "diff", "--cached", "--quiet"); err == nil {
			res.Commit, err = g.head(ctx, dir)
			o.Logf("%s: no change in %s, nothing committed", o.Branch, o.OutputDir)
			return res, err
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
			res.Commit, err = g.head(ctx, dir)
			o.Logf("%s: pushed %s (%s)", o.Branch, shortSHA(res.Commit), o.OutputDir)
			return res, err
		}
		if !rejected(out + err.Error()) {
			return nil, fmt.Errorf("push to %q: %w%s", o.Branch, err, authHint(err))
		}
		if attempt >= o.MaxAttempts {
			return nil, fmt.Errorf("%w %d times in a row; nothing was forced: re-run the snapshot", ErrRejected, attempt)
		}
		o.Logf("%s moved while the snapshot was committed (attempt %d of %d): applying it again on the new tip", o.Branch, attempt, o.MaxAttempts)
	}
}

func withDefaults(o Options) Options {
	if o.Username == "" {
		o.Username = DefaultUsername
	}
	if o.AuthorName == "" {
		o.AuthorName = DefaultAuthorName
	}
	if o.AuthorEmail == "" {
		o.AuthorEmail = DefaultAuthorEmail
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

func rejected(out string) bool {
	return strings.Contains(out, "[rejected]") || strings.Contains(out, "non-fast-forward") ||
		strings.Contains(out, "fetch first") || strings.Contains(out, "[remote rejected]") && strings.Contains(out, "cannot lock ref")
}

// authHint explains git's words for a refused or missing token.
func authHint(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "could not read Username") || strings.Contains(msg, "Authentication failed") ||
		strings.Contains(msg, "403") {
		return " (the server refused the credentials: check the git token and that it may read and push this repository)"
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

// insideRepo refuses an output folder that a symbolic link in the clone
// would send outside it.
func insideRepo(dir, target string) error {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	for p := filepath.Dir(target); ; p = filepath.Dir(p) {
		if resolved, err := filepath.EvalSymlinks(p); err == nil {
			if resolved != root && !strings.HasPrefix(resolved, root+string(filepath.Separator)) {
				return fmt.Errorf("outputDir %s leaves the repository through a symbolic link", target)
			}
			return nil
		}
		if p == dir || p == filepath.Dir(p) {
			return nil
		}
	}
}

type git struct {
	env     []string
	secrets []string
}

func newGit(o Options) (*git, error) {
	u, err := url.Parse(o.RemoteURL)
	switch {
	case err != nil:
		return nil, fmt.Errorf("repository address is not a URL")
	case u.User != nil:
		return nil, errors.New("repository address carries credentials: pass the token separately")
	case u.Scheme != "https" && !(u.Scheme == "http" && o.AllowHTTP):
		return nil, fmt.Errorf("repository %s: must be https", o.RemoteURL)
	case o.Branch == "", o.OutputDir == "", o.Snapshot == "":
		return nil, errors.New("branch, outputDir and snapshot folder are required")
	}
	env := append(os.Environ(),
		"GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=credential.helper", "GIT_CONFIG_VALUE_0=",
	)
	g := &git{}
	if o.Token != "" {
		basic := base64.StdEncoding.EncodeToString([]byte(o.Username + ":" + o.Token))
		env = append(env, "GIT_CONFIG_KEY_1=http.extraHeader", "GIT_CONFIG_VALUE_1=Authorization: Basic "+basic)
		g.secrets = []string{o.Token, basic}
	} else {
		env = append(env, "GIT_CONFIG_KEY_1=core.askPass", "GIT_CONFIG_VALUE_1=")
	}
	g.env = env
	return g, nil
}

func (g *git) run(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = g.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := g.scrub(strings.TrimSpace(out.String()))
	if err != nil {
		return text, fmt.Errorf("git %s: %s", args[0], orExit(text, err))
	}
	return text, nil
}

func orExit(text string, err error) string {
	if text != "" {
		return text
	}
	return err.Error()
}

func (g *git) head(ctx context.Context, dir string) (string, error) {
	return g.run(ctx, dir, "rev-parse", "HEAD")
}

func (g *git) scrub(s string) string {
	for _, secret := range g.secrets {
		s = strings.ReplaceAll(s, secret, "***")
	}
	return s
}
