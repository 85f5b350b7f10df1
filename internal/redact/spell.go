package redact

import (
	"html"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// spelling is one character as text spells it: what it means, and how many
// bytes of text spell it.
type spelling struct {
	means string
	n     int
}

// introducers are the characters that start an escape.
const introducers = `\%&`

// maxNesting is how many times over an escape's introducer may be escaped
// itself: once for %250A and &amp;#10; (a text escaped twice), and up to
// three times for a backslash, which quoting doubles each time: \\\\n is
// \\n quoted again, and \\n a JSON- or Go-quoted text holding \n.
const maxNesting = 3

// spellings are the ways text[at:] begins with one character: as it is,
// and as each escape the Scrubber knows, its introducer written as it is or
// escaped itself, appended to buf; read is how many bytes past the first
// were read to tell.
func spellings(text string, at int, buf []spelling) (_ []spelling, read int) {
	rest := text[at:]
	_, size := utf8.DecodeRuneInString(rest)
	buf = append(buf, spelling{rest[:size], size})
	if r, n, ok := latin1Reading(rest); ok {
		buf = append(buf, spelling{string(r), n})
	}
	if r, _ := utf8.DecodeRuneInString(rest); r >= fullWidthFirst && r <= fullWidthLast {
		buf = append(buf, spelling{string(r - fullWidthOffset), size})
	}
	switch rest[0] {
	case '\n', '\r':
		// git starts a "remote: " line at a CR as at an LF
		if strings.HasPrefix(rest[1:], gitRemote) {
			buf = append(buf, spelling{rest[:1], 1 + len(gitRemote)})
		}
	case '+':
		buf = append(buf, spelling{" ", 1})
	case '=':
		// quoted-printable and RFC 2047's Q-encoding: =5F for _
		if b, ok := hexValue(rest, 1, 2); ok {
			buf = append(buf, spelling{string([]byte{byte(b)}), 3})
		}
	}
	if strings.IndexByte(introducers, rest[0]) < 0 {
		return buf, 0
	}
	first := len(buf)
	start := first
	buf, read = escapes(rest, rest[0], 1, buf)
	for range maxNesting {
		end := len(buf)
		for _, sp := range buf[start:end] {
			if escapedIntroducer(sp) {
				var r int
				buf, r = escapes(rest, sp.means[0], sp.n, buf)
				read = max(read, r)
			}
		}
		start = end
	}
	return withGitRemote(rest, buf, first), read
}

// withGitRemote adds to each escaped line break of buf[start:] (\n, %0A,
// &#10;) that git's "remote: " follows a reading that takes it too: git's
// output quoted once more (JSON, Go's %q) holds "\nremote: ".
func withGitRemote(rest string, buf []spelling, start int) []spelling {
	for _, sp := range buf[start:] {
		if (sp.means == "\n" || sp.means == "\r") && strings.HasPrefix(rest[sp.n:], gitRemote) {
			buf = append(buf, spelling{sp.means, sp.n + len(gitRemote)})
		}
	}
	return buf
}

// Full-width ASCII (U+FF01 to U+FF5E), which East Asian text and a
// confusable-minded echo write, reads as ASCII.
const (
	fullWidthFirst  = '\uff01'
	fullWidthLast   = '\uff5e'
	fullWidthOffset = 0xfee0
)

// escapedIntroducer reports whether sp is an introducer written as an
// escape: \\, %25, &amp;, \u005c.
func escapedIntroducer(sp spelling) bool {
	return sp.n > 1 && len(sp.means) == 1 && strings.IndexByte(introducers, sp.means[0]) >= 0
}

// escapes appends the readings of an escape at the start of s whose
// introducer, intro, s[:body] spells; each reading's n counts from s's
// start. read is how many bytes were read to tell.
func escapes(s string, intro byte, body int, buf []spelling) (_ []spelling, read int) {
	rest := s[body:]
	switch intro {
	case '%':
		if b, ok := hexValue(rest, 0, 2); ok {
			buf = append(buf, spelling{string([]byte{byte(b)}), body + 2})
			if b == '+' { // a space form-encoded twice
				buf = append(buf, spelling{" ", body + 2})
			}
		}
	case '\\':
		if rest == "" {
			break
		}
		if r, n, ok := jsonUnicode(s, body); ok {
			buf = append(buf, spelling{string(r), n})
		} else if short := strings.IndexByte(`"\/bfnrtav`, rest[0]); short >= 0 {
			buf = append(buf, spelling{"\"\\/\b\f\n\r\t\a\v"[short : short+1], body + 1})
		}
		// Go's %q: \xHH for a byte, \UXXXXXXXX past U+FFFF
		if b, ok := hexValue(rest, 1, 2); ok && rest[0] == 'x' {
			buf = append(buf, spelling{string([]byte{byte(b)}), body + 3})
		}
		if r, ok := hexValue(rest, 1, 8); ok && rest[0] == 'U' && utf8.ValidRune(rune(r)) {
			buf = append(buf, spelling{string(rune(r)), body + 9})
		}
		// C's and bash's $'…' octal \NNN for a byte; ECMAScript's \u{X…}
		if b, ok := octalByte(rest); ok {
			buf = append(buf, spelling{string([]byte{b}), body + 3})
		}
		if r, n, ok := braced(rest); ok {
			buf = append(buf, spelling{string(r), body + n})
		}
	case '&':
		if numeric, ok := strings.CutPrefix(rest, "#"); ok {
			return htmlNumeric(numeric, body+1, buf)
		}
		return htmlNamed(s, body, buf)
	}
	return buf, 0
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

// jsonUnicode reads uXXXX at s[body:], after a backslash s[:body] spells,
// or a surrogate pair of two, the second after the same spelling of it.
func jsonUnicode(s string, body int) (rune, int, bool) {
	u, ok := jsonUnit(s[body:])
	if !ok {
		return 0, 0, false
	}
	if utf16.IsSurrogate(u) {
		if second, ok := strings.CutPrefix(s[body+5:], s[:body]); ok {
			if low, ok := jsonUnit(second); ok {
				if r := utf16.DecodeRune(u, low); r != utf8.RuneError {
					return r, 2 * (body + 5), true
				}
			}
		}
	}
	return u, body + 5, true
}

func jsonUnit(s string) (rune, bool) {
	if len(s) < 5 || (s[0] != 'u' && s[0] != 'U') {
		return 0, false
	}
	return hexValue(s, 1, 4)
}

// htmlNumeric reads the digits of &#NN; or &#xHH; (with any number of
// leading zeros) at the start of s, what follows an "&#" that skip bytes
// spell. HTML also reads one without its ';' (&#10 before a letter): each
// count of its digits is read so, as one put before a digit of a secret
// would be. n counts skip too.
func htmlNumeric(s string, skip int, buf []spelling) (_ []spelling, read int) {
	radix := 10
	if s != "" && (s[0] == 'x' || s[0] == 'X') {
		radix, skip, s = 16, skip+1, s[1:]
	}
	zeros := len(s) - len(strings.TrimLeft(s, "0"))
	var values [8]rune // of the first 1, 2, … digits: U+10FFFF has 7
	v, digits := rune(0), 0
	for ; zeros+digits < len(s) && digits < len(values); digits++ {
		d := strings.IndexByte("0123456789abcdefABCDEF", s[zeros+digits])
		if d >= 16 {
			d -= 6
		}
		if d < 0 || d >= radix || v*rune(radix)+rune(d) > unicode.MaxRune {
			break
		}
		v = v*rune(radix) + rune(d)
		values[digits] = v
	}
	end := zeros + digits
	if end == 0 {
		return buf, skip
	}
	// the longest reading first: a match that ends here takes the first
	if end < len(s) && s[end] == ';' {
		buf = appendReference(buf, v, skip+end+1)
	}
	for i := digits - 1; i >= 0; i-- {
		buf = appendReference(buf, values[i], skip+zeros+i+1)
	}
	if digits == 0 {
		buf = appendReference(buf, 0, skip+end)
	}
	return buf, skip + end + 1
}

// appendReference appends the character a numeric reference to v stands
// for: v, and for 128 to 159 also the Windows-1252 character HTML reads
// (&#128; is €).
func appendReference(buf []spelling, v rune, n int) []spelling {
	buf = append(buf, spelling{string(v), n})
	if v >= 0x80 && v <= 0x9f {
		buf = append(buf, spelling{html.UnescapeString("&#" + strconv.Itoa(int(v)) + ";"), n})
	}
	return buf
}

// htmlNamed reads the name of a reference HTML knows that stands for one
// character at s[body:], after an "&" s[:body] spells: with its ';' (&lt;,
// &nbsp;, &NewLine;), or one of those HTML also reads without it (&nbsp,
// &shy, &lt); read is the bytes read either way.
func htmlNamed(s string, body int, buf []spelling) (_ []spelling, read int) {
	rest := s[body:]
	end := strings.IndexByte(rest[:min(len(rest), len(longestEntity)-1)], ';') + 1
	if end >= 2 && isAlnum(rest[:end-1]) {
		// only a reference that is one character, and nothing else, is
		// taken: html also reads a name without its ';' (&ltx; is "<x;")
		ref := "&" + rest[:end]
		if plain := html.UnescapeString(ref); plain != ref && utf8.RuneCountInString(plain) == 1 {
			return append(buf, spelling{plain, body + end}), body + end
		}
	}
	name := rest[:min(len(rest), longestWithoutSemicolon)]
	if i := strings.IndexFunc(name, func(r rune) bool { return !isAlnum(string(r)) }); i >= 0 {
		name = name[:i]
	}
	if len(name) >= 2 {
		// html reads the longest name it knows without a ';' that starts name
		ref := "&" + name
		if plain := html.UnescapeString(ref); plain != ref {
			r, size := utf8.DecodeRuneInString(plain)
			buf = append(buf, spelling{string(r), body + len(name) - (len(plain) - size)})
		}
	}
	return buf, body + max(end, len(name))
}

// longestEntity is the longest name of an HTML character reference;
// longestWithoutSemicolon that of one HTML also reads without its ';'.
const (
	longestEntity           = "&CounterClockwiseContourIntegral;"
	longestWithoutSemicolon = len("middot")
)

// octalByte reads three octal digits of a byte, 000 to 377, at s's start.
func octalByte(s string) (byte, bool) {
	if len(s) < 3 || s[0] < '0' || s[0] > '3' {
		return 0, false
	}
	v, err := strconv.ParseUint(s[:3], 8, 8)
	return byte(v), err == nil
}

// braced reads u{X…}, one to six hexadecimal digits of a character, at s's
// start: n bytes.
func braced(s string) (rune, int, bool) {
	if !strings.HasPrefix(s, "u{") {
		return 0, 0, false
	}
	end := strings.IndexByte(s[:min(len(s), len("u{10FFFF}"))], '}')
	if end < 3 || !isHex(s[2:end]) {
		return 0, 0, false
	}
	v, err := strconv.ParseUint(s[2:end], 16, 32)
	if err != nil || !utf8.ValidRune(rune(v)) {
		return 0, 0, false
	}
	return rune(v), end + 1, true
}

// hexValue reads n hexadecimal digits of s from index at.
func hexValue(s string, at, n int) (rune, bool) {
	if len(s) < at+n {
		return 0, false
	}
	v, err := strconv.ParseUint(s[at:at+n], 16, 32)
	return rune(v), err == nil
}

// maxUnfinished is the longest end of a text unfinished looks at, but for
// an HTML reference's, whose zeros may run on.
const maxUnfinished = len(`\\uD83D\\uDE0`)

// unfinished reports whether s, all that is left of a text, may be the start
// of a spelling the end cut short: %5, \u00, &#000, &NewLi, \x0, \\, %25,
// &amp;#1, git's "\nremo", a UTF-8 character's first bytes, or the first
// characters of git's Latin-1 spelling of one (Â of Â U+0085).
func unfinished(s string) bool {
	if len(s) == 0 || len(s) > maxUnfinished && s[0] != '&' {
		return false
	}
	if !utf8.FullRuneInString(s) || latin1Unfinished(s) {
		return true
	}
	if s[0] == '\n' {
		return strings.HasPrefix(gitRemote, s[1:])
	}
	return strings.IndexByte(introducers, s[0]) >= 0 && unfinishedEscape(s, s[0], 1, 0)
}

// unfinishedEscape reports whether s, an escape whose introducer s[:body]
// spells, may be one the end cut short, its introducer escaped or not.
func unfinishedEscape(s string, intro byte, body, depth int) bool {
	rest := s[body:]
	switch intro {
	case '%':
		if len(rest) < 2 && isHex(rest) {
			return true
		}
	case '\\':
		if rest == "" || strings.ContainsRune("uUx", rune(rest[0])) && isHex(strings.NewReplacer(`\`, "", "u", "", "U", "").Replace(rest[1:])) {
			return true
		}
		if len(rest) < 3 && strings.Trim(rest, "01234567") == "" || strings.HasPrefix(rest, "u{") && !strings.Contains(rest, "}") && isHex(rest[2:]) {
			return true // \14, \u{6
		}
	case '&':
		if len(rest) < len(longestEntity)-1 && isAlnum(rest) || strings.HasPrefix(rest, "#") && isHex(strings.TrimLeft(rest, "#xX")) {
			return true
		}
	}
	if depth == maxNesting {
		return false
	}
	var buf [8]spelling
	found, _ := escapes(s, intro, body, buf[:0])
	for _, sp := range found {
		if escapedIntroducer(sp) && unfinishedEscape(s, sp.means[0], sp.n, depth+1) {
			return true
		}
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
