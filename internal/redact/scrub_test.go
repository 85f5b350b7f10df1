package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/secret"
)

const tok = "s3cr3t-t0k3n/with<odd>chars+=="

// wrap breaks s every n characters with brk, as MIME (76, CRLF), PEM (64,
// LF) and header folding (CRLF and a space) do.
func wrap(s string, n int, brk string) string {
	var b strings.Builder
	for i := 0; i < len(s); i += n {
		if i > 0 {
			b.WriteString(brk)
		}
		b.WriteString(s[i:min(i+n, len(s))])
	}
	return b.String()
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// asciiUpper is s with its ASCII letters in capitals, the rest as it is.
func asciiUpper(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
}

func TestScrubHidesEverySpellingOfASecret(t *testing.T) {
	goJSON, _ := json.Marshal(tok) // Go escapes <, > as \u003c, \u003e
	header := "Authorization: Bearer " + tok
	for _, tc := range []struct {
		name, secret, spelling string
	}{
		{"as it is", tok, tok},
		{"in a URL's path", tok, "https://evil.example.com/echo/" + tok + "/x"},
		{"percent-encoded in a URL's path", tok, "https://evil.example.com/echo/" + url.PathEscape(tok)},
		{"percent-encoded in a query", tok, "?echo=" + url.QueryEscape(tok)},
		{"percent-encoded in lower case", tok, "s3cr3t-t0k3n%2fwith%3codd%3echars%2b%3d%3d"},
		{"a space form-encoded as +", "tok en with spaces 42", "q=tok+en+with+spaces+42"},
		{"JSON-escaped by Go", tok, string(goJSON)},
		{"JSON with escaped slashes and dashes", tok, `s3cr3t\u002dt0k3n\/with\u003codd\u003echars+==`},
		{"JSON with upper-case escapes", tok, `s3cr3t\u002Dt0k3n\/with\u003Codd\u003Echars+==`},
		{"JSON with a surrogate pair", "t0ken-😀-value", `t0ken-\ud83d\ude00-value`},
		{"HTML-escaped", tok, html.EscapeString(tok)},
		{"HTML numeric entities", tok, "s3cr3t&#45;t0k3n&#x2F;with&lt;odd&gt;chars&#43;&#61;="},
		{"split across lines", tok, tok[:11] + "\n" + tok[11:]},
		{"split across lines with CRLF and indentation", tok, tok[:5] + "\r\n    " + tok[5:20] + "\r\n    " + tok[20:]},
		{"split with a JSON-escaped line break", tok, tok[:9] + `\n` + tok[9:]},
		{"base64 of the secret", tok, b64(tok)},
		{"base64 of Bearer and the secret", tok, b64("Bearer " + tok)},
		{"URL-safe base64", tok, base64.URLEncoding.EncodeToString([]byte("Bearer " + tok))},
		{"base64 of the header, aligned", tok, b64(header)},
		{"base64 of the header, one byte in", tok, b64("x" + header)},
		{"base64 of the header, two bytes in", tok, b64("xy" + header)},
		{"base64 of the header wrapped as PEM", tok, wrap(b64("GET / HTTP/1.1\r\n"+header+"\r\n"), 64, "\n")},
		{"base64 of the header wrapped as MIME", tok, wrap(b64("x"+header), 76, "\r\n")},
		{"base64 folded as a header", tok, wrap(b64("xy"+header), 20, "\r\n ")},
		{"base64 wrapped in JSON", tok, `"` + wrap(b64(header), 8, `\n`) + `"`},
		{"base64 with JSON-escaped slashes", tok, strings.ReplaceAll(b64("Bearer "+tok), "/", `\/`)},
		{"base64 percent-encoded", tok, url.QueryEscape(b64("Bearer " + tok))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScrubber(secret.New(tc.secret))
			out := s.Scrub("before: " + tc.spelling + " :after")
			assert.NotContains(t, out, tc.secret)
			assert.NotContains(t, out, tc.spelling)
			assert.Contains(t, out, "***")
			assert.True(t, strings.HasPrefix(out, "before: ") && strings.HasSuffix(out, " :after"), "the text around it is kept: %q", out)
		})
	}
}

// An echo cut into lines at any column, the secret's or its base64's,
// with any line break, is scrubbed whole: what is left of it is what comes
// before the secret, and the few characters at the ends of its base64 that
// the bytes around it decide.
func TestScrubHidesASecretWrappedAtAnyColumn(t *testing.T) {
	s := NewScrubber(secret.New(tok))
	for _, brk := range []string{"\n", "\r\n", "\r\n\t", `\r\n`, "%0D%0A"} {
		for _, tc := range []struct {
			spelling string
			before   int // bytes encoded before the secret
		}{{tok, 0}, {b64("Bearer " + tok), 0}, {b64("x-Authorization: Bearer " + tok), len("x-Authorization: ")}} {
			for col := 1; col <= 80; col++ {
				out := s.Scrub("<" + wrap(tc.spelling, col, brk) + ">")
				require.NotContains(t, out, tok, "%q at %d", brk, col)
				left := len(strings.ReplaceAll(out, brk, "")) - len("<***>")
				require.LessOrEqual(t, left, (tc.before*4+2)/3+8, "what is left of the echo: %q (%q at %d)", out, brk, col)
			}
		}
	}
}

func TestScrubKeepsWhatOnlyResemblesASecret(t *testing.T) {
	s := NewScrubber(secret.New(tok))
	for _, text := range []string{
		"",
		"plain text with no secret",
		tok[:len(tok)-1] + " and the rest",
		tok[:10] + "X" + tok[10:],
		b64("Bearer s3cr3t-t0k3n/with<odd>charz+=="),
		`\u0073\u0033 %73%33 &#115;`,
		"s3cr3t-t0k3n\n\nlater",
	} {
		assert.Equal(t, text, s.Scrub(text), "%q", text)
	}
	assert.Equal(t, "anything "+tok, Scrubber{}.Scrub("anything "+tok), "the zero Scrubber knows no secret")
	assert.Equal(t, "x", NewScrubber(secret.Text{}).Scrub("x"), "an unset secret is none")
}

func TestScrubHidesEachOfSeveralSecrets(t *testing.T) {
	s := NewScrubber(secret.New("first-secret-1111"), secret.New("second-secret-2222"))
	out := s.Scrub("a first-secret-1111 b " + b64("user:second-secret-2222") + " c")
	assert.NotContains(t, out, "first-secret-1111")
	assert.NotContains(t, out, b64("user:second-secret-2222"))
	assert.True(t, strings.HasPrefix(out, "a *** b ") && strings.HasSuffix(out, " c"), out)
}

func TestAShortSecretIsScrubbedToo(t *testing.T) {
	// base64 of a secret under 8 bytes has no piece long enough to search
	// for safely, but of "Bearer <secret>" it has; the secret itself and
	// its textual spellings are removed whatever its length
	for _, short := range []string{"0", "ab", "a/c", "abcd", "abcdefg"} {
		t.Run(short, func(t *testing.T) {
			s := NewScrubber(secret.New(short))
			escaped, _ := json.Marshal(short)
			for _, spelling := range []string{short, strings.Trim(string(escaped), `"`), url.QueryEscape(short), html.EscapeString(short), b64("Bearer " + short)} {
				out := s.Scrub("<" + spelling + ">")
				assert.NotContains(t, out, short)
				assert.NotContains(t, out, spelling)
			}
		})
	}
}

// A server that knows the secret can send text that matches its start at
// every byte; the work is bounded and such a text is not shown at all.
func TestATextTooCostlyToSearchIsNotShown(t *testing.T) {
	repetitive := strings.Repeat("a", 8191) + "b"
	start := time.Now()
	out := NewScrubber(secret.New(repetitive)).Scrub(strings.Repeat("a", 72<<10))
	assert.Equal(t, Unscrubbable, out)
	assert.Less(t, time.Since(start), 5*time.Second)

	b := make([]byte, 6<<10)
	for i := range b {
		b[i] = byte(i*7919 + i*i)
	}
	long := base64.RawURLEncoding.EncodeToString(b)
	quoted, _ := json.Marshal(long)
	echo := strings.Repeat("x", 8<<10) + long + string(quoted) + url.QueryEscape(long) + wrap(b64("Bearer "+long), 76, "\r\n") + strings.Repeat("y", 30<<10)
	start = time.Now()
	out = NewScrubber(secret.New(long)).Scrub(echo)
	assert.NotEqual(t, Unscrubbable, out, "a long secret echoed in every spelling is searched in full")
	assert.NotContains(t, out, long[:100])
	assert.Less(t, time.Since(start), 5*time.Second)
}

// A Scrubber printed by mistake shows no secret.
func TestAPrintedScrubberHidesItsSecrets(t *testing.T) {
	s := NewScrubber(secret.New(tok))
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x"} {
		out := fmt.Sprintf(verb, s)
		assert.NotContains(t, out, tok)
		assert.NotContains(t, out, b64(tok)[:12])
		assert.NotContains(t, out, fmt.Sprintf("%x", tok)[:24])
	}
}

// gaps are what a secret's echo is wrapped with: line breaks as they are,
// escaped, escaped twice, and as HTML reads them without their ';'.
var gaps = []string{
	"\n", "\r\n", "\r\n ", `\n`, `\\n`, `\\r\\n`, `\\t`, `\\u000a`, `\\x0a`, `\\\\n`, `\u005cn`,
	"&#10", "&#x0A", "&#13&#10", "&#0000010", "&nbsp", "&shy", "&amp;#10;", "%250A",
	"\x1b[0m", "\x1b[K\nremote: ", `\u001b[0m`, "<wbr>", "<br>\n", "</span><span>", "=\r\n",
}

// For any secret and any text around it, no spelling of the secret the
// Scrubber knows survives, however it is wrapped.
func FuzzScrubLeavesNoSpellingOfTheSecret(f *testing.F) {
	f.Add("s3cr3t-t0k3n/with<odd>chars", "before ", " after", uint8(0), uint8(0))
	f.Add("ghp_0123456789abcdefABCDEF", "", "", uint8(3), uint8(64))
	f.Add("tok en-with-space", "\\", "%", uint8(5), uint8(7))
	f.Add("t\u00f6ken\u034f-with-\u200b-inside", "&nbsp;\u00c2", "\u00c2\u0085&NewLine;", uint8(10), uint8(3))
	f.Add("ghp_0123456789abcdefABCDEF", "\ufeff", "&ZeroWidthSpace;", uint8(0), uint8(5))
	f.Fuzz(func(t *testing.T, tok, before, after string, kind, col uint8) {
		// A bearer token fits an HTTP header line and is UTF-8, as
		// webhook.Prepare requires; '*' is what Scrub writes.
		if len(tok) < 8 || len(tok) > 2048 || strings.Contains(tok, "*") || !utf8.ValidString(tok) {
			t.Skip()
		}
		escaped, _ := json.Marshal(tok)
		// what is wrapped at a column: the secret as it is and its base64 (a
		// line break inside an escape such as %2F is no spelling Scrub knows)
		wrappable := []string{
			tok, b64(tok), b64("Bearer " + tok), base64.URLEncoding.EncodeToString([]byte("Bearer " + tok)),
			b64("Authorization: Bearer " + tok), b64("x-Authorization: Bearer " + tok), b64("xy-Authorization: Bearer " + tok),
		}
		twice, _ := json.Marshal(string(escaped))
		spellings := append(wrappable, string(escaped), url.QueryEscape(tok), url.PathEscape(tok), html.EscapeString(tok),
			string(twice), strconv.Quote(strconv.Quote(tok)), url.QueryEscape(url.QueryEscape(tok)), html.EscapeString(html.EscapeString(tok)),
			hex.EncodeToString([]byte(tok)), asciiUpper(tok), b64(utf16LE(tok)))
		spelling := spellings[int(kind)%len(spellings)]
		if spelling == asciiUpper(tok) && utf8.RuneCountInString(tok) < minFolded {
			spelling = tok // a secret of fewer characters is matched in its own case only
		}
		if col > 0 && int(kind)%len(spellings) < len(wrappable) {
			if extendsReference(spelling, int(col), gaps[int(col)%len(gaps)]) {
				t.Skip() // no spelling: HTML reads the gap and the next character as one reference
			}
			spelling = wrap(spelling, int(col), gaps[int(col)%len(gaps)])
		}
		out := NewScrubber(secret.New(tok)).Scrub(before + spelling + after)
		if out == Unscrubbable {
			return // nothing of the text is shown
		}
		assert.NotContains(t, out, tok)
		assert.NotContains(t, out, spelling)
	})
}

// git writes "remote: " before each line a remote sent: a secret a remote
// echoed across lines is found past it, and the prefix elsewhere is kept.
func TestScrubReadsPastGitsRemotePrefix(t *testing.T) {
	s := NewScrubber(secret.New(tok))
	interleaved := ""
	for _, c := range tok {
		interleaved += string(c) + "\xff" // a byte that is no UTF-8, which Printable shows as \xff
	}
	assert.Equal(t, "remote: ***\xff", s.Scrub("remote: "+interleaved))
	for _, split := range []string{"\nremote: ", "        \rremote: ", "\r\rremote: "} {
		assert.NotContains(t, s.Scrub("remote: denied for "+tok[:12]+split+tok[12:]), tok[12:], "%q", split)
	}
	out := s.Scrub("remote: denied for " + tok[:12] + "\nremote: " + tok[12:] + "\nremote: done")
	assert.Equal(t, "remote: denied for ***\nremote: done", out)
}

// ScrubAtMost scrubs a text whole when it fits, and its start as cut when
// not: cut before a character, and a secret the cut ends hidden too.
func TestScrubAtMostCutsBeforeACharacterAndHidesWhatTheCutEnds(t *testing.T) {
	s := NewScrubber(secret.New(tok))
	for _, tc := range []struct {
		name, text string
		max        int
		want       string
		cut        bool
	}{
		{"fits", "a " + tok + " b", 100, "a *** b", false},
		{"the secret cut", "a " + tok, 10, "a ***", true},
		{"a character not split", "#é", 2, "#", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := s.ScrubAtMost(tc.text, tc.max)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.cut, cut)
		})
	}
}
