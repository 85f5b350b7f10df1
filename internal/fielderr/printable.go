package fielderr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Printable is s as it may reach a terminal, a CI log or a receipt when a
// server or a file wrote it: every character a terminal would act on
// instead of show (C0 and C1 controls such as CR, LF, ESC, BEL, BS, DEL,
// U+009B CSI; bidirectional overrides and other invisible format
// characters; a letter, a mark or a symbol a terminal draws as nothing, such
// as U+034F the combining grapheme joiner, U+3164 the Hangul filler or
// U+2800 the blank Braille pattern) and every byte that is not UTF-8 is
// written as Go escapes it (\r, \n, \x1b, \u009b, \u202e, \xff), so no
// server can start a line, move the cursor or hide text. Printable text,
// quotes and backslashes included, is kept as it is. Which characters are
// escaped is decided once (Unprintable): Quote shows a value the same way,
// in quotes, and Join quotes a key that holds one.
func Printable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, Unprintable) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Unprintable(r) && unicode.IsPrint(r) && r > 0xffff: // strconv would keep it as it is
			fmt.Fprintf(&b, `\U%08x`, r)
		case Unprintable(r) && unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		case Unprintable(r):
			quoted := strconv.QuoteRune(r)
			b.WriteString(quoted[1 : len(quoted)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// PrintableEach is each of ss made Printable: the words a result's field
// holds of a server or a file (dagger call prints a field as it is).
func PrintableEach(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Printable(s)
	}
	return out
}

// Unprintable is a character a terminal acts on or draws as nothing: one
// unicode.IsPrint refuses, one of the default-ignorable characters it takes
// for a letter or a mark (U+034F, U+115F, U+3164, U+FFA0, U+17B4), or a
// symbol fonts draw blank (U+2800 the blank Braille pattern, U+1D159 the
// null notehead, U+16FE4 the Khitan filler). A variation selector, which changes how
// an emoji before it is drawn, is kept. Printable, Quote, Join and
// PrintableJSON all ask it.
func Unprintable(r rune) bool {
	return !unicode.IsPrint(r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || r == '\u2800' || r == '\U0001D159' || r == '\U00016FE4'
}

// quote is s as strconv.Quote quotes it, with what strconv keeps but a
// terminal draws as nothing escaped too: the same characters as Printable.
func quote(s string) string { return Printable(strconv.Quote(s)) }

// PrintableJSON is a JSON document as it may reach a terminal: the same JSON,
// with every character Printable would escape written as a JSON escape
// (\u009b, \u202e) and a carriage return between values as a space. Invalid
// UTF-8 is written as \ufffd, which is how JSON decoders read it.
// In JSON such characters can stand only inside strings, where an escape
// means the same; a raw CR, LF or tab stands only between values.
func PrintableJSON(doc []byte) string {
	var b strings.Builder
	for i := 0; i < len(doc); {
		r, size := utf8.DecodeRune(doc[i:])
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			b.WriteByte(' ')
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case Unprintable(r) && r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
		case Unprintable(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.Write(doc[i : i+size])
		}
		i += size
	}
	return b.String()
}
