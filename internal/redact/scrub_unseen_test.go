package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"dagger/lowcode-pipeline/internal/secret"
)

// each is f of every byte of s, joined.
func each(s string, f func(c byte) string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString(f(s[i]))
	}
	return b.String()
}

// A terminal draws nothing for an escape sequence and a browser nothing for
// a tag: a person reads a secret straight through them, so each, and any
// number of them, is a gap, in any spelling of its characters (#65, S1).
func TestScrubFindsASecretSplitBySequencesNothingDraws(t *testing.T) {
	head, tail := issued[:18], issued[18:]
	for _, tc := range []struct{ name, text, want string }{
		{"a colour reset between halves", head + "\x1b[0m" + tail, ""},
		{"a colour set and reset around every character", each(issued, func(c byte) string { return "\x1b[1m" + string(c) + "\x1b[22m" }),
			"denied: \x1b[1m***\x1b[22m end"}, // what is around the secret is not of it
		{"git's clear to the end of a line before a remote's next line", head + "\x1b[K\nremote: " + tail, ""},
		{"a 256-colour code with parameters", head + "\x1b[38;5;196m" + tail, ""},
		{"an 8-bit CSI", head + "\u009b31m" + tail, ""},
		{"an OSC 8 hyperlink ended by BEL and by ST", head + "\x1b]8;;https://x.example/\a" + issued[18:20] + "\x1b]8;;\x1b\\" + issued[20:], ""},
		{"ESC and one character (save the cursor)", head + "\x1b7" + tail, ""},
		{"the colour reset as Go's %q writes it", fmt.Sprintf("%q", head+"\x1b[0m"+tail), ""},
		{"the colour reset as JSON writes it", head + `\u001b[0m` + tail, ""},
		{"<wbr> every 8 characters", wrap(issued, 8, "<wbr>"), ""},
		{"<br> and a line break", head + "<br>\n" + tail, ""},
		{"a <span> around every character", each(issued, func(c byte) string { return "<span>" + string(c) + "</span>" }),
			"denied: <span>***</span> end"},
		{"a tag with attributes and a self-closing one", head + `<span class="hl" style="color:red">` + "<br/>" + tail, ""},
		{"a tag as Go's JSON encoder escapes it", head + `\u003cwbr\u003e` + tail, ""},
		{"a quoted-printable soft line break", head + "=\r\n" + tail, ""},
		{"a quoted-printable soft line break without its \\r", head + "=\n" + tail, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := NewScrubber(secret.New(issued)).Scrub("denied: " + tc.text + " end")
			want := "denied: *** end"
			if strings.HasPrefix(tc.text, `"`) {
				want = `denied: "***" end`
			}
			if tc.want != "" {
				want = tc.want
			}
			assert.Equal(t, want, out)
		})
	}
}

// Spellings less likely in an echo, each found whole (#65, S2, S3).
func TestScrubFindsASecretInLessLikelySpellings(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"percent-encoded twice, as a proxy re-escaping a path writes it", each(issued, func(c byte) string { return fmt.Sprintf("%%25%02X", c) }), ""},
		{"hexadecimal", hex.EncodeToString([]byte(issued)), ""},
		{"hexadecimal in capitals", strings.ToUpper(hex.EncodeToString([]byte(issued))), ""},
		{"a hexadecimal dump, a space between bytes", strings.TrimSpace(each(issued, func(c byte) string { return fmt.Sprintf("%02x ", c) })), ""},
		{"octal escapes, as C and bash's $'…' write them", each(issued, func(c byte) string { return fmt.Sprintf(`\%03o`, c) }), ""},
		{"ECMAScript \\u{…} escapes", each(issued, func(c byte) string { return fmt.Sprintf(`\u{%x}`, c) }), ""},
		// padding holds nothing of the secret; the character before it does
		{"base64 of its UTF-16LE bytes, as PowerShell encodes a command", base64.StdEncoding.EncodeToString([]byte(utf16LE(issued))), "denied: ***== end"},
		{"base64 of the header in UTF-16LE", base64.StdEncoding.EncodeToString([]byte(utf16LE("Bearer " + issued))), ""},
		{"upper-cased", strings.ToUpper(issued), ""},
		{"lower-cased", strings.ToLower(issued), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := "denied: *** end"
			if tc.want != "" {
				want = tc.want
			}
			assert.Equal(t, want, NewScrubber(secret.New(issued)).Scrub("denied: "+tc.text+" end"))
		})
	}
}

// Outside a secret, sequences, tags, escapes and words in capitals are
// kept as they are; a secret shorter than minFolded is matched in its own
// case only; and a gap is at most maxGap bytes, so a secret's halves far
// apart are not joined.
func TestScrubKeepsSequencesAndOtherCasesOutsideASecret(t *testing.T) {
	s := NewScrubber(secret.New(issued))
	for _, text := range []string{
		"\x1b[31merror\x1b[0m: <b>denied</b> =\r\n \\147\\150 \\u{67} \x1b]0;title\a",
		issued[:18] + "\x1b[0m" + "and no more",
		issued[:18] + "<p" + issued[18:], // no tag: it never ends
		issued[:18] + "<" + strings.Repeat("a", maxUnseen) + ">" + issued[18:],
		issued[:18] + strings.Repeat("\x1b[0m", maxGap/4+1) + issued[18:],
		"TK9ZQ7P", // the start alone
	} {
		assert.Equal(t, text, s.Scrub(text), "%q", text)
	}
	short := NewScrubber(secret.New("abc1234"))
	assert.Equal(t, "ABC1234 ***", short.Scrub("ABC1234 abc1234"))
}

// A text cut inside a sequence that follows part of a secret shows none of
// that part: the sequence may have gone on to its rest.
func TestScrubCutHidesASecretCutInsideASequence(t *testing.T) {
	s := NewScrubber(secret.New(issued))
	for _, text := range []string{
		"body " + issued[:18] + "\x1b[3",
		"body " + issued[:18] + "<span cla",
		"body " + issued[:18] + `\u001b[`,
		"body " + issued[:18] + "=\r",
	} {
		assert.Equal(t, "body ***", s.ScrubCut(text), "%q", text)
	}
}

// Sequences and tags a server repeats after each start of a secret, or
// that never end, are read in bounded time.
func TestSequencesAfterASecretsStartAreSearchedInBoundedTime(t *testing.T) {
	for _, text := range []string{
		strings.Repeat(issued[:1]+"\x1b["+strings.Repeat("1;", 60), 2<<10),
		strings.Repeat(issued[:1]+"<a "+strings.Repeat("x", 120), 2<<10),
		strings.Repeat(issued[:4]+"<b></b>\x1b[0m", 4<<10),
		issued[:1] + strings.Repeat("<b>", 40<<10),
	} {
		start := time.Now()
		out := NewScrubber(secret.New(issued)).Scrub(text)
		assert.NotEqual(t, Unscrubbable, out, "%.40q", text)
		assert.Less(t, time.Since(start), 5*time.Second, "%.40q", text)
	}
}
