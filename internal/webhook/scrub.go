package webhook

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
)

// scrubber removes a token from text a server sent back, in every spelling
// a server may echo it: as it is, JSON-escaped (any character as \uXXXX, a
// slash as \/, the short escapes \n \r \t \b \f \" \\), percent-encoded (%XX, either case; + for a space), and base64 of the token
// or of "Bearer <token>" (standard or URL alphabet, at any alignment inside
// a longer encoding).
type scrubber struct {
	spelled *regexp.Regexp // the token, each character in any of its textual spellings
	encoded []string       // base64 cores
}

func newScrubber(token string) *scrubber {
	s := &scrubber{}
	if token == "" {
		return s
	}
	var b strings.Builder
	for _, r := range token {
		alts := []string{regexp.QuoteMeta(string(r))}
		if r < 0x10000 {
			alts = append(alts, fmt.Sprintf(`\\[uU](?i:%04x)`, r))
		}
		if r >= 0x80 { // percent-encoding spells each byte of the UTF-8 encoding
			var bytesAlt strings.Builder
			for _, c := range []byte(string(r)) {
				fmt.Fprintf(&bytesAlt, `%%(?i:%02x)`, c)
			}
			alts = append(alts, bytesAlt.String())
		}
		if r < 0x80 {
			alts = append(alts, fmt.Sprintf(`%%(?i:%02x)`, r))
			switch r {
			case '/':
				alts = append(alts, `\\/`)
			case ' ':
				alts = append(alts, `\+`) // form encoding
			case '"', '\\':
				alts = append(alts, regexp.QuoteMeta(`\`+string(r)))
			case '\b', '\f', '\n', '\r', '\t':
				alts = append(alts, regexp.QuoteMeta(strings.Trim(fmt.Sprintf("%q", string(r)), `"`)))
			}
		}
		b.WriteString("(?:" + strings.Join(alts, "|") + ")")
	}
	s.spelled = regexp.MustCompile(b.String())
	for _, plain := range []string{token, "Bearer " + token} {
		for shift := 0; shift < 3; shift++ {
			padded := strings.Repeat("\x00", shift) + plain
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				e := enc.EncodeToString([]byte(padded))
				// drop the characters the padding or what follows may change
				// (a short token may leave none)
				if lo, hi := (shift*4+2)/3, len(e)-4; hi-lo >= 8 {
					s.encoded = append(s.encoded, e[lo:hi])
				}
			}
		}
	}
	return s
}

// scrub replaces every spelling of the token with ***.
func (s *scrubber) scrub(text string) string {
	if s.spelled == nil {
		return text
	}
	text = s.spelled.ReplaceAllLiteralString(text, "***")
	for _, core := range s.encoded {
		text = strings.ReplaceAll(text, core, "***")
	}
	return text
}
