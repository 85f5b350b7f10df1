package redact

import (
	"strings"
	"unicode/utf8"
)

// maxUnseen is the longest sequence unseen reads, in characters: a colour
// code is a few, a tag with a style a hundred, one with a utility-CSS class
// list or an OSC 8 hyperlink's opening (its URL) a few hundred.
const maxUnseen = 512

// maxAttempts bounds the readings unseen tries per character it reads: a
// tag's or a string's character is tried as its end, then as its body.
const maxAttempts = 4

// maxGap is the most text, in bytes, read as a gap between two characters
// of a secret: git's "\x1b[K\nremote: " is 12, "</span><span>" 13, a
// closing tag and an opening one of maxUnseen characters about 520.
const maxGap = 2 * maxUnseen

// unseen reads at text[at:] a sequence a terminal or a browser draws
// nothing for, however many characters it takes, each in any spelling
// (ESC as \x1b or \u001b, < as \u003c): an ECMA-48 escape sequence (CSI
// ESC [ … final byte or U+009B …, a string such as OSC ESC ] … up to BEL or
// ST, ESC and one character), an HTML or XML tag (<wbr>, </span>,
// <br/>), or a quoted-printable soft line break (=\r\n). n is its length
// in bytes, 0 when none starts there; off is set when the text ends
// inside one; read is how many characters were read to tell.
func unseen(text string, at int) (n int, off bool, read int) {
	if c := text[at]; c < utf8.RuneSelf && c != 0x1b && c != '<' && c != '=' && strings.IndexByte(introducers, c) < 0 {
		return 0, false, 0 // the common case: a character that starts none
	}
	r := reader{text: text, at: at}
	switch {
	case r.next(is(0x1b)):
		r.escape()
	case r.next(is(0x9b)):
		r.csi()
	case r.next(func(c rune) bool { return c == 0x90 || c == 0x98 || c >= 0x9d && c <= 0x9f }):
		r.str()
	case r.next(is('<')):
		if r.next(is('!')) {
			r.comment()
		} else {
			r.tag()
		}
	case r.next(is('=')):
		r.next(is('\r'))
		r.need(is('\n'))
	default:
		return 0, r.off, r.read
	}
	if r.failed {
		return 0, r.off, r.read
	}
	return r.at - at, false, r.read
}

// escape reads what follows an ESC.
func (r *reader) escape() {
	switch {
	case r.next(is('[')):
		r.csi()
	case r.next(func(c rune) bool { return strings.ContainsRune("]PX^_", c) }):
		r.str()
	default: // ESC, intermediate bytes, a final byte
		for r.next(between(0x20, 0x2f)) {
		}
		r.need(between(0x30, 0x7e))
	}
}

// csi reads a control sequence's parameter, intermediate and final bytes.
func (r *reader) csi() {
	for r.next(between(0x30, 0x3f)) {
	}
	for r.next(between(0x20, 0x2f)) {
	}
	r.need(between(0x40, 0x7e))
}

// str reads a control string (OSC, DCS, APC, …) up to BEL or ST (ESC \ or
// U+009C).
func (r *reader) str() {
	for !r.failed {
		switch {
		case r.next(func(c rune) bool { return c == 0x07 || c == 0x9c }):
			return
		case r.next(is(0x1b)):
			r.need(is('\\'))
			return
		default:
			r.need(func(c rune) bool { return c != 0x07 && c != 0x9c && c != 0x1b })
		}
	}
}

// tag reads an HTML tag after its <: a name, then anything up to >.
func (r *reader) tag() {
	r.next(is('/'))
	r.need(func(c rune) bool { return c < utf8.RuneSelf && isAlnum(string(c)) && (c < '0' || c > '9') })
	for !r.failed && !r.next(is('>')) {
		r.need(func(c rune) bool { return c != '<' && c != '>' })
	}
}

// comment reads an HTML comment after its <! (<!-- … -->), or a
// declaration (<!DOCTYPE …>) up to its >.
func (r *reader) comment() {
	if !r.next(is('-')) {
		for !r.failed && !r.next(is('>')) {
			r.need(func(c rune) bool { return c != '<' && c != '>' })
		}
		return
	}
	r.need(is('-'))
	for dashes := 0; !r.failed; {
		if dashes >= 2 && r.next(is('>')) {
			return
		}
		var c rune
		r.need(func(x rune) bool { c = x; return true })
		if c == '-' {
			dashes++
		} else {
			dashes = 0
		}
	}
}

// reader reads a sequence one character at a time, each in any spelling.
type reader struct {
	text        string
	at          int
	chars, read int // characters read; readings tried, for the bound on work
	failed, off bool
}

// next reads at r.at a character in class, in its first spelling that is
// one; false, and nothing read, when there is none.
func (r *reader) next(in func(rune) bool) bool {
	if r.failed {
		return false
	}
	if r.at >= len(r.text) || r.chars >= maxUnseen || r.read >= maxAttempts*maxUnseen {
		r.off = r.at >= len(r.text)
		return false
	}
	r.read++
	if c := r.text[r.at]; c < utf8.RuneSelf && c != '\n' && c != '+' && c != '=' && strings.IndexByte(introducers, c) < 0 {
		// an ASCII character that starts no escape spells only itself
		if in(rune(c)) {
			r.at++
			r.chars++
			return true
		}
		return false
	}
	var buf [8]spelling
	found, _ := spellings(r.text, r.at, buf[:0])
	for _, sp := range found {
		c, size := utf8.DecodeRuneInString(sp.means)
		if len(sp.means) == 1 && sp.means[0] >= 0x80 {
			c, size = rune(sp.means[0]), 1 // a C1 control as one raw byte
		}
		if size == len(sp.means) && size > 0 && in(c) {
			r.at += sp.n
			r.chars++
			return true
		}
	}
	if unfinished(r.text[r.at:]) {
		r.off = true
	}
	return false
}

// need is next for a character the sequence cannot go without.
func (r *reader) need(in func(rune) bool) {
	if !r.next(in) {
		r.failed = true
	}
}

func is(want rune) func(rune) bool { return func(c rune) bool { return c == want } }

func between(lo, hi rune) func(rune) bool { return func(c rune) bool { return c >= lo && c <= hi } }
