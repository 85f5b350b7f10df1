// Package fielderr collects validation problems that each name the place in the
// user's input (a JSON path such as backends.deployRules[2].source) so that all
// of them can be reported at once instead of one per run.
package fielderr

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is one problem at one place of the input.
type Error struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (e Error) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return Cut(e.Path, MaxPath) + ": " + e.Message
}

// List accumulates problems in the order they were found.
type List []Error

// Addf records a problem at path.
func (l *List) Addf(path, format string, args ...any) {
	*l = append(*l, Error{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Err returns nil when nothing was recorded, else the list as an error.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

func (l List) Error() string {
	if len(l) == 1 {
		return l[0].Error()
	}
	shown := min(len(l), MaxProblems)
	lines := make([]string, shown)
	for i, e := range l[:shown] {
		lines[i] = e.Error()
	}
	more := ""
	if len(l) > shown {
		more = fmt.Sprintf("\n  … and %d more", len(l)-shown)
	}
	return fmt.Sprintf("%d problems:\n  - %s%s", len(l), strings.Join(lines, "\n  - "), more)
}

// Limits on what an error repeats of the input, so a huge input cannot make
// a huge error.
const (
	MaxProblems = 50  // problems listed; the rest are counted
	MaxValue    = 80  // bytes of an echoed value
	MaxPath     = 200 // bytes of a path (keys come from the input too)
)

// Cut shortens s to about n bytes, on a rune boundary, saying how long it was.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := n
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:end], len(s))
}

// Join builds a child path: Join("backends", "images") is "backends.images";
// Join("", "frontend") is "frontend". A key that would not read as one
// segment (empty, with a dot, a bracket, a quote, a space or a character
// that does not print) is quoted in brackets: Join("", "") is `[""]`,
// Join("frontend", "a.b") is `frontend["a.b"]`.
func Join(parent, key string) string {
	if plainKey(key) {
		if parent == "" {
			return key
		}
		return parent + "." + key
	}
	return parent + "[" + Quote(key) + "]"
}

func plainKey(key string) bool {
	return key != "" && utf8.ValidString(key) && !strings.ContainsAny(key, `.[]"\`) && WithoutLogins(key) == key &&
		!strings.ContainsFunc(key, func(r rune) bool { return unicode.IsSpace(r) || Unprintable(r) })
}

// Index builds an element path: Index("extraArgs", 0) is "extraArgs[0]".
func Index(parent string, i int) string {
	return fmt.Sprintf("%s[%d]", parent, i)
}

// Quote shows a user value in an error, in quotes, every character escaped
// that Printable escapes (as Go quotes it: \n, \x1b, \u3164), shortened so
// a huge input cannot flood the output: at most MaxValue bytes of it, and at
// most 2×MaxValue once quoted (a byte that is not UTF-8 is quoted as four:
// \xe9). A login in it is not shown (WithoutLogins).
func Quote(value string) string {
	s := WithoutLogins(value)
	end := min(len(s), MaxValue)
	for end < len(s) && end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	for end > 0 && len(quote(s[:end])) > 2*MaxValue {
		end--
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
	}
	if end == len(s) {
		return quote(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", quote(s[:end]), len(value))
}

// digestNext is a digest after an @ that ends the value, and no "://" is
// before it: an image pinned by it (node:24@sha256:…), not an address whose
// host looks like one.
// scopedPackage is an npm package's scoped name (@olympeio/toolkit), which
// an @ and a version may follow.
var (
	digestNext    = regexp.MustCompile(`^[a-z][a-z0-9]*(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}$`)
	scopedPackage = regexp.MustCompile(`^@[a-z0-9~-][a-z0-9._~-]*/[a-z0-9~-][a-z0-9._~-]*$`)
)

// atSigns are the spellings of the @ that ends a login: as written, as an
// address escapes it, and the full-width and small forms that IDNA maps to
// it.
var atSigns = []string{"@", "%40", "\uff20", "\ufe6b"}

// WithoutLogins is s, or "…" and what follows its login when it may hold
// one: a value may hold a password where it does not belong (a registry's in
// --repository, a proxy's in --build-arg, a token in a label's URL), and an
// error is printed. A login is all that comes before an @ (atSigns) that no
// digest follows, when that holds a ':', a '/' or a '%' (user:password, a
// scheme, an escape), however it is spelt: no part of it is shown. What comes before an @ in any other value is shown:
// a user alone (ci@draw.example.com), an npm package and its version
// (@olympeio/toolkit@2.9.2), an image pinned by digest.
func WithoutLogins(s string) string {
	for end := len(s); end > 0; {
		at, next := -1, 0
		for _, sign := range atSigns {
			if i := strings.LastIndex(s[:end], sign); i > at {
				at, next = i, i+len(sign)
			}
		}
		if at < 0 {
			break
		}
		pinned := digestNext.MatchString(s[next:]) && !strings.Contains(s[:at], "://")
		if before := s[:at]; !pinned && strings.ContainsAny(before, ":/%") && !scopedPackage.MatchString(before) {
			return "…" + s[at:]
		}
		end = at
	}
	return s
}

// HoldsLogin says whether a word of s (a run without white space) holds a
// login as WithoutLogins finds one: what a value a result or a label shows
// must not hold. A sentence's colon before an @ further on (a commit
// message's "chore: … @ …") is no login, nor mailto:'s.
func HoldsLogin(s string) bool {
	for _, w := range strings.Fields(s) {
		if len(w) > len("mailto:") && strings.EqualFold(w[:len("mailto:")], "mailto:") {
			w = w[len("mailto:"):] // an email's scheme, no password's colon
		}
		if WithoutLogins(w) != w {
			return true
		}
	}
	return false
}

// MarshalJSON lists the problems as [{"path": …, "message": …}].
func (l List) MarshalJSON() ([]byte, error) {
	return json.Marshal([]Error(l))
}

// ToolLines are the lines of a failed command's stderr that the module's own
// tools wrote for the user (they start with "lowcode-pipeline: ",
// "oci-publish: " or "snapshot-push: "), each cut, at most five and a count
// of the rest: what an error repeats of an exec, since the engine's message
// only says the process exited non-zero. Nothing else of the output is
// repeated: it stays in the engine's log, where secrets are masked. A line
// may repeat what a server said (a git remote's message): it is Printable.
func ToolLines(stderr string) []string {
	var said []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "lowcode-pipeline: ") || strings.HasPrefix(line, "oci-publish: ") || strings.HasPrefix(line, "snapshot-push: ") {
			said = append(said, Cut(Printable(line), 1000))
		}
	}
	if len(said) > 5 {
		said = append(said[:5], fmt.Sprintf("(%d more lines in the log)", len(said)-5))
	}
	return said
}

// MaxError is about the most bytes of an error a user reads (Plain).
const MaxError = 2000

var (
	// an object's encoded ID in an engine message: Container@Cv57ChV4eGgz…
	encodedID = regexp.MustCompile(`\b([A-Z][A-Za-z]*)@[A-Za-z0-9+/_=-]{40,}`)
	// the engine's chain of loads that leads to the cause
	loadChain = regexp.MustCompile(`(?:(?:load|[a-z]?) ?xxh3:[0-9a-f]+: inputs: )+`)
)

// Plain is err as the text a user reads, and nothing else: encoded IDs and
// the engine's load chains left out, the middle of a long message cut (its
// start says what failed, its end why). It wraps nothing on purpose: the Go
// SDK answers a module error that wraps an engine error with the engine's
// message alone (convertError in dagger.gen.go), dropping what the module
// added to it.
func Plain(err error) error {
	if err == nil {
		return nil
	}
	msg := encodedID.ReplaceAllString(err.Error(), "$1@…")
	msg = loadChain.ReplaceAllString(msg, "… ")
	msg = printableLines(msg)
	if len(msg) > MaxError {
		head, tail := MaxError/3, MaxError*2/3
		for head > 0 && !utf8.RuneStart(msg[head]) {
			head--
		}
		start := len(msg) - tail
		for start < len(msg) && !utf8.RuneStart(msg[start]) {
			start++
		}
		msg = fmt.Sprintf("%s … (%d bytes cut) … %s", msg[:head], start-head, msg[start:])
	}
	return plainError(msg)
}

// printableLines is s with each line, and each tab-separated piece of it,
// Printable: an error names what a file or a server said (a file's name, a
// package's, a Dockerfile's word), and whatever check forgot to escape it,
// no error reaches a terminal raw. Printable text is kept as it is, so what
// was escaped already is not escaped again.
func printableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		pieces := strings.Split(line, "\t")
		for j, p := range pieces {
			pieces[j] = Printable(p)
		}
		lines[i] = strings.Join(pieces, "\t")
	}
	return strings.Join(lines, "\n")
}

type plainError string

func (e plainError) Error() string { return string(e) }
