package redact

import (
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"dagger/lowcode-pipeline/internal/secret"
)

const issued = "Tk9zQ7pL2mX4vR8wS1yB6nC3hJ5dF0gA"

// latin1 is s's UTF-8 bytes read as Latin-1, as git re-encodes a remote's
// text/plain message that names no charset.
func latin1(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}

func zeroPadded(s string, width int) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, "&#%0*d;", width, r)
	}
	return b.String()
}

func TestScrubFindsASecretSplitByAGapInAnySpelling(t *testing.T) {
	head, tail := issued[:7], issued[7:]
	for _, tc := range []struct{ name, text string }{
		{"split by a control byte Go's %q wrote as \\x01", fmt.Sprintf("%q", head+"\x01"+tail)},
		{"split by ESC Go's %q wrote as \\x1b", fmt.Sprintf("%q", head+"\x1b"+tail)},
		{"split by BEL Go's %q wrote as \\a", fmt.Sprintf("%q", head+"\a"+tail)},
		{"split by a vertical tab Go's %q wrote as \\v", fmt.Sprintf("%q", head+"\v"+tail)},
		{"split by NEL Go's %q wrote as \\u0085", fmt.Sprintf("%q", head+"\u0085"+tail)},
		{"split by a gap written as \\U00000085", head + `\U00000085` + tail},
		{"split by NEL that git re-encoded as Latin-1", latin1(head + "\u0085" + tail)},
		{"split by a no-break space that git re-encoded as Latin-1", latin1(head + "\u00a0" + tail)},
		{"split by CSI that git re-encoded as Latin-1", latin1(head + "\u009b" + tail)},
		{"split by a line separator that git re-encoded as Latin-1", latin1(head + "\u2028" + tail)},
		{"split by an ideographic space that git re-encoded as Latin-1", latin1(head + "\u3000" + tail)},
		{"as HTML references zero-padded to 10 digits", zeroPadded(issued, 10)},
		{"as HTML references zero-padded to 200 digits", zeroPadded(issued, 200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := NewScrubber(secret.New(issued)).Scrub("denied: " + tc.text + " end")
			want := "denied: *** end"
			if strings.HasPrefix(tc.text, `"`) {
				want = `denied: "***" end`
			}
			assert.Equal(t, want, out)
		})
	}
}

func TestScrubKeepsOrdinaryEscapesAndLatin1Text(t *testing.T) {
	s := NewScrubber(secret.New(issued))
	for _, text := range []string{
		`a Go-quoted "x\x01y\a" and \U0001F600`,
		"Â café, naïve, Ã©",
		"&#00000000000000000000065; and &#0000",
		strings.Repeat("&#", 100) + strings.Repeat("0", 5000),
	} {
		assert.Equal(t, text, s.Scrub(text), "%q", text)
	}
}

// A text cut short (a body read up to a limit) may end inside a spelling:
// what the cut leaves of it is hidden too, however little.
func TestScrubCutHidesASecretTheCutLeavesPartOf(t *testing.T) {
	s := NewScrubber(secret.New(issued))
	for _, tc := range []struct{ name, text string }{
		{"the secret cut after 30 characters", "body " + issued[:30]},
		{"the secret cut after its first character", "body " + issued[:1]},
		{"the secret cut after a line break", "body " + issued[:12] + "\r\n"},
		{"the secret cut inside a percent escape", "body %54%6B%39%7A%5"},
		{"the secret cut inside a JSON escape", `body \u0054\u006b\u0039\u00`},
		{"the secret cut inside a zero-padded HTML reference", "body &#84;&#107;&#57;&#000000"},
		{"the secret cut inside a Go escape", `body Tk9zQ7p\x0`},
		{"base64 of the header cut short", "body " + b64("Bearer " + issued)[:30]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := s.ScrubCut(tc.text)
			assert.Equal(t, "body ***", out)
		})
	}
	// (a letter at the very end may start the secret in either case: "and text." ends in none)
	assert.Equal(t, "a whole *** and text.", s.ScrubCut("a whole "+issued+" and text."), "a text that ends elsewhere keeps its end")
	assert.Equal(t, "x "+issued[:5]+" y", s.Scrub("x "+issued[:5]+" y"), "Scrub, on a text that is whole, keeps a mere start")
}

// A text cut anywhere inside a spelling of the secret shows none of what
// the cut left of it (a few bytes, such as "&#", may say nothing of it).
func FuzzScrubCutLeavesNoPieceOfTheSecret(f *testing.F) {
	f.Add(issued, "body ", uint8(0), uint16(20))
	f.Add("ghp_0123456789abcdef", "", uint8(1), uint16(7))
	f.Add("tok en/with<odd>", "x", uint8(2), uint16(30))
	f.Add("t\u00f6ken-\u2028-v\u00e4lue", "\u00c2", uint8(0), uint16(13))
	f.Add("t\u00f6ken-\u200b-value&nbsp;", "&NewLi", uint8(3), uint16(40))
	f.Fuzz(func(t *testing.T, tok, before string, kind uint8, cut uint16) {
		if len(tok) < 8 || len(tok) > 512 || strings.ContainsAny(tok, "*") || !utf8.ValidString(tok) {
			t.Skip()
		}
		escaped, _ := json.Marshal(tok)
		twice, _ := json.Marshal(string(escaped))
		spellings := []string{tok, url.QueryEscape(tok), strings.Trim(string(escaped), `"`), html.EscapeString(tok), zeroPadded(tok, 12), b64("Bearer " + tok),
			strings.Trim(string(twice), `"`), wrap(tok, 1+int(kind)%7, gaps[int(kind)%len(gaps)])}
		spelling := spellings[int(kind)%len(spellings)]
		if int(kind)%len(spellings) == len(spellings)-1 && extendsReference(tok, 1+int(kind)%7, gaps[int(kind)%len(gaps)]) {
			t.Skip() // no spelling: HTML reads the gap and the secret's next character as one reference
		}
		left := spelling[:min(int(cut), len(spelling))]
		if len(left) < 12 || strings.Contains(before, left) {
			t.Skip()
		}
		out := NewScrubber(secret.New(tok)).ScrubCut(before + left)
		if out == Unscrubbable {
			return
		}
		assert.NotContains(t, out, left)
	})
}

// extendsReference says whether wrapping s every n bytes with gap, an HTML
// reference written without its ';' (&nbsp, &#10), puts after a gap a
// character HTML reads as part of it: a ';', or a digit of a numeric
// reference. "0&nbsp;" reads as 0 and a space in HTML, so such a wrapping
// is no spelling of the secret.
func extendsReference(s string, n int, gap string) bool {
	if !strings.HasPrefix(gap, "&") || strings.HasSuffix(gap, ";") || n <= 0 {
		return false
	}
	extends := ";"
	switch {
	case strings.HasPrefix(gap, "&#x"), strings.HasPrefix(gap, "&#X"):
		extends += "0123456789abcdefABCDEF"
	case strings.HasPrefix(gap, "&#"):
		extends += "0123456789"
	}
	for i := n; i < len(s); i += n {
		if strings.ContainsRune(extends, rune(s[i])) {
			return true
		}
	}
	return false
}

// An invisible character (a format character, a combining grapheme joiner)
// between two characters of a secret hides nothing from a reader, so it is
// a gap like a line break; so are the named HTML references of a space or a
// line break. Outside a secret's spelling such text is kept as it is.
func TestScrubFindsASecretSplitByAnInvisibleCharacter(t *testing.T) {
	s := NewScrubber(secret.New(issued))
	head, tail := issued[:16], issued[16:]
	for _, tc := range []struct{ name, gap string }{
		{"a zero-width space", "\u200b"},
		{"a soft hyphen", "\u00ad"},
		{"a byte order mark", "\ufeff"},
		{"a word joiner", "\u2060"},
		{"a zero-width joiner", "\u200d"},
		{"a Mongolian vowel separator", "\u180e"},
		{"a combining grapheme joiner", "\u034f"},
		{"a right-to-left override", "\u202e"},
		{"a Hangul filler", "\u3164"},
		{"a no-break space as &nbsp;", "&nbsp;"},
		{"a line break as &NewLine;", "&NewLine;"},
		{"a zero-width space as &ZeroWidthSpace;", "&ZeroWidthSpace;"},
		{"a zero-width space as &#8203;", "&#8203;"},
		{"a zero-width space JSON-escaped", `\u200b`},
		{"a soft hyphen that git re-encoded as Latin-1", latin1("\u00ad")},
		{"several of them", "\u200b&nbsp;\u034f\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, "denied: *** end", s.Scrub("denied: "+head+tc.gap+tail+" end"))
			assert.Equal(t, "body ***", s.ScrubCut("body "+head+tc.gap+tail[:3]))
		})
	}
	for _, text := range []string{
		"a\u200bb&nbsp;c&NewLine;d\u034fe",
		"&nbsp;" + issued[:20] + "&NewLine;" + "&notanentity; &ltx; &amp",
		issued[:16] + "\u200b" + issued[17:],
	} {
		assert.Equal(t, text, s.Scrub(text), "%q", text)
	}
}

// A text cut right after the first half of git's Latin-1 spelling of a
// character (Â of Â U+0085, â of U+2028's three) or inside the two bytes of
// that Â ends in a spelling the cut left unfinished: what it follows of a
// secret is hidden.
func TestScrubCutHidesASecretCutInsideALatin1Spelling(t *testing.T) {
	s := NewScrubber(secret.New(issued))
	for _, tc := range []struct{ name, end string }{
		{"after Â, the lead of NEL", "\u00c2"},
		{"after Ã, the lead of a soft hyphen", "\u00c3"},
		{"after â, the lead of a line separator", "\u00e2"},
		{"after â and U+0080, two of a line separator's three", "\u00e2\u0080"},
		{"after ð, the lead of a four-byte character", "\u00f0"},
		{"inside Â's own bytes", "\xc3"},
		{"inside the second character of a line separator's spelling", "\u00e2\xc2"},
		{"inside a multi-byte character", "\xe2\x80"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, "body ***", s.ScrubCut("body "+issued[:30]+tc.end))
		})
	}
	t.Run("the reviewer's body, cut at 8 KiB", func(t *testing.T) {
		body := strings.Repeat(".", 8192-32) + issued[:30] + "\u00c2\u0085" + issued[30:] + "zzzz"
		out := s.ScrubCut(body[:8192])
		assert.NotContains(t, out, issued[:12])
		assert.Equal(t, strings.Repeat(".", 8192-32)+"***", out)
	})
	assert.Equal(t, "café Â", s.Scrub("café Â"), "a whole text keeps a Latin-1 letter at its end")
	assert.Equal(t, "body "+issued[:30]+"Âx", s.ScrubCut("body "+issued[:30]+"Âx"), "a Latin-1 letter that something follows is no cut spelling")
}
