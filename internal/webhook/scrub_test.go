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
		if len(tok) < 8 || strings.ContainsAny(tok, "*\\%") || !utf8Valid(tok) {
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
