package webhook

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/testsupport/leaktest"
)

const issued = "Tk9zQ7pL2mX4vR8wS1yB6nC3hJ5dF0gA"

// pieces are the token's 10-character windows: none may be printed.
func pieces(tok string) []string {
	var out []string
	for i := 0; i+10 <= len(tok); i++ {
		out = append(out, tok[i:i+10])
	}
	return out
}

// A body longer than what is shown may hold the token where it is cut, or
// after spellings that scrubbing shortens to ***: no piece of it is shown.
func TestABodyCutShortShowsNoPieceOfTheToken(t *testing.T) {
	fill := func(unit string, upTo int) string {
		return strings.Repeat(unit, upTo/len(unit)) + strings.Repeat(".", upTo%len(unit))
	}
	percent := strings.ToUpper(fmt.Sprintf("%%% x", issued))
	percent = strings.ReplaceAll(percent, " ", "%")
	for _, tc := range []struct{ name, body string }{
		{"the token across the cut", fill("x", DefaultMaxErrorBody-12) + issued},
		{"the token after percent-encoded echoes that scrub to ***", fill(percent, DefaultMaxErrorBody+8*len(issued)+64-30) + issued},
		{"the token after plain echoes that scrub to ***", fill(issued+" ", DefaultMaxErrorBody+8*len(issued)+64-30) + issued},
		{"the token in base64 across the cut", fill("x", DefaultMaxErrorBody-20) + base64.StdEncoding.EncodeToString([]byte("Bearer "+issued))},
	} {
		for _, status := range []int{http.StatusInternalServerError, http.StatusOK} {
			t.Run(fmt.Sprintf("%s, status %d", tc.name, status), func(t *testing.T) {
				srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(status)
					io.WriteString(w, tc.body)
				})
				cfg := tlsConfig(srv)
				cfg.Token = secret.New(issued)
				leaks := &leaktest.Recorder{}
				_, _ = send(t, cfg, leaks)
				leaks.AssertClean(t, pieces(issued)...)
				assert.Positive(t, leaks.Count("[truncated after 8192 bytes]"), "the excerpt says it is cut")
			})
		}
	}
}

// serveRaw answers every request with resp as it is, for what no HTTP
// server would send.
func serveRaw(t *testing.T, resp string) string {
	l := rawServer(t, func(c net.Conn) {
		go func() {
			defer c.Close()
			if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				_, _ = io.Copy(io.Discard, req.Body)
			}
			_, _ = io.WriteString(c, resp)
		}()
	})
	return "http://" + l.Addr().String() + "/hook"
}

// net/http quotes what it could not parse (%q): a byte slipped into the
// token comes back as \x01 or \u0085 between its characters.
func TestAMalformedResponseQuotingTheTokenShowsNone(t *testing.T) {
	for _, gap := range []string{"\x01", "\x1b", "\a", "\u0085"} {
		split := issued[:7] + gap + issued[7:]
		for _, tc := range []struct{ name, resp string }{
			{"a status code", "HTTP/1.1 " + split + " x\r\n\r\n"},
			{"a response line", split + "\r\n\r\n"},
			{"a header line", "HTTP/1.1 200 OK\r\nLocation: https://evil.example/" + split + "\r\n\r\n"},
			{"a Content-Length", "HTTP/1.1 500 OK\r\nContent-Length: " + split + "\r\n\r\n"},
			{"a Transfer-Encoding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: " + split + "\r\n\r\n"},
		} {
			t.Run(fmt.Sprintf("%s holding the token split by %q", tc.name, gap), func(t *testing.T) {
				leaks := &leaktest.Recorder{}
				_, _ = send(t, Config{URL: address(serveRaw(t, tc.resp)), Token: secret.New(issued), AllowHTTP: true}, leaks)
				leaks.AssertClean(t, append(pieces(issued), issued[:7], issued[7:])...)
			})
		}
	}
}

// CheckNotLoopback runs before the token is read, so it cannot scrub the
// address: it shows the scheme and host only.
func TestALoopbackAddressIsShownWithoutItsPath(t *testing.T) {
	bearer := base64.StdEncoding.EncodeToString([]byte("Bearer " + issued))
	for _, tc := range []struct{ name, url, shown string }{
		{"the token in a localhost path", "https://localhost/acme/" + issued, "https://localhost"},
		{"the token in a 127.0.0.1 path", "http://127.0.0.1:8080/" + issued + "/x", "http://127.0.0.1:8080"},
		{"the token in an [::1] path", "https://[::1]/acme/" + issued, "https://[::1]"},
		{"base64 of the header in the path", "https://localhost/" + url.PathEscape(bearer), "https://localhost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := address(tc.url).CheckNotLoopback()
			require.Error(t, err)
			assert.Contains(t, err.Error(), "--webhook-url "+tc.shown+":")
			assert.NotContains(t, err.Error(), "acme")
			for _, p := range append(pieces(issued), bearer[:12]) {
				assert.NotContains(t, err.Error(), p)
			}
		})
	}
}

// A payload may hold, in a rule's string, characters a terminal would act
// on: request shows the same JSON with them escaped.
func TestRequestShowsThePayloadEscapedForATerminal(t *testing.T) {
	p, err := Prepare(Config{URL: address("https://hooks.example.com/acme"), Token: secret.New(issued)})
	require.NoError(t, err)
	for _, tc := range []struct{ name, raw, shown string }{
		{"a C1 control sequence introducer", "\u009b", `\u009b`},
		{"a next-line character", "\u0085", `\u0085`},
		{"a right-to-left override", "\u202e", `\u202e`},
		{"a line separator", "\u2028", `\u2028`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := p.Request([]byte(`{"rule":"a` + tc.raw + `b"}`))
			assert.Contains(t, out, `{"rule":"a`+tc.shown+`b"}`)
			assert.NotContains(t, out, tc.raw)
		})
	}
}
