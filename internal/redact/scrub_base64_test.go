package redact

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"dagger/lowcode-pipeline/internal/secret"
)

// The end of a secret's base64 is hidden too: the character that holds
// its last bits, whatever bytes follow (#65, S6). A registry echoing
// "Basic Y2k6…" showed "***cmV0", the secret's last bytes "ret".
func TestScrubHidesTheEndOfASecretsBase64(t *testing.T) {
	for _, tc := range []struct{ name, secret, before, after string }{
		{"a Basic header ending on a 3-byte boundary", "Reg1stry-Passw0rd-Sekret", "ci:", ""},
		{"a Bearer header", issued, "Bearer ", ""},
		{"x-access-token:<secret>", issued, "x-access-token:", ""},
		{"the secret alone, one byte past a boundary", issued + "x", "", ""},
		{"the secret alone, two bytes past a boundary", issued + "xy", "", ""},
		{"bytes after it change its last character", issued + "x", "", "\xff\xff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := base64.StdEncoding.EncodeToString([]byte(tc.before + tc.secret + tc.after))
			assertNoReadableByte(t, NewScrubber(secret.New(tc.secret)), tc.before, tc.secret, tc.after, text, base64.StdEncoding)
		})
	}
}

// FuzzScrubLeavesNoByteOfTheSecretInItsBase64: in the base64 of any bytes,
// a secret, any bytes (either alphabet, padded or not), no byte of the
// secret is left whole in what Scrub shows: each has a bit in a character
// it hides.
func FuzzScrubLeavesNoByteOfTheSecretInItsBase64(f *testing.F) {
	f.Add("ci:", "Reg1stry-Passw0rd-Sekret", "", false, false)
	f.Add("Bearer ", issued, "\x00", true, true)
	f.Add("", issued+"x", "\xff", false, true)
	f.Fuzz(func(t *testing.T, before, sec, after string, url, raw bool) {
		if len(sec) < 8 || len(before)+len(sec)+len(after) > 256 {
			t.Skip("a secret this short is not searched for in base64; a long text only costs time")
		}
		enc := base64.StdEncoding
		if url {
			enc = base64.URLEncoding
		}
		if raw {
			enc = enc.WithPadding(base64.NoPadding)
		}
		text := enc.EncodeToString([]byte(before + sec + after))
		assertNoReadableByte(t, NewScrubber(secret.New(sec)), before, sec, after, text, enc)
	})
}

// assertNoReadableByte fails when a byte of sec, in text (the base64 of
// before+sec+after), is in characters Scrub shows, all of them.
func assertNoReadableByte(t *testing.T, s Scrubber, before, sec, after, text string, enc *base64.Encoding) {
	t.Helper()
	spans, ok := s.spans(text, false)
	if !ok {
		return // not shown at all
	}
	hidden := make([]bool, len(text))
	for _, sp := range spans {
		for i := sp[0]; i < sp[1]; i++ {
			hidden[i] = true
		}
	}
	for k := len(before); k < len(before)+len(sec); k++ {
		// byte k's 8 bits are bits 8k..8k+7 of the text, 6 a character
		first, last := 8*k/6, (8*k+7)/6
		shown := true
		for c := first; c <= last; c++ {
			shown = shown && !hidden[c]
		}
		if shown {
			t.Errorf("byte %d of the secret is readable in %q: %q", k-len(before), text, s.Scrub(text))
			return
		}
	}
	assert.NotContains(t, s.Scrub(text), strings.TrimRight(enc.EncodeToString([]byte(sec)), "="))
}
