package redact

import (
	"encoding/base64"
	"slices"
	"strings"
	"unicode"
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
//     knows), &#NN; and &#xHH;, and as HTML also reads them without their
//     ';' (&#10, &#x0a, &nbsp, &shy);
//
//   - as Go quotes it (%q): \xHH, \a, \v, \uXXXX, \UXXXXXXXX;
//
//   - as git re-encodes a UTF-8 character as Latin-1 (Â followed by U+0085
//     for NEL): each byte a character of its own;
//
//   - escaped twice, an escape's \, % or & escaped itself: \\n, \\u000a,
//     \\x0a, \\/ (a JSON- or Go-quoted text quoted again), \\\\n, \u005cn,
//     %250A, %2B (a space form-encoded twice), &amp;#10;;
//
// and with line breaks, other control characters, spaces and characters a
// reader does not see (format characters such as U+200B, U+00AD, U+FEFF,
// and the other default-ignorable ones such as U+034F), as they are or in
// any of those spellings (\r\n, \n, \\n, %0A, &#10;, &#10, &nbsp;, \x01,
// Â\u0085), anywhere between two characters, as when an echo is wrapped at
// a column (MIME at 76, PEM at 64), folded, split across lines (git's
// "remote: " at the start of a line included) or broken by a byte a server
// slipped in.
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

// scrubBudget bounds Scrub's work: the readings of a character tried past
// the first of a possible spelling, per byte of text. A text made of
// nothing but an issued token's spellings takes about 1; one of "abab…"
// about 4, one of backslashes about 4 too.
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
	var buf [8]spelling
	found, read := spellings(w.text, at, buf[:0])
	if j > 0 {
		// each reading is tried, and a long reference's digits are read too
		*w.budget -= len(found) + read/16
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

// gap is what may come between two characters of a spelling: a line
// break, another control character, a space, or a character a reader does
// not see: a format character (U+200B, U+00AD, U+FEFF, U+2060, U+202E) or
// another default-ignorable one (U+034F, U+3164, a variation selector).
func gap(means string) bool {
	r, size := utf8.DecodeRuneInString(means)
	return size == len(means) && (unicode.IsControl(r) || unicode.IsSpace(r) ||
		unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector))
}
