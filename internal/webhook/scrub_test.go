package webhook

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func FuzzScrubLeavesNoSpellingOfTheToken(f *testing.F) {
	f.Add("s3cr3t-t0k3n/with<odd>chars", "before ", " after")
	f.Add("ghp_0123456789abcdefABCDEF", "", "")
	f.Fuzz(func(t *testing.T, tok, before, after string) {
		// A bearer token fits an HTTP header (servers take 8 KiB at most; JWTs
		// are under 2 KiB). A 4 KiB one costs about 3 s per round of four
		// spellings, more than the fuzzer's 10 s hang limit once instrumented.
		if len(tok) < 8 || len(tok) > 2048 || strings.ContainsAny(tok, "*\\%") || !utf8Valid(tok) {
			t.Skip()
		}
		s := newScrubber(tok)
		escaped, _ := json.Marshal(tok)
		for _, spelling := range []string{tok, string(escaped), url.QueryEscape(tok), base64.StdEncoding.EncodeToString([]byte("Bearer " + tok))} {
			out := s.scrub(before + spelling + after)
			assert.NotContains(t, out, tok)
			if spelling != tok {
				assert.NotContains(t, out, spelling)
			}
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

func TestAShortTokenIsScrubbedToo(t *testing.T) {
	// base64 of a token under 8 bytes has no core long enough to search for
	// safely; the token itself and its textual spellings are still removed
	for _, tok := range []string{"0", "ab", "a/c", "abcd", "abcdefg"} {
		t.Run(tok, func(t *testing.T) {
			s := newScrubber(tok)
			escaped, _ := json.Marshal(tok)
			for _, spelling := range []string{tok, strings.Trim(string(escaped), `"`), url.QueryEscape(tok)} {
				assert.NotContains(t, s.scrub("<"+spelling+">"), tok)
			}
		})
	}
}
