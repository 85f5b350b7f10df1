package redact

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"dagger/lowcode-pipeline/internal/secret"
)

// Scrubber hides secrets in text a server or a tool sent back (an echoed
// request, a git remote's message, an address), in every spelling the
// text may hold them in. It is the one place that knows those spellings;
// everything that prints such text scrubs it here first.
//
// A secret is found as it is and as base64 of it or of "Bearer <secret>"
// (an Authorization header's value; standard or URL alphabet, at any of the
// three alignments inside a longer encoding, so the whole header too), each
// character in any of its spellings:
//   - as it is, or percent-encoded (%XX of each UTF-8 byte, either case; a
//     space as +), as in a URL's path or query;
//   - JSON-escaped: \uXXXX (either case, a surrogate pair for a character
//     past U+FFFF), \/, \", \\;
//   - HTML-escaped: &lt; &gt; &amp; &quot; &apos;, &#NN; and &#xHH;;
//
// and with line breaks, other control characters and spaces (as they are
// or escaped: \r\n, \n, %0A, &#10;) anywhere between two characters, as
// when an echo is wrapped at a column (MIME at 76, PEM at 64), folded, or
// split across lines, git's "remote: " at the start of a line included.
// The zero value scrubs nothing.
type Scrubber struct {
	targets []secret.Text // what is searched for: kept secret, as fmt may print a Scrubber
}

// minEncoded is the shortest base64 searched for: a shorter piece would hide
// text that merely resembles it.
const minEncoded = 8

// NewScrubber is a Scrubber of secrets; an unset one is skipped.
func NewScrubber(secrets ...secret.Text) Scrubber {
	var targets []string
	for _, s := range secrets {
		if !s.Set() {
			continue
		}
		targets = append(targets, s.Reveal())
		for _, plain := range []string{s.Reveal(), "Bearer " + s.Reveal()} {
			for shift := range 3 {
				for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
					e := enc.EncodeToString(append(make([]byte, shift), plain...))
					// only the characters that plain's bytes alone decide: not
					// those the bytes before or after it (or padding) change
					if lo, hi := (shift*4+2)/3, len(e)-4; hi-lo >= minEncoded {
						targets = append(targets, e[lo:hi])
					}
				}
			}
		}
	}
	slices.Sort(targets)
	var sc Scrubber
	for _, t := range slices.Compact(targets) {
		sc.targets = append(sc.targets, secret.New(t))
	}
	return sc
}

// Scrub replaces every spelling of every secret in text with ***. A text
// that would take too long to search (a secret that repeats itself, a text
// built to match its start again and again) is not shown at all: the
// result is Unscrubbable.
func (s Scrubber) Scrub(text string) string {
	var spans [][2]int
	budget := scrubBudget * (len(text) + 1)
	for _, t := range s.targets {
		w := walk{text: text, target: t.Reveal(), budget: &budget}
		for at := 0; at < len(text); at++ {
			if end := w.from(at, 0); end > at {
				spans = append(spans, [2]int{at, end})
				at = end - 1
			}
		}
	}
	if budget < 0 {
		return Unscrubbable
	}
	if len(spans) == 0 {
		return text
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp[0] >= last {
			b.WriteString(text[last:sp[0]] + "***")
		}
		last = max(last, sp[1])
	}
	b.WriteString(text[last:])
	return b.String()
}

// Unscrubbable stands in for a text Scrub could not search in time.
const Unscrubbable = "<text not shown: too costly to search for secrets>"

// scrubBudget bounds Scrub's work: the characters read past the first of a
// possible spelling, per byte of text. A text made of nothing but an issued
// token's spellings takes about 1; one of "abab…" about 4.
const scrubBudget = 16

// walk reads text as target, one character's spelling at a time.
type walk struct {
	text, target string
	budget       *int
}

// from is where a reading of target[j:] that starts at text[at] ends, or -1.
func (w *walk) from(at, j int) int {
	if j == len(w.target) {
		return at
	}
	if at >= len(w.text) || *w.budget < 0 {
		return -1
	}
	if j > 0 {
		*w.budget--
	}
	var buf [4]spelling
	for _, sp := range spellings(w.text, at, buf[:0]) {
		if strings.HasPrefix(w.target[j:], sp.means) {
			if end := w.from(at+sp.n, j+len(sp.means)); end >= 0 {
				return end
			}
		}
		if j > 0 && gap(sp.means) {
			if end := w.from(at+sp.n, j); end >= 0 {
				return end
			}
		}
	}
	return -1
}

// gap is what may come between two characters of a spelling: a line
// break, another control character, a space.
func gap(means string) bool {
	r, size := utf8.DecodeRuneInString(means)
	return size == len(means) && (unicode.IsControl(r) || unicode.IsSpace(r))
}

// spelling is one character as text spells it: what it means, and how many
// bytes of text spell it.
type spelling struct {
	means string
	n     int
}

// spellings are the ways text[at:] begins with one character: as it is,
// and as each escape the Scrubber knows, appended to buf.
func spellings(text string, at int, buf []spelling) []spelling {
	_, size := utf8.DecodeRuneInString(text[at:])
	buf = append(buf, spelling{text[at : at+size], size})
	rest := text[at:]
	switch rest[0] {
	case '\n':
		if strings.HasPrefix(rest[1:], gitRemote) {
			buf = append(buf, spelling{"\n", 1 + len(gitRemote)})
		}
	case '+':
		buf = append(buf, spelling{" ", 1})
	case '%':
		if b, ok := hexValue(rest, 1, 2); ok {
			buf = append(buf, spelling{string([]byte{byte(b)}), 3})
		}
	case '\\':
		if len(rest) < 2 {
			break
		}
		if r, n, ok := jsonUnicode(rest); ok {
			buf = append(buf, spelling{string(r), n})
		} else if short := strings.IndexByte(`"\/bfnrt`, rest[1]); short >= 0 {
			buf = append(buf, spelling{"\"\\/\b\f\n\r\t"[short : short+1], 2})
		}
	case '&':
		if r, n, ok := htmlEntity(rest); ok {
			buf = append(buf, spelling{string(r), n})
		}
	}
	return buf
}

// gitRemote is what git writes before each line a remote sent.
const gitRemote = "remote: "

// jsonUnicode reads \uXXXX at the start of s, or a surrogate pair of two.
func jsonUnicode(s string) (rune, int, bool) {
	u, ok := jsonUnit(s)
	if !ok {
		return 0, 0, false
	}
	if utf16.IsSurrogate(rune(u)) {
		if low, ok := jsonUnit(s[6:]); ok {
			if r := utf16.DecodeRune(rune(u), rune(low)); r != utf8.RuneError {
				return r, 12, true
			}
		}
	}
	return rune(u), 6, true
}

func jsonUnit(s string) (uint64, bool) {
	if len(s) < 6 || s[0] != '\\' || (s[1] != 'u' && s[1] != 'U') {
		return 0, false
	}
	return hexValue(s, 2, 4)
}

// htmlEntity reads &lt; &gt; &amp; &quot; &apos;, &#NN; or &#xHH; at the
// start of s.
func htmlEntity(s string) (rune, int, bool) {
	end := strings.IndexByte(s[:min(len(s), 12)], ';') + 1
	if end <= 0 {
		return 0, 0, false
	}
	if r, ok := htmlNamed[s[:end]]; ok {
		return r, end, true
	}
	digits, ok := strings.CutPrefix(s[:end-1], "&#")
	base := 10
	if hex, isHex := strings.CutPrefix(strings.ToLower(digits), "x"); isHex {
		digits, base = hex, 16
	}
	v, err := strconv.ParseUint(digits, base, 21)
	return rune(v), end, ok && err == nil
}

var htmlNamed = map[string]rune{"&lt;": '<', "&gt;": '>', "&amp;": '&', "&quot;": '"', "&apos;": '\''}

// hexValue reads n hexadecimal digits of s from index at.
func hexValue(s string, at, n int) (uint64, bool) {
	if len(s) < at+n {
		return 0, false
	}
	v, err := strconv.ParseUint(s[at:at+n], 16, 64)
	return v, err == nil
}
