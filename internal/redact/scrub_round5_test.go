package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"dagger/lowcode-pipeline/internal/secret"
)

func eachRune(s string, f func(r rune) string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(f(r))
	}
	return b.String()
}

// Markup, quoting and encodings an echo may put around or over a secret,
// each found (#65, S1, S1b, S5, S3, S2, S4).
func TestScrubFindsASecretAmongRealisticMarkupAndEncodings(t *testing.T) {
	const password = "pässwörd-Grün-2024-Xy"
	latin1 := eachRune(password, func(r rune) string { return string([]byte{byte(r)}) })
	const jsonPassword = "Reg&stry<Pass>2024-xyz"
	doc, _ := json.Marshal(map[string]string{"password": jsonPassword})
	be := []byte{}
	for _, r := range issued {
		be = append(be, 0, byte(r)) // UTF-16BE of ASCII
	}
	auth, _ := json.Marshal(map[string]any{"auths": map[string]any{"r.io": map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte("ci:" + issued))}}})
	tailwind := `<span class="font-mono text-sm leading-6 text-slate-700 dark:text-slate-300 bg-slate-50 dark:bg-slate-800/60 rounded px-1.5 py-0.5 ring-1 ring-inset ring-slate-200">`
	osc8 := "\x1b]8;;https://ci.example.com/org/project/-/jobs/1234567/artifacts/browse/logs/step-12/deploy-output-with-a-long-path/and/more/segments/to/go/past/the/limit.txt\x1b\\"
	half := len(issued) / 2
	for _, tc := range []struct{ name, secret, text string }{
		// S1: the bound is of characters read, not of readings tried
		{"a tag of 64 characters", issued, issued[:half] + "<span " + strings.Repeat("a", 57) + ">" + issued[half:]},
		{"an OSC title of 45 characters", issued, issued[:half] + "\x1b]0;" + strings.Repeat("a", 40) + "\x07" + issued[half:]},
		{"a <span style=…> of 90 characters", issued, issued[:half] + `</span><span style="color:#e06c75;font-family:ui-monospace,monospace;font-weight:600;white-space:pre">` + issued[half:]},
		{"a tag of maxUnseen characters", issued, issued[:half] + "<a " + strings.Repeat("x", maxUnseen-4) + ">" + issued[half:]},
		// S1b
		{"a utility-CSS <span> of 165 characters", issued, issued[:half] + "</span>" + tailwind + issued[half:]},
		{"an OSC 8 hyperlink's opening", issued, issued[:half] + osc8 + issued[half:] + "\x1b]8;;\x1b\\"},
		{"an HTML comment", issued, issued[:half] + "<!-- wrap -->" + issued[half:]},
		{"a declaration", issued, issued[:half] + "<!doctype html>" + issued[half:]},
		// S5
		{"git's remote: after a JSON-quoted line break", issued, issued[:half] + `\nremote: ` + issued[half:]},
		{"git's \\x1b[K and remote:, JSON-quoted", issued, issued[:half] + `\u001b[K\nremote: ` + issued[half:]},
		// S3
		{"a non-ASCII secret in Latin-1", password, latin1},
		{"a non-ASCII secret in Latin-1, percent-encoded", password, each(latin1, func(c byte) string { return fmt.Sprintf("%%%02X", c) })},
		{"a non-ASCII secret upper-cased", password, strings.ToUpper(password)},
		// S2
		{"full-width letters", issued, eachRune(issued, func(r rune) string { return string(r + 0xfee0) })},
		{"a combining strike-through after each character", issued, eachRune(issued, func(r rune) string { return string(r) + "\u0336" })},
		{"a combining acute after each character", issued, eachRune(issued, func(r rune) string { return string(r) + "\u0301" })},
		// S4
		{"base64 of Go JSON of the secret (\\u0026)", jsonPassword, base64.StdEncoding.EncodeToString(doc)},
		{"base64 of its UTF-16BE bytes", issued, base64.StdEncoding.EncodeToString(be)},
		{"a Q-encoded word (=5F for _)", "Tk9zQ7pL_2mX4vR8", "=?utf-8?Q?" + strings.ReplaceAll("Tk9zQ7pL_2mX4vR8", "_", "=5F") + "?="},
		{"base64 of a .dockerconfigjson", issued, base64.StdEncoding.EncodeToString(auth)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NewScrubber(secret.New(tc.secret)).Scrub("echo: " + tc.text + " :end")
			assert.NotContains(t, got, tc.text)
			assert.Contains(t, got, "***")
		})
	}
}

// What the new readings take is bounded: a tag or a comment longer than
// maxUnseen, a gap over maxGap, is not read as one.
func TestScrubKeepsWhatIsPastTheNewBounds(t *testing.T) {
	s := NewScrubber(secret.New(issued))
	for _, text := range []string{
		issued[:18] + "<a " + strings.Repeat("x", maxUnseen) + ">" + issued[18:],
		issued[:18] + "<!-- " + strings.Repeat("x", maxUnseen) + " -->" + issued[18:],
		issued[:18] + "<!-- never closed " + issued[18:],
		issued[:18] + strings.Repeat("<b>", maxGap/3+1) + issued[18:],
		"=?utf-8?Q?caf=C3=A9?=", // Q-encoding outside a secret is kept
	} {
		assert.Equal(t, text, s.Scrub(text), "%.60q", text)
	}
}
