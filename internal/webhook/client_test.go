package webhook

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/redact"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/testsupport/leaktest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const token = "s3cr3t-t0ken-value-4242"

var body = []byte(`{"frontend":{"image":"reg.example.com/front:1"}}`)

// record adds what one call produced (error, error body, receipt) to leaks.
func record(leaks *leaktest.Recorder, rec *Receipt, err error) {
	if err != nil {
		leaks.Add(err.Error())
		if we, ok := err.(*Error); ok {
			leaks.Add(we.Body)
		}
	}
	if rec != nil {
		data, _ := json.Marshal(rec)
		leaks.Add(string(data))
	}
}

// counting is a TLS test server that counts requests and answers with h.
func counting(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func send(t *testing.T, cfg Config, leaks *leaktest.Recorder) (*Receipt, error) {
	t.Helper()
	if !cfg.Token.Set() {
		cfg.Token = secret.New(token)
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = 5 * time.Millisecond
	}
	cfg.Logf = leaks.Logf
	p, err := Prepare(cfg)
	require.NoError(t, err)
	rec, err := p.Send(context.Background(), body)
	record(leaks, rec, err)
	return rec, err
}

// address is raw read by ParseAddress, which the test expects to accept it.
func address(raw string) *Address {
	a, err := ParseAddress(raw)
	if err != nil {
		panic(err)
	}
	return a
}

func tlsConfig(srv *httptest.Server) Config {
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	return Config{URL: address(srv.URL + "/acme/production"), RootCAs: pool}
}

func TestSendDeliversOnceWithBearerTokenAndReceipt(t *testing.T) {
	leaks := &leaktest.Recorder{}
	var got *http.Request
	var gotBody []byte
	srv, n := counting(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		gotBody, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"message":"success"}`)
	})
	rec, err := send(t, tlsConfig(srv), leaks)
	require.NoError(t, err)

	assert.EqualValues(t, 1, n.Load())
	assert.Equal(t, http.MethodPost, got.Method)
	assert.Equal(t, "/acme/production", got.URL.Path)
	assert.Equal(t, "Bearer "+token, got.Header.Get("Authorization"))
	assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
	assert.Equal(t, body, gotBody)

	assert.Equal(t, 200, rec.Status)
	assert.Equal(t, "success", rec.Message)
	assert.Equal(t, srv.URL+"/acme/production", rec.URL)
	assert.Equal(t, "c8f5a0c9d9446f78ad637244083cd9f8f2ab9e60f941cfa54f5221f3bb09a864", rec.PayloadSHA256, "sha256 of the body sent")
	assert.Equal(t, 1, rec.ConnectAttempts)
	assert.Empty(t, rec.Warnings)
	assert.WithinDuration(t, time.Now(), rec.SentAt, 5*time.Second)
	leaks.AssertClean(t, token, "t0ken-value")
}

func TestEveryStatusButOKFailsWithStatusAndBody(t *testing.T) {
	leaks := &leaktest.Recorder{}
	for _, status := range []int{400, 401, 403, 404, 409, 422, 429, 500, 502, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv, n := counting(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
				fmt.Fprintf(w, `{"error":"status %d", "echo":%q}`, status, r.Header.Get("Authorization"))
			})
			rec, err := send(t, tlsConfig(srv), leaks)
			require.Error(t, err)
			require.NotNil(t, rec, "a failed delivery still has a receipt")
			assert.Equal(t, status, rec.Status)
			var we *Error
			require.ErrorAs(t, err, &we)
			assert.Equal(t, status, we.Status)
			assert.True(t, we.Sent)
			assert.Contains(t, err.Error(), fmt.Sprintf("%d %s", status, http.StatusText(status)))
			assert.Contains(t, err.Error(), fmt.Sprintf(`{"error":"status %d"`, status), "the response body is written out")
			assert.Contains(t, err.Error(), `"echo":"Bearer ***"`, "a token echoed by the server is scrubbed")
			assert.EqualValues(t, 1, n.Load(), "a failed deployment is not retried")
		})
	}
	leaks.AssertClean(t, token, "t0ken-value")
}

func TestOKWithAnUnexpectedBodyIsReportedNotHidden(t *testing.T) {
	leaks := &leaktest.Recorder{}
	for _, tc := range []struct{ name, body, warning string }{
		{"not JSON", "<html>ok</html>", "not the expected {\"message\": …} JSON: <html>ok</html>"},
		{"no message", `{"status":"ok"}`, `not the expected`},
		{"empty", ``, `(empty)`},
		{"another message", `{"message":"queued"}`, `message "queued" instead of "success"`},
		// W1 (issue #65): JavaScript reads the key "message" exactly, the last one
		{"a capitalised key", `{"Message":"success"}`, `not the expected`},
		{"an upper-case key", `{"MESSAGE":"success"}`, `not the expected`},
		{"a key with a long s", `{"meſſage":"success"}`, `not the expected`},
		{"a key differing in case after the real one", `{"message":"error","Message":"success"}`, `message "error" instead of "success"`},
		{"a repeated key, the last one read", `{"message":"success","message":"error"}`, `message "error" instead of "success"`},
		{"a null message", `{"message":null}`, `not the expected`},
		{"a message that is not a string", `{"message":1}`, `not the expected`},
		{"an array", `[{"message":"success"}]`, `not the expected`},
		{"null", `null`, `not the expected`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tc.body) })
			rec, err := send(t, tlsConfig(srv), leaks)
			require.NoError(t, err, "HTTP 200 is success")
			require.Len(t, rec.Warnings, 1)
			assert.Contains(t, rec.Warnings[0], tc.warning)
		})
	}
	leaks.AssertClean(t, token, "t0ken-value")
}

// The body's message is read as JSON.parse(body).message reads it (checked
// against Node 20 when written): the key spelt exactly, after its escapes
// are read; the last of a repeated key.
func TestTheMessageIsReadAsJavaScriptReadsIt(t *testing.T) {
	for _, tc := range []struct {
		name, body, message string
		ok                  bool
	}{
		{"the expected body", `{"message":"success"}`, "success", true},
		{"white space around it", " {\"message\" : \"success\"}\n", "success", true},
		{"an escaped letter in the key", `{"mess\u0061ge":"success"}`, "success", true},
		{"an escaped letter in the value", `{"message":"succ\u0065ss"}`, "success", true},
		{"another key in another case after it", `{"message":"error","Message":"success"}`, "error", true},
		{"the last of a repeated key", `{"message":"success","message":"error"}`, "error", true},
		{"a capitalised key", `{"Message":"success"}`, "", false},
		{"a key with a Kelvin sign or a long s", `{"meſſage":"success","\u212a":1}`, "", false},
		{"a string, not an object", `"success"`, "", false},
		{"not JSON", `{"message":"success"`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			message, ok := messageOf([]byte(tc.body))
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.message, message)
		})
	}
}

// Whatever a server answers, a message is read only from a JSON object
// that has the key "message" spelt exactly, holding a string.
func FuzzMessageOf(f *testing.F) {
	for _, s := range []string{`{"message":"success"}`, `{"Message":"success"}`, `{"message":"a","message":"b"}`, `[]`, `null`, `{"message":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		message, ok := messageOf(body)
		if !ok {
			assert.Empty(t, message)
			return
		}
		var fields map[string]any
		require.NoError(t, json.Unmarshal(body, &fields), "a message comes from a JSON object")
		assert.Equal(t, message, fields["message"], "the key spelt exactly, holding that string")
	})
}

func TestRedirectsAreNeverFollowed(t *testing.T) {
	leaks := &leaktest.Recorder{}
	for _, status := range []int{301, 302, 307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			target, targetHits := counting(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"message":"success"}`) })
			srv, n := counting(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/elsewhere?key=abc", status)
			})
			_, err := send(t, tlsConfig(srv), leaks)
			require.Error(t, err)
			var we *Error
			require.ErrorAs(t, err, &we)
			assert.Equal(t, status, we.Status)
			assert.Contains(t, err.Error(), "redirects to "+target.URL+"/elsewhere")
			assert.Contains(t, err.Error(), "not followed")
			assert.EqualValues(t, 1, n.Load())
			assert.Zero(t, targetHits.Load(), "the redirect target must never be contacted")
		})
	}
	leaks.AssertClean(t, token, "t0ken-value")
}

func TestASlowServerHitsTheOverallTimeoutAndIsNotRetried(t *testing.T) {
	leaks := &leaktest.Recorder{}
	release := make(chan struct{})
	srv, n := counting(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
	})
	defer close(release)
	cfg := tlsConfig(srv)
	cfg.Timeout = 300 * time.Millisecond
	_, err := send(t, cfg, leaks)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "within the overall time limit of 300ms")
	assert.Contains(t, err.Error(), "may have reached the server, so it is not sent again")
	var we *Error
	require.ErrorAs(t, err, &we)
	assert.True(t, we.Sent)
	assert.EqualValues(t, 1, n.Load())
	leaks.AssertClean(t, token, "t0ken-value")
}

// A server that sends its status, then drips its body past the overall
// time limit: the call ends at the limit, and what it says names the limit,
// in the receipt's warning on a 200 and in the error's body otherwise.
func TestADrippingBodyEndsAtTheTimeLimitAndSaysSo(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusBadGateway} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			leaks := &leaktest.Recorder{}
			srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
				io.WriteString(w, `{"message":"`)
				for r.Context().Err() == nil {
					if _, err := io.WriteString(w, "s"); err != nil {
						return
					}
					w.(http.Flusher).Flush()
					time.Sleep(20 * time.Millisecond)
				}
			})
			cfg := tlsConfig(srv)
			cfg.Timeout = 300 * time.Millisecond
			start := time.Now()
			rec, err := send(t, cfg, leaks)
			assert.Less(t, time.Since(start), 3*time.Second)
			const said = "the answer did not end within the overall time limit of 300ms"
			if status == http.StatusOK {
				require.NoError(t, err)
				assert.Equal(t, []string{"HTTP 200, but the response body could not be read: " + said}, rec.Warnings)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), `Response body: {"message":"s`)
				assert.Contains(t, err.Error(), "[cut: "+said+"]")
			}
		})
	}
}

// rawServer accepts TCP connections on loopback and hands each to handle,
// for behaviour no HTTP server would show.
func rawServer(t *testing.T, handle func(net.Conn)) net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			handle(conn)
		}
	}()
	return l
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func TestConnectionRefusedIsRetriedThenFails(t *testing.T) {
	leaks := &leaktest.Recorder{}
	addr := closedPort(t)
	_, err := send(t, Config{URL: address("https://" + addr + "/hook?token=" + token), ConnectAttempts: 3}, leaks)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "could not connect to https://"+addr+"/hook")
	assert.Contains(t, err.Error(), "connection refused")
	var we *Error
	require.ErrorAs(t, err, &we)
	assert.False(t, we.Sent, "nothing reached a server")
	assert.Equal(t, 2, leaks.Count("retrying in"))
	leaks.AssertClean(t, token, "t0ken-value")
}

func TestZeroRetriesMeansOneAttempt(t *testing.T) {
	leaks := &leaktest.Recorder{}
	rec, err := send(t, Config{URL: address("https://" + closedPort(t) + "/")}, leaks)
	require.Error(t, err)
	assert.Nil(t, rec)
	assert.Zero(t, leaks.Count("retrying"))
}

func TestAServerThatComesUpDuringRetriesGetsExactlyOneRequest(t *testing.T) {
	leaks := &leaktest.Recorder{}
	addr := closedPort(t)
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, `{"message":"success"}`)
	}))
	defer srv.Close()
	go func() {
		time.Sleep(150 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return
		}
		srv.Listener = l
		srv.Start()
	}()
	rec, err := send(t, Config{URL: address("http://" + addr + "/"), AllowHTTP: true, ConnectAttempts: 9, RetryBackoff: 40 * time.Millisecond}, leaks)
	require.NoError(t, err)
	assert.Greater(t, rec.ConnectAttempts, 1)
	assert.EqualValues(t, 1, n.Load())
	leaks.AssertClean(t, token, "t0ken-value")
}

func TestADroppedConnectionAfterSendingIsNotRetried(t *testing.T) {
	leaks := &leaktest.Recorder{}
	var requests atomic.Int32
	l := rawServer(t, func(conn net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
			requests.Add(1)
		}
		conn.Close() // hang up without answering
	})
	_, err := send(t, Config{URL: address("http://" + l.Addr().String() + "/"), AllowHTTP: true, ConnectAttempts: 4}, leaks)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "failed after the request was sent")
	var we *Error
	require.ErrorAs(t, err, &we)
	assert.True(t, we.Sent)
	time.Sleep(50 * time.Millisecond)
	assert.EqualValues(t, 1, requests.Load(), "the request must not be sent a second time")
	leaks.AssertClean(t, token, "t0ken-value")
}

func TestAStalledTLSHandshakeHitsTheConnectLimitAndNoRequestArrives(t *testing.T) {
	leaks := &leaktest.Recorder{}
	var conns atomic.Int32
	l := rawServer(t, func(conn net.Conn) {
		conns.Add(1)
		go func() { time.Sleep(2 * time.Second); conn.Close() }() // never speaks TLS
	})
	_, err := send(t, Config{URL: address("https://" + l.Addr().String() + "/"), ConnectTimeout: 100 * time.Millisecond, ConnectAttempts: 2}, leaks)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "within the connect time limit of 100ms")
	assert.EqualValues(t, 2, conns.Load(), "a handshake that never completed is retried")
	leaks.AssertClean(t, token, "t0ken-value")
}

func TestAnUntrustedCertificateFailsAtOnce(t *testing.T) {
	leaks := &leaktest.Recorder{}
	srv, n := counting(t, func(w http.ResponseWriter, r *http.Request) {})
	_, err := send(t, Config{URL: address(srv.URL), ConnectAttempts: 4}, leaks)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "certificate")
	assert.Zero(t, n.Load())
	assert.Zero(t, leaks.Count("retrying"), "a certificate error will not heal")
	leaks.AssertClean(t, token, "t0ken-value")
}

func TestAHugeErrorBodyIsTruncated(t *testing.T) {
	leaks := &leaktest.Recorder{}
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, strings.Repeat("x", 1<<20))
	})
	cfg := tlsConfig(srv)
	cfg.MaxErrorBody = 1000
	_, err := send(t, cfg, leaks)
	var we *Error
	require.ErrorAs(t, err, &we)
	assert.True(t, strings.HasSuffix(we.Body, "… [truncated after 1000 bytes]"))
	assert.Less(t, len(err.Error()), 1500)
	leaks.AssertClean(t, token, "t0ken-value")
}

// The interface has a failed request's body written out: what the error a
// person reads may cut (fielderr.Plain, about 2 KB), the log holds whole.
func TestAFailedRequestsBodyIsWrittenOutWholeInTheLog(t *testing.T) {
	leaks := &leaktest.Recorder{}
	long := `{"error":"` + strings.Repeat("detail ", 700) + `end of the body"}`
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		io.WriteString(w, long)
	})
	_, err := send(t, tlsConfig(srv), leaks)
	require.Error(t, err)
	assert.Less(t, len(fielderr.Plain(err).Error()), len(long), "the error a person reads is cut")
	assert.Equal(t, 1, leaks.Count("422 Unprocessable Entity; response body:\n"+long), "the log holds the body whole, once")
	leaks.AssertClean(t, token, "t0ken-value")
}

func TestPrepareRefusesUnsafeAddresses(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"a token in the user-info", Config{URL: address("https://" + token + "@hooks.example.com/a/b"), Token: secret.New(token)}, "carries credentials in its user-info: pass the token as a secret"},
		{"plain http", Config{URL: address("http://hooks.example.com/a"), Token: secret.New(token)}, "uses plain http"},
		{"another scheme", Config{URL: address("ftp://hooks.example.com/a"), Token: secret.New(token)}, "scheme must be https"},
		{"no host", Config{URL: address("https:///a"), Token: secret.New(token)}, "--webhook-url <address not shown: not a URL> has no host: write https://<client_host>/<project>/<instance>"},
		// round-13 probe P13-4: told what to write, and a port Go takes but
		// no dial does, before anything is sent
		{"one slash", Config{URL: address("https:/hooks.example.com/acme/production"), Token: secret.New(token)}, "write two forward slashes after https:, https://<client_host>/<project>/<instance>"},
		{"no slash", Config{URL: address("https:hooks.example.com/acme/production"), Token: secret.New(token)}, "write two forward slashes after https:"},
		{"a port too high", Config{URL: address("https://hooks.example.com:99999/acme"), Token: secret.New(token)}, `--webhook-url https://hooks.example.com:99999/acme: the port after the host is out of range: a number from 1 to 65535`},
		{"port 0", Config{URL: address("https://hooks.example.com:0/acme"), Token: secret.New(token)}, "the port after the host is out of range"},
		{"an empty port", Config{URL: address("https://hooks.example.com:/acme"), Token: secret.New(token)}, "the port after the host is out of range"},
		{"no token", Config{URL: address("https://hooks.example.com/a")}, "webhook token is empty"},
		{"a token with a newline", Config{URL: address("https://hooks.example.com/a"), Token: secret.New(token + "\n")}, "contains a line break"},
		{"an '@' after the host", Config{URL: address("https://hooks.example.com/acme?owner=ops@example.com"), Token: secret.New(token)}, "has an '@' after its host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Prepare(tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), token)
		})
	}
	_, err := Prepare(Config{URL: address("http://127.0.0.1:8080/"), Token: secret.New(token), AllowHTTP: true})
	assert.NoError(t, err, "http is allowed when asked for")
	_, err = Prepare(Config{URL: address("https://[2001:db8::1]:8443/acme"), Token: secret.New(token)})
	assert.NoError(t, err, "an IPv6 host with a port")
}

func TestParseAddressRefusesWhatIsNoWebhookAddress(t *testing.T) {
	for _, tc := range []struct{ name, raw, want string }{
		{"not a URL", "https://hooks.example.com/%zz?t=" + token, "is not a URL"},
		{"an address longer than any webhook's", "https://hooks.example.com/" + strings.Repeat("a/", MaxURLBytes), "--webhook-url is 4122 bytes, more than the 2048 a webhook address takes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAddress(tc.raw)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), token)
		})
	}
	_, err := Prepare(Config{Token: secret.New(token)})
	assert.ErrorContains(t, err, "no webhook address")
}

// Whatever the address and the token, Prepare's error names what is wrong
// in a few lines and holds no piece of the token; what it accepts prints
// without credentials or query.
func FuzzPrepare(f *testing.F) {
	f.Add("https://hooks.example.com/acme/prod", token, false)
	f.Add("https://"+token+"@hooks.example.com/a", token, false)
	f.Add("http://127.0.0.1:8080/?sig=abcd", "abcd", true)
	f.Add("https://hooks.example.com/%zz?t=secret", "secret", false)
	f.Add("http://user:secret@[::1]:8080/?t=secret", "secret", true)
	f.Fuzz(func(t *testing.T, address, tok string, allowHTTP bool) {
		addr, err := ParseAddress(address)
		if err != nil {
			assert.LessOrEqual(t, len(err.Error()), 800, "the error is short, the address cut")
			if tokenLike(tok) && !strings.Contains(Redact(address), tok) {
				assert.NotContains(t, err.Error(), tok, "no token in an error")
			}
			return
		}
		if err := addr.CheckNotLoopback(); err != nil {
			assert.LessOrEqual(t, len(err.Error()), 1200, "the error is short, the address cut")
			if tokenLike(tok) && !strings.Contains(Redact(address), tok) {
				assert.NotContains(t, err.Error(), tok, "nothing of the address but what is printed of it")
			}
		}
		p, err := Prepare(Config{URL: addr, Token: secret.New(tok), AllowHTTP: allowHTTP})
		if err != nil {
			assert.LessOrEqual(t, len(err.Error()), 800, "the error is short, the address cut")
			// the address as printed (%B0…: no user-info, no query) may hold the token's text by coincidence
			if tokenLike(tok) && !strings.Contains(Redact(address), tok) {
				assert.NotContains(t, err.Error(), tok, "no token in an error")
			}
			return
		}
		assert.NotEmpty(t, tok)
		assert.NotContains(t, tok, "\n")
		if strings.Count(p.RedactedURL(), "***") > strings.Count(Redact(address), "***") {
			// the address holds the token (a careless configuration): what is
			// printed of it is scrubbed, and need not parse as an address
			if tokenLike(tok) {
				assert.NotContains(t, p.RedactedURL(), tok)
			}
			return
		}
		if p.RedactedURL() == redact.Unscrubbable {
			// too costly to search for the token (a short one, a long run of
			// bytes that are no UTF-8): nothing of the address is printed
			return
		}
		shown, err := url.Parse(p.RedactedURL())
		require.NoError(t, err, "the printed address parses")
		assert.Nil(t, shown.User, "no user-info printed")
		assert.Contains(t, []string{"", "…"}, shown.RawQuery, "no query printed, only that there was one")
		assert.Contains(t, []string{"https", "http"}, shown.Scheme)
		assert.True(t, shown.Scheme == "https" || allowHTTP, "http only when allowed")
		if tokenLike(tok) && !strings.Contains(p.RedactedURL(), tok) && !strings.Contains(string(body), tok) {
			assert.NotContains(t, p.Request(body), tok, "the shown request masks the token")
		}
	})
}

// tokenLike is a token whose text cannot stand in a message by coincidence
// (the fuzzer steers a token towards the text it is compared with): 12
// bytes or more of letters, digits, '-' and '_', with a letter and a digit,
// as issued tokens are.
func tokenLike(tok string) bool {
	return len(tok) >= 12 && strings.Trim(tok, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == "" &&
		strings.ContainsAny(tok, "0123456789") && strings.ContainsAny(tok, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// A call printed whole by mistake (a log line, an error's %v) shows no token.
func TestAPrintedCallHidesTheToken(t *testing.T) {
	cfg := Config{URL: address("https://hooks.example.com/acme/prod"), Token: secret.New(token)}
	p, err := Prepare(cfg)
	require.NoError(t, err)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x"} {
		for _, v := range []any{cfg, &cfg, p, *p} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, token, verb)
			assert.NotContains(t, out, fmt.Sprintf("%x", token), verb)
		}
	}
}

func TestRequestMasksTheToken(t *testing.T) {
	p, err := Prepare(Config{URL: address("https://hooks.example.com/acme/prod?sig=" + token), Token: secret.New(token)})
	require.NoError(t, err)
	out := p.Request(body)
	assert.Contains(t, out, "POST https://hooks.example.com/acme/prod?…\nAuthorization: Bearer ***\nContent-Type: application/json\n\n"+string(body))
	assert.Contains(t, out, "(not sent; the address's query is not shown, as it may hold a token; payload sha256 ")
	assert.NotContains(t, out, token)
}

// W2 (issue #65): `request` shows that the address has a query, which deploy
// sends, without showing it (it may hold a token); the receipt shows the
// address the same way.
func TestRequestAndReceiptShowThatAQueryIsThereWithoutShowingIt(t *testing.T) {
	first := func(hook string) string {
		p, err := Prepare(Config{URL: address(hook), Token: secret.New(token)})
		require.NoError(t, err)
		line, _, _ := strings.Cut(p.Request(body), "\n")
		return line
	}
	assert.Equal(t, "POST https://hooks.example.com/deploy", first("https://hooks.example.com/deploy"))
	assert.Equal(t, "POST https://hooks.example.com/deploy?…", first("https://hooks.example.com/deploy?instance=prod"))
	assert.Equal(t, "POST https://hooks.example.com/deploy?…", first("https://hooks.example.com/deploy?access_token="+token))
	assert.Equal(t, "POST https://hooks.example.com/deploy", first("https://hooks.example.com/deploy#frag"), "a fragment is not sent")

	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "instance=prod", r.URL.RawQuery, "the query is sent")
		io.WriteString(w, `{"message":"success"}`)
	})
	cfg := tlsConfig(srv)
	cfg.URL = address(srv.URL + "/acme/production?instance=prod")
	rec, err := send(t, cfg, &leaktest.Recorder{})
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(rec.URL, "/acme/production?…"), rec.URL)
}

func TestNoPieceOfTheTokenSurvivesInAnEchoedBody(t *testing.T) {
	const tok = "s3cr3t-t0k3n/with<odd>chars+=="
	bearerB64 := base64.StdEncoding.EncodeToString([]byte("Bearer " + tok))
	escaped, _ := json.Marshal(tok) // Go escapes <, > as \u003c, \u003e
	for _, tc := range []struct{ name, body string }{
		{"across the 8 KiB cut", strings.Repeat("x", DefaultMaxErrorBody-10) + tok + strings.Repeat("y", 100)},
		{"JSON-escaped by Go", `{"echo":` + string(escaped) + `}`},
		{"with escaped slashes and dashes", `{"echo":"s3cr3t\u002dt0k3n\/with\u003codd\u003echars+=="}`},
		{"upper-case JSON escapes", `{"echo":"s3cr3t\u002Dt0k3n\/with\u003Codd\u003Echars+=="}`},
		{"percent-encoded", `echo=` + url.QueryEscape(tok)},
		{"percent-encoded in lower case", `echo=s3cr3t-t0k3n%2fwith%3codd%3echars%2b%3d%3d`},
		{"base64 of the Authorization header", `{"auth":"` + bearerB64 + `"}`},
		{"base64 inside a longer blob", `{"blob":"` + base64.StdEncoding.EncodeToString([]byte("xyAuthorization: Bearer "+tok+"\r\nHost: x")) + `"}`},
		{"URL-safe base64", `{"blob":"` + base64.URLEncoding.EncodeToString([]byte("Bearer "+tok)) + `"}`},
		{"HTML-escaped", `<pre>` + html.EscapeString("Authorization: Bearer "+tok) + `</pre>`},
		{"split across lines, each half as it is", "echo: " + tok[:10] + "\n" + tok[10:] + "\n"},
		{"base64 of the header wrapped at 64 columns (PEM)", wrapAt(base64.StdEncoding.EncodeToString([]byte("GET / HTTP/1.1\r\nAuthorization: Bearer "+tok+"\r\n")), 64, "\n")},
		{"base64 of the header wrapped at 76 columns (MIME)", wrapAt(base64.StdEncoding.EncodeToString([]byte("Content-Type: application/json\r\nAuthorization: Bearer "+tok)), 76, "\r\n")},
		{"base64 of the header wrapped at 20 columns in JSON", `{"dump":"` + wrapAt(base64.StdEncoding.EncodeToString([]byte("xyAuthorization: Bearer "+tok)), 20, `\n`) + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadGateway)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			leaks := &leaktest.Recorder{}
			p, err := Prepare(Config{URL: address(srv.URL), Token: secret.New(tok), AllowHTTP: true, Logf: leaks.Logf})
			require.NoError(t, err)
			_, err = p.Send(context.Background(), body)
			require.Error(t, err)
			msg := err.Error()
			leaks.Add(msg)
			require.Equal(t, 1, leaks.Count("response body:"), "the body is written out in the log")
			leaks.AssertClean(t, "s3cr3t", "t0k3n", "odd", bearerB64[8:20])
			assert.Less(t, len(msg), DefaultMaxErrorBody+400, "the body stays cut")
			// the lines of a wrapped echo, joined again, hold no piece of it
			joined := strings.NewReplacer(`\r`, "", `\n`, "").Replace(msg)
			for _, piece := range encodedPieces(tok) {
				assert.NotContains(t, joined, piece)
			}
		})
	}
}

// encodedPieces are 12-character pieces of base64 of tok, at each of the
// three alignments inside a longer encoding, in either alphabet.
func encodedPieces(tok string) []string {
	var pieces []string
	for shift := range 3 {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			e := enc.EncodeToString(append(make([]byte, shift), tok...))
			for i := (shift*4 + 2) / 3; i+12 <= len(e)-4; i += 6 {
				pieces = append(pieces, e[i:i+12])
			}
		}
	}
	return pieces
}

// wrapAt breaks s every n bytes with brk, as PEM (64) and MIME (76) do.
func wrapAt(s string, n int, brk string) string {
	var lines []string
	for ; len(s) > n; s = s[n:] {
		lines = append(lines, s[:n])
	}
	return strings.Join(append(lines, s), brk)
}

// A redirect is never followed, and the address it names is shown as an
// address is, with the token scrubbed where a server may echo it: in the
// path, percent-encoded, as base64. A relative one (a trailing slash added,
// another host's //name) is shown as the address a client would have
// followed, the one to use (a shown beginning with / is on the webhook's
// host).
func TestARedirectThatEchoesTheTokenShowsNone(t *testing.T) {
	for _, tc := range []struct{ name, location, shown string }{
		{"a relative path", "/acme/production/", "/acme/production/,"},
		{"a sibling of the hook", "next", "/acme/next,"},
		{"another host, relative", "//hooks.example.com/acme", "redirects to https://hooks.example.com/acme,"},
		{"the token in a relative path", "/seen/" + token, "/seen/***,"},
		{"the token in the path", "https://evil.example.com/seen/" + token + "/x?k=" + token, "redirects to https://evil.example.com/seen/***/x,"},
		{"the token percent-encoded in the path", "https://evil.example.com/seen/" + url.PathEscape(token+"/") + "x", "redirects to https://evil.example.com/seen/***%2Fx,"},
		{"the header as base64 in the path", "https://evil.example.com/" + base64.URLEncoding.EncodeToString([]byte("Authorization: Bearer "+token)), "redirects to https://evil.example.com/"},
		{"a long address, cut", "https://evil.example.com/" + strings.Repeat("a/", 3000), "redirects to https://evil.example.com/a/a/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaks := &leaktest.Recorder{}
			srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", tc.location)
				w.WriteHeader(http.StatusFound)
			})
			_, err := send(t, tlsConfig(srv), leaks)
			require.Error(t, err)
			if strings.HasPrefix(tc.shown, "/") {
				tc.shown = "redirects to " + srv.URL + tc.shown
			}
			assert.Contains(t, err.Error(), tc.shown)
			assert.Less(t, len(err.Error()), 800, "the error stays small")
			leaks.AssertClean(t, token, "t0ken-value", base64.URLEncoding.EncodeToString([]byte("Bearer " + token))[4:24])
		})
	}
}

// What a server says reaches a receipt, an error and the log shown, not
// obeyed: a line feed, a carriage return, an ESC or C1 sequence, a byte
// that is not UTF-8 cannot forge a line of a CI log or move the cursor.
func TestWhatAServerSaysIsShownNotObeyed(t *testing.T) {
	const said = "queued\r\n::error::deployment failed\x1b[2K\u009b1A\a\xff"
	const shown = `queued\r\n::error::deployment failed\x1b[2K\u009b1A\a\xff`
	printable := func(t *testing.T, text string) {
		t.Helper()
		assert.True(t, utf8.ValidString(text), "%q", text)
		assert.False(t, strings.ContainsFunc(text, func(r rune) bool { return !unicode.IsPrint(r) }), "%q", text)
	}
	t.Run("a 200's message", func(t *testing.T) {
		// JSON has no bytes that are not UTF-8: a decoder makes them U+FFFD
		srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"message":"queued\r\n::error::deployment failed\u001b[2K\u009b1A\u0007"}`)
		})
		rec, err := send(t, tlsConfig(srv), &leaktest.Recorder{})
		require.NoError(t, err)
		const shownMessage = `queued\r\n::error::deployment failed\x1b[2K\u009b1A\a`
		assert.Equal(t, shownMessage, rec.Message)
		require.Len(t, rec.Warnings, 1)
		assert.Equal(t, `HTTP 200 with message "`+shownMessage+`" instead of "success"`, rec.Warnings[0])
		printable(t, rec.Message)
		printable(t, rec.Warnings[0])
	})
	t.Run("a 200 whose body is not JSON", func(t *testing.T) {
		srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, said) })
		rec, err := send(t, tlsConfig(srv), &leaktest.Recorder{})
		require.NoError(t, err)
		require.Len(t, rec.Warnings, 1)
		assert.Contains(t, rec.Warnings[0], shown)
		printable(t, rec.Warnings[0])
	})
	t.Run("a failure's body, in the error and in the log", func(t *testing.T) {
		leaks := &leaktest.Recorder{}
		var logged []string
		srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, said)
		})
		cfg := tlsConfig(srv)
		cfg.Token, cfg.RetryBackoff = secret.New(token), time.Millisecond
		cfg.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
		p, err := Prepare(cfg)
		require.NoError(t, err)
		_, err = p.Send(context.Background(), body)
		record(leaks, nil, err)
		var we *Error
		require.ErrorAs(t, err, &we)
		assert.Equal(t, shown, we.Body)
		assert.Contains(t, err.Error(), "Response body: "+shown)
		printable(t, err.Error())
		require.Len(t, logged, 1)
		head, loggedBody, ok := strings.Cut(logged[0], "; response body:\n")
		require.True(t, ok, logged[0])
		assert.Equal(t, shown, loggedBody)
		printable(t, head)
	})
}

// A careless address that holds the token in its path too (as some
// webhooks take a secret) does not print it: not in the receipt, not in
// the request shown, not in an error.
func TestATokenInTheAddressIsNotPrinted(t *testing.T) {
	leaks := &leaktest.Recorder{}
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"message":"success"}`) })
	cfg := tlsConfig(srv)
	cfg.URL = address(srv.URL + "/acme/" + token)
	rec, err := send(t, cfg, leaks)
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/acme/***", rec.URL)
	p, err := Prepare(Config{URL: address("https://hooks.example.com/acme/" + token), Token: secret.New(token)})
	require.NoError(t, err)
	leaks.Add(p.Request(body), p.RedactedURL())
	_, err = Prepare(Config{URL: address("http://hooks.example.com/acme/" + token), Token: secret.New(token)})
	require.Error(t, err)
	leaks.Add(err.Error())
	leaks.AssertClean(t, token, "t0ken-value")
}

func TestA200WhoseMessageEchoesTheTokenKeepsNone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"message":"rejected: `+r.Header.Get("Authorization")+`"}`)
	}))
	defer srv.Close()
	p, err := Prepare(Config{URL: address(srv.URL), Token: secret.New(token), AllowHTTP: true})
	require.NoError(t, err)
	rec, err := p.Send(context.Background(), body)
	require.NoError(t, err, "200 is success, as the interface says")
	assert.Equal(t, "rejected: Bearer ***", rec.Message)
	assert.NotContains(t, strings.Join(rec.Warnings, " "), token)
}

func TestATokenNoHeaderCanCarryIsRefusedBeforeAnyAttempt(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	defer srv.Close()
	for _, tok := range []string{"tok\x00en", "tok\x7fen", "tok\x1ben", "tok\xffen"} {
		_, err := Prepare(Config{URL: address(srv.URL), Token: secret.New(tok), AllowHTTP: true, ConnectAttempts: 4})
		require.Error(t, err, "%q", tok)
		assert.Contains(t, err.Error(), "--webhook-token contains a control character")
		assert.NotContains(t, err.Error(), tok)
	}
	assert.Zero(t, n.Load())
}

func TestATokenLongerThanAHeaderLineIsRefusedBeforeAnyAttempt(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	defer srv.Close()
	longest := strings.Repeat("a", MaxTokenBytes)
	_, err := Prepare(Config{URL: address(srv.URL), Token: secret.New(longest), AllowHTTP: true})
	assert.NoError(t, err, "a token of exactly the limit is taken")
	_, err = Prepare(Config{URL: address(srv.URL), Token: secret.New(longest + "b"), AllowHTTP: true, ConnectAttempts: 4})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--webhook-token is 8193 bytes, more than the 8192 an HTTP header line carries")
	assert.Less(t, len(err.Error()), 300, "the error does not echo the token")
	assert.Zero(t, n.Load())
}

// The module's own container is not the user's machine: a webhook address on
// loopback is refused before anything is built or sent, naming the flag and
// the host, and showing the address as addresses are shown.
func TestCheckNotLoopback(t *testing.T) {
	for _, tc := range []struct {
		url  string
		host string // "" when accepted
	}{
		{"http://localhost:8080/acme/dev", `"localhost:8080"`},
		{"http://127.0.0.1:8080/acme/dev?token=s3cret", `"127.0.0.1:8080"`},
		{"https://user:s3cret@[::1]/acme", `"[::1]"`},
		{"http://0.0.0.0:8080/acme", `"0.0.0.0:8080"`},
		{"https://hooks.example.com/acme/prod", ""},
		{"http://2d4e8a1b0c3f5d6e:8080/acme", ""}, // a service's endpoint (engine-facts 7)
		{"http://10.87.0.12:8080/acme", ""},
	} {
		t.Run(tc.url, func(t *testing.T) {
			err := address(tc.url).CheckNotLoopback()
			if tc.host == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "--webhook-url ")
			assert.Contains(t, err.Error(), tc.host+" names this machine")
			assert.Contains(t, err.Error(), "nothing was sent")
			assert.NotContains(t, err.Error(), "s3cret")
		})
	}
}

// A webhook that is a Dagger service (the demo's receiver) is called
// directly, past the engine's proxy, which cannot reach a service's address;
// any other goes through HTTP_PROXY. The calls run in a process of their
// own, given the proxy: net/http reads the proxy variables once a process.
func TestADirectCallSkipsTheProxy(t *testing.T) {
	const hook = "http://receiver.invalid:8080/hook"
	if os.Getenv("WEBHOOK_TEST_PROXIED") == "1" {
		for _, direct := range []bool{false, true} {
			p, err := Prepare(Config{URL: address(hook), Token: secret.New(token), AllowHTTP: true, Direct: direct})
			require.NoError(t, err)
			rec, err := p.Send(context.Background(), body)
			if direct {
				require.Error(t, err, "a direct call looks the address up itself")
				assert.Contains(t, err.Error(), "receiver.invalid")
			} else {
				require.NoError(t, err)
				assert.Equal(t, "via the proxy", rec.Message)
			}
		}
		return
	}
	var asked []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.Method+" "+r.URL.String())
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"message":"via the proxy"}`)
	}))
	t.Cleanup(proxy.Close)
	cmd := exec.Command(os.Args[0], "-test.run=^TestADirectCallSkipsTheProxy$")
	cmd.Env = append(os.Environ(), "WEBHOOK_TEST_PROXIED=1", "HTTP_PROXY="+proxy.URL, "HTTPS_PROXY="+proxy.URL, "NO_PROXY=", "no_proxy=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, []string{"POST " + hook}, asked, "only the call that is not direct went to the proxy")
}
