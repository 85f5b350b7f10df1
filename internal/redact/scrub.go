package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"
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
// A secret is found as it is, as hexadecimal of its bytes, as its Latin-1
// bytes (a secret past ASCII, none of its characters past U+00FF, as a
// servlet writes it), and as base64 of it or of "Bearer <secret>" (an
// Authorization header's value; standard or URL alphabet, at any of the
// three alignments inside a longer encoding, so the whole header too, its
// last character included; of their UTF-8, UTF-16LE or UTF-16BE bytes, of
// the secret JSON-escaped, \u0026 for &, and of its own base64, as a
// .dockerconfigjson encoded again holds it), each character in any of its
// spellings, and a letter in either case (Unicode's simple case folding)
// when what is searched for is 8 characters or more (a token upper-cased,
// hexadecimal in capitals, PÄSSWÖRD):
//
//   - as it is, or percent-encoded (%XX of each UTF-8 byte, either case; a
//     space as +), as in a URL's path or query; as quoted-printable and
//     RFC 2047's Q-encoding write a byte, =5F; a full-width ASCII
//     character (U+FF01 to U+FF5E) as ASCII;
//
//   - JSON-escaped: \uXXXX (either case, a surrogate pair for a character
//     past U+FFFF), \/, \", \\;
//
//   - HTML-escaped: by name (&lt;, &amp;, &nbsp;, &NewLine;, any name HTML
//     knows), &#NN; and &#xHH;, and as HTML also reads them without their
//     ';' (&#10, &#x0a, &nbsp, &shy);
//
//   - as Go quotes it (%q): \xHH, \a, \v, \uXXXX, \UXXXXXXXX; as C and
//     bash's $'…' do, \NNN in octal; as ECMAScript does, \u{X…};
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
// "remote: " at the start of a line included, after a line break in any
// spelling: \nremote: in git's output quoted again) or broken by a byte a
// server slipped in; so is a combining mark (U+0336, U+0301) after a
// character. So is any number of sequences a terminal or a browser draws
// nothing for (unseen), each up to maxUnseen characters: ECMA-48 escape
// sequences (a colour code, git's \x1b[K, an OSC 8 hyperlink's opening),
// HTML tags (<wbr>, </span><span class=…>), comments (<!-- -->) and
// quoted-printable's soft line break (=\r\n), their characters in any of
// those spellings. A gap is at most maxGap bytes. Mathematical letters
// (U+1D400…), a secret's base64 nested deeper than once and any other
// encoding of an encoding are not searched for.
// The zero value scrubs nothing.
type Scrubber struct {
	targets []secretTarget // what is searched for
}

// minEncoded is the shortest base64 searched for: a shorter piece would hide
// text that merely resembles it.
const minEncoded = 8

// NewScrubber is a Scrubber of secrets; an unset one is skipped.
func NewScrubber(secrets ...secret.Text) Scrubber {
	var targets []target
	for _, s := range secrets {
		if !s.Set() {
			continue
		}
		plain := s.Reveal()
		targets = append(targets, target{text: plain}, target{text: hex.EncodeToString([]byte(plain))})
		if l := latin1Bytes(plain); l != "" {
			targets = append(targets, target{text: l})
		}
		for _, p := range encodedForms(plain) {
			for shift := range 3 {
				for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
					if t, ok := base64Target(enc, shift, p); ok {
						targets = append(targets, t)
					}
				}
			}
		}
	}
	slices.SortFunc(targets, compareTargets)
	var sc Scrubber
	for _, t := range slices.CompactFunc(targets, func(a, b target) bool { return compareTargets(a, b) == 0 }) {
		sc.targets = append(sc.targets, secretTarget{secret.New(t.text), secret.New(t.tail)})
	}
	return sc
}

// target is what is searched for: text, then, when tail is set, perhaps one
// character of tail.
type target struct{ text, tail string }

// secretTarget is a target kept secret, as fmt may print a Scrubber.
type secretTarget struct{ text, tail secret.Text }

func compareTargets(a, b target) int {
	return strings.Compare(a.text+"\x00"+a.tail, b.text+"\x00"+b.tail)
}

// encodedForms are the texts whose base64 holds the secret: it, the
// Authorization header's value, their UTF-16 bytes (PowerShell encodes a
// command as UTF-16LE, Java's and .NET's UTF-16 is big-endian), and the
// secret as a JSON encoder writes it inside a string (Go's writes & < > as
// \u0026…), and the secret's own base64 at each alignment (a
// .dockerconfigjson's "auth", encoded once more as a Kubernetes Secret's
// data is).
func encodedForms(plain string) []string {
	forms := []string{plain, "Bearer " + plain, utf16LE(plain), utf16LE("Bearer " + plain), utf16BE(plain)}
	if quoted, err := json.Marshal(plain); err == nil && string(quoted[1:len(quoted)-1]) != plain {
		forms = append(forms, string(quoted[1:len(quoted)-1]))
	}
	for shift := range 3 {
		if inner, ok := base64Target(base64.StdEncoding, shift, plain); ok {
			forms = append(forms, inner.text)
		}
	}
	return forms
}

// base64Target is the base64 of plain after shift bytes, at that one of
// the three alignments: the characters plain's bytes alone decide (not
// those the bytes before it change), then, when plain does not end on a
// 3-byte boundary, the last character that holds plain's last bits, as
// the set of characters the bits after it may make of it. Padding after it
// is not searched for: it holds nothing of the secret.
func base64Target(enc *base64.Encoding, shift int, plain string) (target, bool) {
	e := strings.TrimRight(enc.EncodeToString(append(make([]byte, shift), plain...)), "=")
	lo, hi := (shift*4+2)/3, len(e)
	var tail string
	if free := (shift + len(plain)) % 3; free != 0 {
		// the last character holds 2 (free=1) or 4 (free=2) of plain's bits;
		// the zero bits after them are any bits in the text: 16 or 4 characters
		hi--
		alphabet := stdAlphabet
		if enc == base64.URLEncoding {
			alphabet = urlAlphabet
		}
		at := strings.IndexByte(alphabet, e[hi])
		tail = alphabet[at : at+[]int{0, 16, 4}[free]]
	}
	return target{text: e[lo:hi], tail: tail}, hi-lo >= minEncoded
}

const (
	stdAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	urlAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

// utf16LE is s's UTF-16 little-endian bytes, as Windows and PowerShell's
// -EncodedCommand encode a text before base64.
func utf16LE(s string) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

// utf16BE is s's UTF-16 big-endian bytes, as Java and .NET write "UTF-16".
func utf16BE(s string) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return string(b)
}

// latin1Bytes is s's ISO-8859-1 bytes, as a servlet container writes text by
// default, when s has a character past ASCII and none past U+00FF; else "".
func latin1Bytes(s string) string {
	var b []byte
	wide := false
	for _, r := range s {
		if r > 0xff || r == utf8.RuneError {
			return ""
		}
		wide = wide || r >= utf8.RuneSelf
		b = append(b, byte(r))
	}
	if !wide {
		return ""
	}
	return string(b)
}

// Scrub replaces every spelling of every secret in text with ***. A text
// that would take too long to search (a secret that repeats itself, a text
// built to match its start again and again) is not shown at all: the
// result is Unscrubbable.
func (s Scrubber) Scrub(text string) string { return s.scrub(text, false) }

// ScrubCut is Scrub for a text cut short (a body read up to a limit): a
// spelling the end of the text cuts off, however early, is hidden too.
func (s Scrubber) ScrubCut(text string) string { return s.scrub(text, true) }

// ScrubAtMost is Scrub of text's first max bytes (cut before a character
// that starts there), as ScrubCut when the cut left part of text out;
// cut says whether it did.
func (s Scrubber) ScrubAtMost(text string, max int) (_ string, cut bool) {
	if len(text) <= max {
		return s.Scrub(text), false
	}
	end := max
	for end > 0 && !utf8.RuneStart(text[end]) {
		end--
	}
	return s.ScrubCut(text[:end]), true
}

func (s Scrubber) scrub(text string, cut bool) string {
	spans, ok := s.spans(text, cut)
	if !ok {
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

// spans are the [start, end) byte ranges of text that spell a secret; ok is
// false when the text was too costly to search.
func (s Scrubber) spans(text string, cut bool) (spans [][2]int, ok bool) {
	budget := scrubBudget * (len(text) + 1)
	for _, t := range s.targets {
		w := walk{text: text, target: t.text.Reveal(), tail: t.tail.Reveal(), budget: &budget, cut: cut}
		w.folded = utf8.RuneCountInString(w.target) >= minFolded
		periods := periods(w.target, w.folded)
		for at := 0; at < len(text); at++ {
			end := w.from(at, 0, at)
			if end <= at {
				continue
			}
			// a target that repeats itself ("MDAwMDAw", base64 of "000000")
			// may start again inside this match and end past it: its rest,
			// target's last p characters for a period p, is read on
			for again := true; again; {
				again = false
				for _, p := range periods {
					if next := w.from(w.textEnd, len(w.target)-p, w.textEnd); next > end {
						end, again = next, true
						break
					}
				}
			}
			spans = append(spans, [2]int{at, end})
			at = end - 1
		}
	}
	return spans, budget >= 0
}

// periods are the shifts p, shortest first, by which s matches itself
// (s[i] is s[i+p]), each letter in either case when folded; a border of
// s is what KMP's failure function finds, and each gives a period.
func periods(s string, folded bool) []int {
	eq := func(a, b byte) bool { return a == b || folded && isLetter(a) && a|0x20 == b|0x20 }
	border := make([]int, len(s)+1) // border[i]: the longest proper border of s[:i]
	border[0] = -1
	for i, k := 1, -1; i <= len(s); i++ {
		for k >= 0 && !eq(s[k], s[i-1]) {
			k = border[k]
		}
		k++
		border[i] = k
	}
	var ps []int
	for b := border[len(s)]; b > 0; b = border[b] {
		ps = append(ps, len(s)-b)
	}
	return ps
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
	tail         string // one of these characters may end target (base64's last)
	budget       *int
	cut          bool // text was cut short: a spelling running off its end counts
	folded       bool // target is long enough to be matched in any case
	textEnd      int  // where the last reading's target ended, before its tail
}

// from is where a reading of target[j:] that starts at text[at] ends, or
// -1; the gap before text[at], if any, began at gapFrom.
func (w *walk) from(at, j, gapFrom int) int {
	switch {
	case j > len(w.target):
		return at
	case j == len(w.target) && w.tail == "":
		w.textEnd = at
		return at
	case j == len(w.target) && gapFrom == at:
		// target is read: a character of tail after it (or after a gap) is
		// read too, and the reading ends here when none follows
		w.textEnd = at
		if end := w.step(at, j, gapFrom); end >= 0 {
			return end
		}
		return at
	}
	return w.step(at, j, gapFrom)
}

// step is from past its end: one more character of target (or of tail).
func (w *walk) step(at, j, gapFrom int) int {
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
		if n := w.reads(j, sp.means); n > 0 {
			if end := w.from(at+sp.n, j+n, at+sp.n); end >= 0 {
				return end
			}
		}
		if j > 0 && gap(sp.means) && at+sp.n-gapFrom <= maxGap {
			if end := w.from(at+sp.n, j, gapFrom); end >= 0 {
				return end
			}
		}
	}
	if j > 0 {
		n, off, read := unseen(w.text, at)
		*w.budget -= read / 4
		switch {
		case off && w.cut:
			return len(w.text) // a sequence the cut ends may hide the rest
		case n > 0 && at+n-gapFrom <= maxGap:
			if end := w.from(at+n, j, gapFrom); end >= 0 {
				return end
			}
		}
	}
	if w.cut && unfinished(w.text[at:]) {
		return len(w.text) // an escape cut short may spell any character
	}
	return -1
}

// reads is how many bytes of target[j:] a character that means means
// reads: all of means, or, for a target long enough to be told apart from
// words (minFolded), an ASCII letter in the other case, as a text
// upper-cased (a header's value, a log shouting) writes it.
func (w *walk) reads(j int, means string) int {
	if j == len(w.target) {
		if len(means) == 1 && strings.IndexByte(w.tail, means[0]) >= 0 {
			return 1
		}
		return 0
	}
	rest := w.target[j:]
	if strings.HasPrefix(rest, means) {
		return len(means)
	}
	if !w.folded || rest == "" {
		return 0
	}
	if len(means) == 1 && isLetter(means[0]) && means[0]|0x20 == rest[0]|0x20 {
		return 1
	}
	// past ASCII, a letter in its other case by Unicode's simple folding: Ä, ä
	if r, size := utf8.DecodeRuneInString(means); size == len(means) && r >= utf8.RuneSelf && r != utf8.RuneError {
		if want, n := utf8.DecodeRuneInString(rest); want != utf8.RuneError && sameFold(r, want) {
			return n
		}
	}
	return 0
}

// sameFold reports whether a and b are one letter in two cases.
func sameFold(a, b rune) bool {
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

// minFolded is the shortest target, in characters, matched in either case.
const minFolded = 8

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

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
// another default-ignorable one (U+034F, U+3164, a variation selector), or
// a combining mark (U+0336 striking a character through, U+0301), or a
// byte that is no UTF-8 (printed as \xff, or drawn as U+FFFD).
func gap(means string) bool {
	r, size := utf8.DecodeRuneInString(means)
	return size == len(means) && (unicode.IsControl(r) || unicode.IsSpace(r) || r == utf8.RuneError ||
		unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector, unicode.Mn, unicode.Me))
}
