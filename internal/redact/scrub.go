package redact

import (
	"encoding/base64"
	"html"
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
//
//   - as it is, or percent-encoded (%XX of each UTF-8 byte, either case; a
//     space as +), as in a URL's path or query;
//
//   - JSON-escaped: \uXXXX (either case, a surrogate pair for a character
//     past U+FFFF), \/, \", \\;
//
//   - HTML-escaped: by name (&lt;, &amp;, &nbsp;, &NewLine;, any name HTML
//     knows), &#NN; and &#xHH;;
//
//   - as Go quotes it (%q): \xHH, \a, \v, \uXXXX, \UXXXXXXXX;
//
//   - as git re-encodes a UTF-8 character as Latin-1 (Â followed by U+0085
//     for NEL): each byte a character of its own;
//
// and with line breaks, other control characters, spaces and characters a
// reader does not see (format characters such as U+200B, U+00AD, U+FEFF,
// and the other default-ignorable ones such as U+034F), as they are or in
// any of those spellings (\r\n, \n, %0A, &#10;, &nbsp;, \x01, Â\u0085),
// anywhere between two characters, as when an echo is wrapped at a column
// (MIME at 76, PEM at 64), folded, split across lines (git's "remote: " at
// the start of a line included) or broken by a byte a server slipped in.
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
func (s Scrubber) Scrub(text string) string { return s.scrub(text, false) }

// ScrubCut is Scrub for a text cut short (a body read up to a limit): a
// spelling the end of the text cuts off, however early, is hidden too.
func (s Scrubber) ScrubCut(text string) string { return s.scrub(text, true) }

func (s Scrubber) scrub(text string, cut bool) string {
	var spans [][2]int
	budget := scrubBudget * (len(text) + 1)
	for _, t := range s.targets {
		w := walk{text: text, target: t.Reveal(), budget: &budget, cut: cut}
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
	cut          bool // text was cut short: a spelling running off its end counts
}

// from is where a reading of target[j:] that starts at text[at] ends, or -1.
func (w *walk) from(at, j int) int {
	if j == len(w.target) {
		return at
	}
	if *w.budget < 0 {
		return -1
	}
	if at >= len(w.text) {
		return w.runsOff(j)
	}
	var buf [4]spelling
	found, read := spellings(w.text, at, buf[:0])
	if j > 0 {
		*w.budget -= 1 + read/16 // a long reference's digits are read too
	}
	for _, sp := range found {
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
	if w.cut && unfinished(w.text[at:]) {
		return len(w.text) // an escape cut short may spell any character
	}
	return -1
}

// runsOff is where a reading that reached the end of a cut text ends: there,
// if it read any of target; it cannot be told whole or not.
func (w *walk) runsOff(j int) int {
	if w.cut && j > 0 {
		return len(w.text)
	}
	return -1
}

// unfinished reports whether s, all that is left of a text, may be the start
// of a spelling the end cut short: %5, \u00, &#000, &NewLi, \x0, git's
// "\nremo", a UTF-8 character's first bytes, or the first characters of
// git's Latin-1 spelling of one (Â of Â U+0085).
func unfinished(s string) bool {
	if len(s) == 0 || len(s) > len(`\uD83D\uDE0`) && s[0] != '&' {
		return false
	}
	if !utf8.FullRuneInString(s) || latin1Unfinished(s) {
		return true
	}
	switch s[0] {
	case '%':
		return len(s) < 3 && isHex(s[1:])
	case '\\':
		return len(s) < 2 || strings.ContainsRune("uUx", rune(s[1])) && isHex(strings.NewReplacer(`\u`, "", `\U`, "").Replace(s[2:]))
	case '&':
		name := strings.TrimLeft(s[1:], "#xX")
		return len(s) < len(longestEntity) && isAlnum(s[1:]) || strings.HasPrefix(s, "&#") && isHex(name)
	case '\n':
		return strings.HasPrefix(gitRemote, s[1:])
	}
	return false
}

func isHex(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return !strings.ContainsRune("0123456789abcdefABCDEF", r) })
}

// latin1Unfinished reports whether s is the first characters of git's
// Latin-1 spelling of a UTF-8 character (each byte a character of its own),
// the last of them perhaps cut inside its own two bytes: Â, â U+0080, â\xc2.
func latin1Unfinished(s string) bool {
	var raw []byte
	for len(s) > 0 {
		if !utf8.FullRuneInString(s) {
			return s[0] == 0xc2 || s[0] == 0xc3 // a Latin-1 character cut in two
		}
		r, size := utf8.DecodeRuneInString(s)
		if r < 0x80 || r > 0xff {
			return false
		}
		raw, s = append(raw, byte(r)), s[size:]
	}
	return !utf8.FullRune(raw) // a lead byte and fewer bytes than it needs
}

func isAlnum(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9')
	})
}

// gap is what may come between two characters of a spelling: a line
// break, another control character, a space, or a character a reader does
// not see: a format character (U+200B, U+00AD, U+FEFF, U+2060, U+202E) or
// another default-ignorable one (U+034F, U+3164, a variation selector).
func gap(means string) bool {
	r, size := utf8.DecodeRuneInString(means)
	return size == len(means) && (unicode.IsControl(r) || unicode.IsSpace(r) ||
		unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector))
}

// spelling is one character as text spells it: what it means, and how many
// bytes of text spell it.
type spelling struct {
	means string
	n     int
}

// spellings are the ways text[at:] begins with one character: as it is,
// and as each escape the Scrubber knows, appended to buf; read is how many
// bytes past the first were read to tell.
func spellings(text string, at int, buf []spelling) (_ []spelling, read int) {
	_, size := utf8.DecodeRuneInString(text[at:])
	buf = append(buf, spelling{text[at : at+size], size})
	rest := text[at:]
	if r, n, ok := latin1Reading(rest); ok {
		buf = append(buf, spelling{string(r), n})
	}
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
		} else if short := strings.IndexByte(`"\/bfnrtav`, rest[1]); short >= 0 {
			buf = append(buf, spelling{"\"\\/\b\f\n\r\t\a\v"[short : short+1], 2})
		}
		// Go's %q: \xHH for a byte, \UXXXXXXXX past U+FFFF
		if b, ok := hexValue(rest, 2, 2); ok && rest[1] == 'x' {
			buf = append(buf, spelling{string([]byte{byte(b)}), 4})
		}
		if r, ok := hexValue(rest, 2, 8); ok && rest[1] == 'U' && utf8.ValidRune(rune(r)) {
			buf = append(buf, spelling{string(rune(r)), 10})
		}
	case '&':
		r, n, ok := htmlEntity(rest)
		if ok {
			buf = append(buf, spelling{string(r), n})
		}
		read = n
	}
	return buf, read
}

// latin1Reading reads at the start of s a UTF-8 character whose every byte
// stands as the Latin-1 character of that value (U+00C2 U+0085 for NEL),
// as git re-encodes a remote's message that names no charset.
func latin1Reading(s string) (rune, int, bool) {
	if s[0] != 0xc3 { // a Latin-1 letter: U+00C2..U+00F4 are the lead bytes
		return 0, 0, false
	}
	var raw []byte
	n := 0
	for len(raw) < utf8.UTFMax {
		r, size := utf8.DecodeRuneInString(s[n:])
		if r < 0x80 || r > 0xff || len(raw) > 0 && utf8.RuneStart(byte(r)) {
			break
		}
		raw, n = append(raw, byte(r)), n+size
		if utf8.FullRune(raw) {
			break
		}
	}
	r, size := utf8.DecodeRune(raw)
	return r, n, size > 1 && size == len(raw)
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

// htmlEntity reads a named reference HTML knows (&lt;, &nbsp;, &NewLine;)
// that stands for one character, &#NN; or &#xHH; at the start of s, the
// latter with any number of leading zeros; n is the bytes read either way.
func htmlEntity(s string) (r rune, n int, ok bool) {
	digits, isRef := strings.CutPrefix(s, "&#")
	if !isRef {
		end := strings.IndexByte(s[:min(len(s), len(longestEntity))], ';') + 1
		if end < 3 || !isAlnum(s[1:end-1]) {
			return 0, end, false
		}
		// html also reads a name without its ';' (&ltx; is "<x;"): only a
		// reference that is one character, and nothing else, is taken
		plain := html.UnescapeString(s[:end])
		if r, size := utf8.DecodeRuneInString(plain); size == len(plain) && plain != s[:end] {
			return r, end, true
		}
		return 0, end, false
	}
	base, skip := 10, 2
	if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
		base, skip, digits = 16, 3, digits[1:]
	}
	zeros := len(digits) - len(strings.TrimLeft(digits, "0"))
	end := zeros + strings.IndexByte(digits[zeros:min(len(digits), zeros+8)], ';')
	if end < zeros || end == 0 {
		return 0, skip + zeros, false
	}
	v, err := strconv.ParseUint("0"+digits[zeros:end], base, 21)
	return rune(v), skip + end + 1, err == nil
}

// longestEntity is the longest name of an HTML character reference.
const longestEntity = "&CounterClockwiseContourIntegral;"

// hexValue reads n hexadecimal digits of s from index at.
func hexValue(s string, at, n int) (uint64, bool) {
	if len(s) < at+n {
		return 0, false
	}
	v, err := strconv.ParseUint(s[at:at+n], 16, 64)
	return v, err == nil
}
