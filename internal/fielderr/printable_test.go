package fielderr

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrintableShowsWhatATerminalWouldActOn(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a line feed cannot start a fake log line", "ok\n::error::forged", `ok\n::error::forged`},
		{"a carriage return cannot overwrite the line", "deployed\rfailed", `deployed\rfailed`},
		{"an ESC sequence cannot colour or clear", "\x1b[2K\x1b[31mred\x1b[0m", `\x1b[2K\x1b[31mred\x1b[0m`},
		{"a C1 CSI is shown, not obeyed", "\u009b2K", `\u009b2K`},
		{"a bell, a backspace and a tab", "a\a\b\tb", `a\a\b\tb`},
		{"DEL and NUL", "a\x7f\x00b", `a\x7f\x00b`},
		{"a bidirectional override", "abc\u202edcba", `abc\u202edcba`},
		{"a byte that is not UTF-8", "caf\xe9", `caf\xe9`},
		{"a cut multi-byte character", "\xe6\xbc", `\xe6\xbc`},
		{"printable text is kept, quotes and backslashes too", `café 漢字 😀 "q" \n \x1b`, `café 漢字 😀 "q" \n \x1b`},
		{"a replacement character that is UTF-8 is kept", "\uFFFD", "\uFFFD"},
		{"nothing", "", ""},
		{"invisible format characters", "a\u200bb\u00adc\ufeffd\u2060e\u200df\u180eg", `a\u200bb\u00adc\ufeffd\u2060e\u200df\u180eg`},
		{"a combining grapheme joiner, which no terminal shows", "to\u034fken", `to\u034fken`},
		{"a Hangul filler, a letter no terminal shows", "a\u3164b\u115fc", `a\u3164b\u115fc`},
		{"the Hangul fillers and Khmer inherent vowels a terminal draws as nothing", "\u1160\uffa0\u17b4\u17b5", `\u1160\uffa0\u17b4\u17b5`},
		{"the blank Braille pattern, a symbol drawn as a space", "to\u2800ken", `to\u2800ken`},
		{"the null notehead, drawn blank", "to\U0001D159ken", `to\U0001d159ken`},
		{"the Khitan filler, drawn blank", "to\U00016FE4ken", `to\U00016fe4ken`},
		{"a Braille pattern with dots is kept", "\u2801\u28ff", "\u2801\u28ff"},
		{"a combining mark that shows is kept", "e\u0301 n\u0303", "e\u0301 n\u0303"},
		{"an emoji's variation selector is kept", "\u2764\ufe0f", "\u2764\ufe0f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Printable(tc.in))
		})
	}
}

// Whatever a server sends, Printable's text holds only printable
// characters, keeps printable text as it is, loses nothing (unquoting it
// gives the input back) and changes nothing the second time.
func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"success", "ok\r\n\x1b[1A", "\u009b\u202e", "\xff\xfe", "é", `a\b"c`, "to\u034fken\u200b", "\u3164\u2764\ufe0f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Printable(s)
		require.True(t, utf8.ValidString(out), "%q", out)
		for _, r := range out {
			assert.True(t, visible(r), "%q holds %U", out, r)
		}
		if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !visible(r) }) {
			assert.Equal(t, s, out, "printable text is kept")
		}
		assert.Equal(t, out, Printable(out), "made printable once and for all")
		if !strings.ContainsAny(s, `\"`) {
			back, err := strconv.Unquote(`"` + out + `"`)
			require.NoError(t, err, "%q", out)
			assert.Equal(t, s, back, "nothing is lost")
		}
	})
}

// visible is what a terminal shows: a printable character that is not
// default-ignorable (U+034F, U+3164) but for a variation selector, nor the
// symbols fonts draw blank.
func visible(r rune) bool {
	return unicode.IsPrint(r) && !unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) && r != '\u2800' && r != '\U0001D159' && r != '\U00016FE4'
}

// F1 (issue #65): Printable, Quote and Join escape the same characters, so
// an error cannot read `frontend.image: unknown key` for a key that is not
// image. Every character of the planes Unicode assigns characters in (0 to
// 3, and 14 for tags and variation selectors) is tried.
func TestPrintableQuoteAndJoinAgreeOnEveryCharacter(t *testing.T) {
	for r := rune(0); r < 0xe1000; r++ {
		if r == 0x40000 {
			r = 0xe0000
		}
		if r == '"' || r == '\\' || r == '.' || r == '[' || r == ']' || unicode.IsSpace(r) || !utf8.ValidRune(r) {
			continue // quoted for a reason of their own
		}
		c := string(r)
		kept := Printable(c) == c
		if kept != (Quote(c) == `"`+c+`"`) || kept != (Join("a", c) == "a."+c) {
			t.Fatalf("%U: Printable %q, Quote %s, Join %s", r, Printable(c), Quote(c), Join("a", c))
		}
		if !kept {
			require.NotContains(t, Quote(c), c, "%U", r)
			require.NotContains(t, Join("a", c), c, "%U", r)
		}
	}
}
