package gitsync

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/gitref"
	"dagger/lowcode-pipeline/internal/redact"
	"dagger/lowcode-pipeline/internal/secret"
)

type git struct {
	env []string // all but the login's header: see environ
	// auth is the login's header, the value of git's config entry authAt
	// (http.extraHeader); scrubber masks its secrets in what git prints.
	auth     secret.Text
	authAt   int
	scrubber redact.Scrubber
	timeout  time.Duration
	lowSpeed string // git's low-speed limit, as an error names it
}

func newGit(o Options) (*git, error) {
	u, err := url.Parse(o.RemoteURL)
	switch {
	case err != nil:
		return nil, fmt.Errorf("repository address is not a URL")
	case u.User != nil:
		return nil, errors.New("repository address carries credentials: pass the token separately")
	case u.Scheme != "https" && !(u.Scheme == "http" && o.AllowHTTP):
		return nil, fmt.Errorf("repository %s: must be https", redact.String(o.RemoteURL))
	case o.Branch == "", o.OutputDir == "", o.Snapshot == "":
		return nil, errors.New("branch, outputDir and snapshot folder are required")
	}
	// git itself lets some through: symbolic-ref and push take refs/heads/HEAD
	if err := gitref.CheckBranch(o.Branch); err != nil {
		return nil, fmt.Errorf("branch %s: %w", fielderr.Quote(o.Branch), err)
	}
	config := [][2]string{
		{"credential.helper", ""},
		{"http.lowSpeedLimit", strconv.Itoa(o.LowSpeedLimit)},
		{"http.lowSpeedTime", strconv.Itoa(max(1, int(o.LowSpeedTime/time.Second)))},
	}
	g := &git{timeout: o.Timeout, lowSpeed: fmt.Sprintf("%d bytes/s for %s", o.LowSpeedLimit, o.LowSpeedTime)}
	if o.Token.Set() {
		basic := base64.StdEncoding.EncodeToString([]byte(o.Username + ":" + o.Token.Reveal()))
		g.auth = secret.New("Authorization: Basic " + basic)
		g.scrubber = redact.NewScrubber(o.Token, secret.New(basic))
	} else {
		config = append(config, [2]string{"core.askPass", ""})
	}
	if o.CACert != "" {
		if _, err := os.Stat(o.CACert); err != nil {
			return nil, fmt.Errorf("CA certificate for git: %w", err)
		}
		config = append(config, [2]string{"http.sslCAInfo", o.CACert})
	}
	env := os.Environ()
	if o.CACert != "" {
		// GIT_SSL_CAINFO outranks http.sslCAInfo: set both, so an inherited one cannot win.
		env = append(slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, "GIT_SSL_CAINFO=") }), "GIT_SSL_CAINFO="+o.CACert)
	}
	entries := len(config) // and the login's header, last
	if g.auth.Set() {
		entries++
	}
	// GIT_LITERAL_PATHSPECS: an outputDir is a path, never a pathspec (":(top)x", "*").
	g.env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_LITERAL_PATHSPECS=1",
		"GIT_CONFIG_COUNT="+strconv.Itoa(entries))
	for i, kv := range config {
		g.env = append(g.env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	if g.auth.Set() {
		g.authAt = len(config)
		g.env = append(g.env, fmt.Sprintf("GIT_CONFIG_KEY_%d=http.extraHeader", g.authAt))
	}
	return g, nil
}

// environ is git's environment: g.env and, with a token, the login's header,
// which g holds as a secret.Text so that no printed git shows it.
func (g *git) environ() []string {
	if !g.auth.Set() {
		return g.env
	}
	return append(slices.Clip(g.env), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", g.authAt, g.auth.Reveal()))
}

// maxGitOutput bounds what one git command may write (refs, files, a
// remote's messages): a remote that writes without end stops the command
// there, not this process's memory, and what is scrubbed stays bounded.
const maxGitOutput = 8 << 20

// cappedOutput is git's output, up to maxGitOutput: past it, writing fails
// and stop ends git at once. The buffer is a field, not embedded: io.Copy
// would take an embedded bytes.Buffer's ReadFrom, past Write.
type cappedOutput struct {
	buf  bytes.Buffer
	stop func()
	over bool
}

func (c *cappedOutput) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > maxGitOutput {
		c.over = true
		c.stop()
		return 0, errors.New("git's output is over its limit")
	}
	return c.buf.Write(p)
}

func (c *cappedOutput) String() string { return c.buf.String() }

func (g *git) run(ctx context.Context, dir string, args ...string) (string, error) {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := exec.CommandContext(runCtx, "git", args...)
	cmd.Dir = dir
	cmd.Env = g.environ()
	// At the time limit, end git and the helpers it started (git-remote-https
	// holds the output pipe open), not git alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out := &cappedOutput{stop: stop}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	if out.over {
		first, _ := g.scrubber.ScrubAtMost(out.String(), 300)
		return "", fmt.Errorf("git %s: wrote more than %d MiB (a remote that does not stop?): stopped; the first of it: %s", args[0], maxGitOutput>>20, redact.URLsIn(first))
	}
	raw := strings.TrimSpace(out.String())
	if err == nil {
		// read by the caller (refs, files, a commit), never shown as it is:
		// what is shown of it is scrubbed where it is shown
		return raw, nil
	}
	text := g.shown(raw)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return text, fmt.Errorf("git %s: stopped by the time limit (--timeout %s)", args[0], g.timeout)
	case strings.Contains(gitsOwn(text), "Operation too slow"):
		return text, fmt.Errorf("git %s: the remote sent less than %s (git's http.lowSpeedLimit/lowSpeedTime): %s", args[0], g.lowSpeed, text)
	}
	return text, fmt.Errorf("git %s: %s", args[0], orExit(text, err))
}

func orExit(text string, err error) string {
	if text != "" {
		return text
	}
	return err.Error()
}

// head is the commit checked out, or "" on a branch with no commit yet.
func (g *git) head(ctx context.Context, dir string) string {
	out, err := g.run(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD")
	if err != nil {
		return ""
	}
	return out
}

// scrub is git's output without the login's secrets, in any spelling a
// remote may echo them in, and with every address shown as redact shows it.
func (g *git) scrub(s string) string {
	return redact.URLsIn(g.scrubber.Scrub(s))
}

// shownEnds is how much of the start and of the end of a failed command's
// output an error shows: what git said first and last (its fatal line, a
// push's status). Scrubbing costs about 2 s a MiB, so a remote's megabytes
// of messages are not scrubbed whole to be cut after; shownMargin more of
// the end is scrubbed and dropped, so that no spelling of the token the
// cut splits (a sequence of at most 512 characters, gaps of 1 KiB) shows.
const (
	shownEnds   = 4 << 10
	shownMargin = 60 << 10
)

// shown is raw, a failed command's output, as its error shows it: scrubbed,
// and when long its start and its end with what lies between left out.
func (g *git) shown(raw string) string {
	if len(raw) <= 2*shownEnds+shownMargin {
		return g.scrub(raw)
	}
	head, _ := g.scrubber.ScrubAtMost(raw, shownEnds)
	tail := g.scrubber.Scrub(raw[len(raw)-shownEnds-shownMargin:])
	tail = tail[max(0, len(tail)-shownEnds):]
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:] // from a line's start
	}
	return redact.URLsIn(head) + fmt.Sprintf("\n… (%d bytes of git's output left out) …\n", len(raw)-len(head)-len(tail)) + redact.URLsIn(tail)
}

// checkout prepares dir on the tip of o.Branch, creating the branch when it
// is missing and o.CreateBranch allows it.
func (g *git) checkout(ctx context.Context, dir string, o Options) error {
	if _, err := g.run(ctx, "", "init", "--quiet", dir); err != nil {
		return err
	}
	if _, err := g.run(ctx, dir, "remote", "add", "origin", o.RemoteURL); err != nil {
		return err
	}
	out, err := g.run(ctx, dir, "ls-remote", "--symref", "origin")
	if err != nil {
		return fmt.Errorf("read the branches of %s: %w%s", redact.String(o.RemoteURL), err, authHint(err))
	}
	heads, defaultBranch := parseLsRemote(out)
	from := o.Branch
	switch {
	case heads[o.Branch]:
	case !o.CreateBranch:
		return fmt.Errorf("%w: branch %q is not on %s; pass --create-branch to create it (from the default branch, or as the first commit of an empty repository)",
			ErrNoBranch, o.Branch, redact.String(o.RemoteURL))
	case defaultBranch != "":
		from = defaultBranch
	default:
		o.Logf("%s is empty: branch %q starts with this snapshot", redact.String(o.RemoteURL), o.Branch)
		_, err := g.run(ctx, dir, "symbolic-ref", "HEAD", "refs/heads/"+o.Branch)
		return err
	}
	shownFrom := g.scrubber.Scrub(from) // the remote's word when it is its default branch
	if from != o.Branch {
		o.Logf("%s: creating branch %q from %q", redact.String(o.RemoteURL), o.Branch, shownFrom)
	}
	if _, err := g.run(ctx, dir, "fetch", "--quiet", "--depth", "1", "--no-tags", "origin", "refs/heads/"+from); err != nil {
		return fmt.Errorf("fetch branch %q of %s: %w%s", shownFrom, redact.String(o.RemoteURL), err, authHint(err))
	}
	_, err = g.run(ctx, dir, "checkout", "--quiet", "-B", o.Branch, "FETCH_HEAD")
	return err
}

// parseLsRemote reads `git ls-remote --symref` output: the branches, and the
// branch HEAD points at (any branch when HEAD names none).
func parseLsRemote(out string) (heads map[string]bool, defaultBranch string) {
	heads = map[string]bool{}
	var first string
	for _, line := range strings.Split(out, "\n") {
		ref, name, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok {
			continue
		}
		if target, isSym := strings.CutPrefix(ref, "ref: "); isSym && name == "HEAD" {
			defaultBranch = strings.TrimPrefix(target, "refs/heads/")
			continue
		}
		if branch, isHead := strings.CutPrefix(name, "refs/heads/"); isHead {
			heads[branch] = true
			if first == "" {
				first = branch
			}
		}
	}
	if !heads[defaultBranch] {
		defaultBranch = first
	}
	return heads, defaultBranch
}
