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
	assert.Equal(t, "a whole *** and text", s.ScrubCut("a whole "+issued+" and text"), "a text that ends elsewhere keeps its end")
	assert.Equal(t, "x "+issued[:5]+" y", s.Scrub("x "+issued[:5]+" y"), "Scrub, on a text that is whole, keeps a mere start")
}

// A text cut anywhere inside a spelling of the secret shows none of what
// the cut left of it (a few bytes, such as "&#", may say nothing of it).
func FuzzScrubCutLeavesNoPieceOfTheSecret(f *testing.F) {
	f.Add(issued, "body ", uint8(0), uint16(20))
	f.Add("ghp_0123456789abcdef", "", uint8(1), uint16(7))
	f.Add("tok en/with<odd>", "x", uint8(2), uint16(30))
	f.Fuzz(func(t *testing.T, tok, before string, kind uint8, cut uint16) {
		if len(tok) < 8 || len(tok) > 512 || strings.ContainsAny(tok, "*") || !utf8.ValidString(tok) {
			t.Skip()
		}
		escaped, _ := json.Marshal(tok)
		spellings := []string{tok, url.QueryEscape(tok), strings.Trim(string(escaped), `"`), html.EscapeString(tok), zeroPadded(tok, 12), b64("Bearer " + tok)}
		spelling := spellings[int(kind)%len(spellings)]
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
