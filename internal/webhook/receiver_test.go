package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/payload"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/testsupport/leaktest"
)

func newReceiver(t *testing.T) (*Receiver, *httptest.Server, *leaktest.Recorder) {
	leaks := &leaktest.Recorder{}
	r := &Receiver{Token: secret.New(token), Validate: func(b []byte) error { _, err := payload.Parse(b); return err }, Logf: leaks.Logf}
	srv := httptest.NewTLSServer(r)
	t.Cleanup(srv.Close)
	return r, srv, leaks
}

func TestReceiverChecksWhatThePlatformChecks(t *testing.T) {
	r, srv, leaks := newReceiver(t)
	for _, tc := range []struct {
		name, method, contentType, auth, body string
		status                                int
		answer                                string
	}{
		{"a GET is refused", "GET", "application/json", "Bearer " + token, "{}", 405, `"error":"method \"GET\" not allowed`},
		{"a form post is refused", "POST", "application/x-www-form-urlencoded", "Bearer " + token, "{}", 415, "Content-Type must be application/json"},
		{"no token", "POST", "application/json", "", "{}", 401, "missing Authorization: Bearer"},
		{"basic auth is not a bearer token", "POST", "application/json", "Basic " + token, "{}", 401, "Authorization is not Bearer "},
		{"the scheme in small letters is the same scheme (round-15 note N2)", "POST", "application/json", "bearer " + token,
			`{"frontend":{"image":"reg.example.com/front:1"}}`, 200, `{"message":"success"}`},
		{"a wrong token", "POST", "application/json", "Bearer nope", "{}", 403, "invalid token"},
		{"an invalid payload lists its problems", "POST", "application/json; charset=utf-8", "Bearer " + token,
			`{"frontend":{},"extraArgs":["-x"]}`, 422, `"problems":[{"path":"frontend.image","message":"required when frontend is present`},
		{"malformed JSON", "POST", "application/json", "Bearer " + token, `{"frontend":`, 422, "invalid payload: invalid JSON"},
		{"a valid payload is accepted", "POST", "application/json", "Bearer " + token,
			`{"frontend":{"image":"reg.example.com/front:1"}}`, 200, `{"message":"success"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+"/acme/prod", strings.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", tc.contentType)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			answer, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			assert.Contains(t, string(answer), tc.answer)
		})
	}
	require.Len(t, r.Deliveries(), 2, "only the valid payloads are recorded")
	assert.Equal(t, "/acme/prod", r.Deliveries()[0].Path)
	assert.JSONEq(t, `{"frontend":{"image":"reg.example.com/front:1"}}`, string(r.Deliveries()[0].Payload))
	leaks.AssertClean(t, token, "t0ken-value")
}

// A client's method and path reach the receiver's log and answer printable,
// short, and without the token, whatever it sends (a raw request: no
// client library would send these).
func TestTheReceiverSaysAClientsWordsPrintableShortAndWithoutTheToken(t *testing.T) {
	for _, tc := range []struct{ name, method, target string }{
		{"escapes in the path", "POST", "/%1B%5B2J%1B%5D0;pwned%07"},
		{"bidi, C1 and a forged line", "PUT", "/ok%E2%80%AEtxt%C2%9B31m%0D%0Afake"},
		{"the token in the path", "POST", "/hook/" + token},
		{"a huge method", strings.Repeat("M", 500_000), "/"},
		{"the token as the method (round-24 probe F3)", token, "/acme/prod"},
		{"the token in small letters as the method", strings.ToLower(token), "/acme/prod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lines []string
			r := &Receiver{Token: secret.New(token), Logf: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }}
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}"))
			req.Method = tc.method
			req.URL.Path, _ = url.PathUnescape(tc.target)
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			require.Len(t, lines, 1)
			answer := rec.Body.String()
			assert.Equal(t, fielderr.Printable(lines[0]), lines[0])
			assert.Equal(t, fielderr.PrintableJSON([]byte(answer)), answer)
			for _, said := range []string{lines[0], answer} {
				assert.NotContains(t, said, token)
				assert.NotContains(t, strings.ToLower(said), strings.ToLower(token))
				assert.Less(t, len(said), 1024)
			}
		})
	}
}

func TestClientAndReceiverEndToEnd(t *testing.T) {
	r, srv, leaks := newReceiver(t)
	cfg := tlsConfig(srv)
	rec, err := send(t, cfg, leaks)
	require.NoError(t, err)
	assert.Equal(t, "success", rec.Message)
	require.Len(t, r.Deliveries(), 1)
	assert.JSONEq(t, string(body), string(r.Deliveries()[0].Payload))

	// The deliveries list is there for engine tests, behind the same token.
	req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL+DeliveriesPath, nil)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var listed []Delivery
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&listed))
	require.Len(t, listed, 1)

	// A wrong token is a failed deployment that records nothing.
	cfg.Token = secret.New("wrong-token")
	_, err = send(t, cfg, leaks)
	var we *Error
	require.ErrorAs(t, err, &we)
	assert.Equal(t, 403, we.Status)
	assert.Len(t, r.Deliveries(), 1)
	leaks.AssertClean(t, token, "t0ken-value")
}
