package snapshotconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"dagger/lowcode-pipeline/internal/durationflag"
	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/redact"
)

// ForCLI is the configuration the platform CLI is given: by default every
// git section removed, so that the CLI only writes patch files and the module
// does the git work. With platformGit the git sections stay, and a token
// given apart (--git-token) goes into git.repo as the interface's
// https://<token>@… form, since the CLI then pushes by itself.
func ForCLI(entries []Entry, platformGit bool, username, token string) ([]byte, error) {
	out := make([]Entry, len(entries))
	for i, e := range entries {
		out[i] = e
		switch {
		case !platformGit:
			out[i].Git = nil
		case e.Git != nil && token != "":
			g := *e.Git
			u, err := url.Parse(g.Repo)
			if err != nil {
				return nil, fmt.Errorf("[%d].git.repo: not a URL", e.Index)
			}
			u.User = url.User(token)
			if username != "" {
				u.User = url.UserPassword(username, token)
			}
			g.Repo = u.String()
			out[i].Git = &g
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(out)
	return buf.Bytes(), err
}

// Scrub is a file of the project rewritten before any container sees it.
type Scrub struct {
	Path  string
	Clean func([]byte) []byte
}

// Scrubs are the snapshot configurations a project's containers see
// scrubbed, in a fixed order (the same project gives the same directory, so
// cached steps stay cached): DefaultPath and config (when another path),
// scrubbed whatever they hold, then each other file found under
// OtherConfigs once, sorted, scrubbed when it names a snapshooter: the
// template's webpack copies res/ whole into the frontend image, and a
// configuration kept there per environment would carry its token along.
func Scrubs(config string, found []string) []Scrub {
	scrubs := []Scrub{{DefaultPath, ScrubCredentials}}
	if config != "" && config != DefaultPath {
		scrubs = append(scrubs, Scrub{config, ScrubCredentials})
	}
	others := slices.Sorted(slices.Values(found))
	for i, p := range others {
		if (i == 0 || others[i-1] != p) && !slices.ContainsFunc(scrubs, func(s Scrub) bool { return s.Path == p }) {
			scrubs = append(scrubs, Scrub{p, ScrubIfConfig})
		}
	}
	return scrubs
}

// ScrubIfConfig is ScrubCredentials for a file that names a snapshooter, as
// a snapshot configuration does (valid JSON or not); any other file is
// returned as it is: an address with user-info in the app's own
// configuration is the app's.
func ScrubIfConfig(data []byte) []byte {
	if !bytes.Contains(data, []byte(`"snapshooter"`)) {
		return data
	}
	return ScrubCredentials(data)
}

// credentials matches the user-info of an http(s) address in JSON text,
// slashes escaped or not.
// ScrubCredentials removes what is secret from every address in a
// configuration file's text and leaves every other byte as it is: the copy
// of the project that npm and the toolkit see carries no git token. It
// scrubs what a JSON parser reads, not the bytes: each string literal is
// decoded (so \u0040 is an @ and \u0068ttps a scheme), and one holding an
// address with user-info, a query or an @ past its host is written back as
// redact shows it (user-info and query dropped; an ambiguous one not shown
// at all). A password with a raw @ (https://user:p@ss@host) loses all of it.
func ScrubCredentials(data []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		end := literalEnd(data, i)
		if end < 0 {
			break
		}
		var value string
		switch err := json.Unmarshal(data[i:end], &value); {
		case err != nil: // not valid JSON (a raw control character?): scrub its bytes
			if scrubbed := rawCredentials.ReplaceAll(data[i:end], []byte("$1")); !bytes.Equal(scrubbed, data[i:end]) {
				out = append(append(out, data[last:i]...), scrubbed...)
				last = end
			}
		case holdsSecret(value):
			out = append(append(out, data[last:i]...), quoteJSON(redact.String(value))...)
			last = end
		}
		i = end - 1
	}
	if out != nil {
		data = append(out, data[last:]...)
	}
	// What no literal holds (a file that is not JSON) is scrubbed as bytes.
	return rawCredentials.ReplaceAll(data, []byte("$1"))
}

// rawCredentials is the user-info of an address in bytes that do not
// decode: up to the last @ before the host's end.
var rawCredentials = regexp.MustCompile(`(?i)(https?:(?:\\?/){2})[^/\\"]*@`)

// quoteJSON is s as a JSON string literal, < and > as they are.
func quoteJSON(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// literalEnd is the offset just past the JSON string literal that starts at
// data[start] (a quote), or -1 when it is not closed.
func literalEnd(data []byte, start int) int {
	for j := start + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// holdsSecret: an address with user-info or a query, or an ambiguous one.
func holdsSecret(value string) bool {
	lower := strings.ToLower(value)
	if !strings.Contains(lower, "://") {
		return false
	}
	if redact.Ambiguous(value) {
		return true
	}
	u, err := url.Parse(strings.TrimSpace(value))
	return err != nil || u.User != nil || u.RawQuery != "" || strings.Contains(value, "@")
}

// CollectCommand copies, after the snapshot, each entry's outputDir (relative
// to the working directory) to a fresh folder, dest/<index>, and prints
// a line "<index>\t<file count>" for each. The module composes the snapshot
// from those copies: on Dagger v0.21.8 a directory taken out of the CLI's
// container at its own path and put back over the project kept files the CLI
// had deleted (tests/engine-facts.md), while a copy made by an exec does not.
// Paths are passed after "./" so that none reads as an option.
func CollectCommand(entries []Entry, dest string) []string {
	args := []string{"sh", "-c", `dest=$1; shift; i=0
for d in "$@"; do
  out="$dest/$i"
  mkdir -p "$out"
  if [ -d "./$d" ]; then cp -a "./$d/." "$out/"; fi
  printf '%s\t%s\n' "$i" "$(find "$out" -type f | wc -l)"
  i=$((i+1))
done`, "collect", dest}
	for _, e := range entries {
		args = append(args, e.Snapshooter.OutputDir)
	}
	return args
}

// Collected is where CollectCommand put entry i's outputDir.
func Collected(dest string, i int) string { return path.Join(dest, strconv.Itoa(i)) }

// CheckWritten reads CollectCommand's output, each entry's file count, and
// fails, naming each entry, when the platform CLI left an outputDir without
// a file.
func CheckWritten(entries []Entry, counts string, allowEmpty bool) ([]int, error) {
	written := map[int]int{}
	for _, line := range strings.Split(strings.TrimSpace(counts), "\n") {
		i, n, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		index, ierr := strconv.Atoi(i)
		c, cerr := strconv.Atoi(strings.TrimSpace(n))
		if ierr == nil && cerr == nil {
			written[index] = c
		}
	}
	out := make([]int, len(entries))
	for i := range entries {
		out[i] = written[i]
	}
	if allowEmpty {
		return out, nil
	}
	var errs []error
	for i, e := range entries {
		if written[i] == 0 {
			errs = append(errs, fmt.Errorf("[%d] %s: the platform CLI wrote no file into %s (a wrong root tag, an expired platform token, an exclude that leaves out everything?); --allow-empty accepts an empty snapshot",
				e.Index, fielderr.Quote(e.Snapshooter.Name), fielderr.Quote(e.Snapshooter.OutputDir)))
		}
	}
	return out, errors.Join(errs...)
}

// PushFlags are push's flags that have rules of their own.
type PushFlags struct {
	PushAttempts   int
	MaxDeleteRatio float64
	Timeout        string
	Author         string // "Name <email>"
	GitUsername    string // sent with the token; "" for git.repo's or the default
}

// DefaultAuthor is who commits a snapshot unless --author says otherwise.
const DefaultAuthor = "lowcode-pipeline <lowcode-pipeline@users.noreply.invalid>"

// CheckedPush is what PushFlags.Check read from the flags.
type CheckedPush struct {
	AuthorName, AuthorEmail string
	// Timeout is each entry's time limit (--timeout).
	Timeout time.Duration
}

// Check refuses each bad flag, naming it, all at once, and returns what it
// read: the author's name and e-mail, each entry's time limit.
func (f PushFlags) Check() (CheckedPush, error) {
	var c CheckedPush
	var errs []error
	if f.PushAttempts < 1 {
		errs = append(errs, fmt.Errorf("--push-attempts %d: must be at least 1 (it counts the first push)", f.PushAttempts))
	}
	if !(f.MaxDeleteRatio > 0 && f.MaxDeleteRatio <= 1) {
		errs = append(errs, fmt.Errorf("--max-delete-ratio %g: must be above 0 and at most 1 (1 lets any deletion through)", f.MaxDeleteRatio))
	}
	var err error
	if c.Timeout, err = durationflag.Parse("--timeout", f.Timeout); err != nil {
		errs = append(errs, err)
	}
	if c.AuthorName, c.AuthorEmail, err = ParseAuthor(f.Author); err != nil {
		errs = append(errs, err)
	}
	if f.GitUsername != "" && (len(f.GitUsername) > 256 || !basicUser.MatchString(f.GitUsername)) {
		errs = append(errs, fmt.Errorf("--git-username %s: a user name of up to 256 bytes without ':' (HTTP Basic auth sends user:token), spaces or control characters", fielderr.Quote(f.GitUsername)))
	}
	return c, errors.Join(errs...)
}

// basicUser is a user name HTTP Basic auth can carry before the token (its
// length, up to 256 bytes, checked apart: a counted repetition compiles to
// as many copies, at every start of the module).
var basicUser = regexp.MustCompile(`^[^:\s\x00-\x1f\x7f]+$`)

// ConfigPath is --config as a path inside the project, written the short
// way (./res/x.json is res/x.json, res/snapshots/ is res/snapshots), or an
// error for one that is not inside it: absolute, leaving it, or with a
// backslash or a control character. It names a file, or a folder of JSON
// files (ParseFolder).
func ConfigPath(p string) (string, error) {
	clean := path.Clean(p)
	if p == "" || path.IsAbs(p) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") ||
		strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "", fmt.Errorf("--config %s: a file, or a folder of JSON files, inside the project, relative to it and with '/' between folders, e.g. %s", fielderr.Quote(p), DefaultPath)
	}
	return clean, nil
}

var author = regexp.MustCompile(`^([^<>\x00-\x1f]+?) <([^<>\s@]+@[^<>\s@]+)>$`)

// ParseAuthor reads --author "Name <email>", as git writes an author.
func ParseAuthor(s string) (name, email string, err error) {
	m := author.FindStringSubmatch(s)
	if m == nil {
		return "", "", fmt.Errorf("--author %s: want \"Name <email>\", e.g. %q", fielderr.Quote(s), DefaultAuthor)
	}
	return m[1], m[2], nil
}
