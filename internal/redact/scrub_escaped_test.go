package redact

import (
	"encoding/json"
	"html"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"dagger/lowcode-pipeline/internal/secret"
)

// A gap HTML reads without its ';', or escaped twice (what a server that
// echoes a JSON- or Go-quoted text quoted again shows), hides nothing of a
// secret around it.
func TestScrubFindsASecretSplitByAGapWithoutItsSemicolonOrEscapedTwice(t *testing.T) {
	s := NewScrubber(secret.New(issued))
	for _, tc := range []struct {
		name, gap string
		at        int // where in issued it goes
	}{
		{"a line feed as &#10", "&#10", 7},
		{"a line feed as &#10 before a digit of the secret, which HTML reads as &#102", "&#10", 2},
		{"a line feed as &#x0a", "&#x0a", 7},
		{"a line feed as &#X0A before a hexadecimal digit of the secret", "&#X0A", 27},
		{"a line feed as &#0000010, zero-padded", "&#0000010", 7},
		{"CR LF as &#13&#10", "&#13&#10", 16},
		{"NEL as &#133", "&#133", 16},
		{"a no-break space as &nbsp", "&nbsp", 16},
		{"a soft hyphen as &shy", "&shy", 16},
		{`a line feed as \\n`, `\\n`, 7},
		{`CR LF as \\r\\n`, `\\r\\n`, 16},
		{`a tab as \\t`, `\\t`, 16},
		{`a line feed as \\u000a`, `\\u000a`, 16},
		{`a zero-width space as \\u200B`, `\\u200B`, 16},
		{`a line feed as \\x0a`, `\\x0a`, 16},
		{`a control byte as \\x01`, `\\x01`, 16},
		{`a line feed as \\\\n, quoted three times`, `\\\\n`, 16},
		{`a line feed as \u005cn, its backslash JSON-escaped`, `\u005cn`, 16},
		{"a line feed as &amp;#10;", "&amp;#10;", 16},
		{"a no-break space as &amp;nbsp;", "&amp;nbsp;", 16},
		{"a line feed as %250A", "%250A", 16},
		{"several of them", `&#10\\r\\n&nbsp%250A`, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, tail := issued[:tc.at], issued[tc.at:]
			assert.Equal(t, "denied: *** end", s.Scrub("denied: "+head+tc.gap+tail+" end"))
			assert.Equal(t, "body ***", s.ScrubCut("body "+head+tc.gap+tail[:3]))
		})
	}
}

// A secret a server quoted twice, each character escaped twice over, is
// found as it is found quoted once.
func TestScrubFindsASecretEscapedTwice(t *testing.T) {
	once, _ := json.Marshal(tok)
	twice, _ := json.Marshal(string(once))
	const quoted = `t0k"3n\w1th-quote` // what Go's %q escapes
	for _, tc := range []struct{ name, secret, spelling string }{
		{"JSON-escaped twice", tok, string(twice)},
		{"JSON-escaped twice, its slash as \\\\/", tok, `s3cr3t-t0k3n\\/with\\u003codd\\u003echars+==`},
		{"Go-quoted twice", quoted, strconv.Quote(strconv.Quote(quoted))},
		{"HTML-escaped twice", tok, html.EscapeString(html.EscapeString(tok))},
		{"percent-encoded twice", tok, url.QueryEscape(url.QueryEscape(tok))},
		{"form-encoded twice, a space as %2B", "tok en with spaces 42", url.QueryEscape(url.QueryEscape("tok en with spaces 42"))},
		{"HTML references without ';'", tok, "s3cr3t&#45t0k3n&#x2Fwith&ltodd&gtchars&#43&#61="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := NewScrubber(secret.New(tc.secret)).Scrub("before: " + tc.spelling + " :after")
			assert.NotContains(t, out, tc.spelling)
			assert.Contains(t, out, "***")
			assert.True(t, strings.HasPrefix(out, "before: ") && strings.HasSuffix(out, " :after"), "the text around it is kept: %q", out)
		})
	}
}

// A text cut inside an escape whose introducer is escaped itself hides
// what it follows of a secret.
func TestScrubCutHidesASecretCutInsideAnEscapeEscapedTwice(t *testing.T) {
	s := NewScrubber(secret.New(issued))
	for _, end := range []string{`\\`, `\\u00`, `\\x0`, `\u005c`, `\\uD83D\\uDE0`, "%25", "%250", "&amp;", "&amp;#1", "&#1"} {
		t.Run(end, func(t *testing.T) {
			assert.Equal(t, "body ***", s.ScrubCut("body "+issued[:20]+end))
		})
	}
}

// Outside a secret's spelling, a reference without its ';' or an escape
// escaped twice is kept as it is.
func TestScrubKeepsEscapesEscapedTwiceOutsideASecret(t *testing.T) {
	s := NewScrubber(secret.New(issued))
	for _, text := range []string{
		`{"log":"line one\\nline two \\u00e9 \\x41"}`,
		"a&#10b &nbspc &amp;#10; %250A",
		issued[:16] + `\\n` + issued[17:],
		issued[:16] + "&#10" + issued[16:20],
		`\\\\\\\\\\\\\\\\ &amp;amp;amp;amp; %25252525`,
	} {
		assert.Equal(t, text, s.Scrub(text), "%q", text)
	}
}

// Escapes escaped over and over, against a secret made of their
// introducers, are read in bounded time.
func TestEscapesEscapedOverAndOverAreSearchedInBoundedTime(t *testing.T) {
	for _, tc := range []struct{ secret, text string }{
		{strings.Repeat(`\`, 40) + "x", strings.Repeat(`\\`, 8<<10)},
		{strings.Repeat("&", 40) + "x", strings.Repeat("&amp;", 4<<10)},
		{strings.Repeat("%", 40) + "x", strings.Repeat("%25", 6<<10)},
		{issued, strings.Repeat(issued[:20]+`\\n&#10&amp;#10;`, 1<<10)},
	} {
		start := time.Now()
		NewScrubber(secret.New(tc.secret)).Scrub(tc.text)
		assert.Less(t, time.Since(start), 5*time.Second, "%.20q", tc.secret)
	}
}

// Only digits are read as a reference's digits: &#1 followed by a control
// byte is U+0001 and that byte, and HTML's name for a character, read
// without its ';', is only the name it knows.
func TestAReferenceWithoutItsSemicolonReadsOnlyItsDigits(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []spelling
	}{
		{"a decimal reference", "&#10x", []spelling{{"\n", 4}, {"\x01", 3}}},
		{"a decimal reference before digits", "&#102", []spelling{{"f", 5}, {"\n", 4}, {"\x01", 3}}},
		{"with its ';'", "&#10;", []spelling{{"\n", 5}, {"\n", 4}, {"\x01", 3}}},
		{"a hexadecimal reference in capitals", "&#X0A;", []spelling{{"\n", 6}, {"\n", 5}}},
		{"not a control byte after it", "&#1\x10", []spelling{{"\x01", 3}}},
		{"only zeros", "&#00x", []spelling{{"\x00", 4}}},
		{"a name HTML reads without ';'", "&nbspx", []spelling{{"\u00a0", 5}}},
		{"the longest such name", "&notin", []spelling{{"¬", 4}}},
		{"a name with its ';'", "&notin;", []spelling{{"∉", 7}}},
		{"a name HTML reads only with its ';'", "&NewLine", nil},
		{"Windows-1252 as HTML reads it", "&#128;", []spelling{{"\u0080", 6}, {"€", 6}, {"\u0080", 5}, {"€", 5}, {"\x0c", 4}, {"\x01", 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := escapes(tc.text, '&', 1, nil)
			assert.Equal(t, tc.want, got)
		})
	}
}

// A long secret escaped twice, or in references without their ';', is
// searched in full: the work each reading costs leaves room for it.
func TestALongSecretEscapedTwiceIsSearchedInFull(t *testing.T) {
	b := make([]byte, 3<<10)
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyz0123456789-_"[(i*7919+i*i)%38]
	}
	long := string(b)
	once, _ := json.Marshal(long)
	twice, _ := json.Marshal(string(once))
	var refs strings.Builder
	for _, r := range long {
		refs.WriteString("&#" + strconv.Itoa(int(r)))
	}
	for _, spelling := range []string{string(twice), refs.String(), url.QueryEscape(url.QueryEscape(long)), wrap(long, 7, `\\n`)} {
		out := NewScrubber(secret.New(long)).Scrub("x " + spelling + " y")
		assert.Equal(t, "x *** y", strings.NewReplacer(`"`, "", `\`, "").Replace(out), "%.40q", spelling)
	}
}
