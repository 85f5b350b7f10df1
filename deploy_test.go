package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/webhook"
)

const testToken = "tok-9f8e7d6c5b4a"

func webhookServer(t *testing.T, status int, answer string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
		io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestDeploySendsThePayloadOnceAndReturnsTheReceipt(t *testing.T) {
	srv, n := webhookServer(t, 200, `{"message":"success"}`)
	rec, err := deployPayload(context.Background(), []byte(`{"frontend":{"image":"reg.example.com/front:1"}}`), deployRequest{
		url: srv.URL + "/acme/prod", token: secret.New(testToken), allowHTTP: true, connectAttempts: 4, connectTimeout: "5s", timeout: "30s",
	})
	require.NoError(t, err)
	assert.Equal(t, 200, rec.Status)
	assert.Equal(t, "success", rec.Message)
	assert.Equal(t, srv.URL+"/acme/prod", rec.Url)
	assert.Equal(t, []string{"reg.example.com/front:1"}, rec.Images)
	assert.Equal(t, 1, rec.ConnectAttempts)
	assert.Len(t, rec.PayloadSha256, 64)
	assert.EqualValues(t, 1, n.Load())
	assert.Contains(t, rec.Summary, "deployed: 200 success")
	assert.Contains(t, rec.Json, `"connectAttempts": 1`)

	data, err := json.Marshal(rec)
	require.NoError(t, err)
	assert.NotContains(t, string(data), testToken)
}

// A receipt's fields hold what the server said printable, as its summary
// does: dagger call prints a field as it is (round-17 probe F3's path).
func TestAReceiptsFieldsArePrintable(t *testing.T) {
	srv, _ := webhookServer(t, 200, `{"message":"queued\r\n::error::forged\u001b[2K\u202e"}`)
	rec, err := deployPayload(context.Background(), []byte(`{"frontend":{"image":"reg.example.com/front:1"}}`), deployRequest{
		url: srv.URL + "/acme/prod", token: secret.New(testToken), allowHTTP: true, connectAttempts: 1, connectTimeout: "5s", timeout: "30s",
	})
	require.NoError(t, err)
	assert.Equal(t, `queued\r\n::error::forged\x1b[2K\u202e`, rec.Message)
	for _, w := range append([]string{rec.Url}, rec.Warnings...) {
		assert.Equal(t, fielderr.Printable(w), w)
	}
	assert.NotEmpty(t, rec.Warnings, "a message other than success")
}

func TestDeployNeverSendsAnInvalidPayload(t *testing.T) {
	srv, n := webhookServer(t, 200, `{"message":"success"}`)
	_, err := deployPayload(context.Background(), []byte(`{"frontend":{}}`), deployRequest{url: srv.URL, token: secret.New(testToken), allowHTTP: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid payload, nothing sent: frontend.image: required")
	assert.Zero(t, n.Load())
}

func TestRequestShowsWhatDeployWouldSendAndSendsNothing(t *testing.T) {
	srv, n := webhookServer(t, 200, `{"message":"success"}`)
	body := []byte(`{"extraArgs":["--force-sync"]}`)
	out, err := requestText(body, srv.URL+"/a", true)
	require.NoError(t, err)
	assert.Contains(t, out, "POST "+srv.URL+"/a\nAuthorization: Bearer ***\nContent-Type: application/json\n\n{\"extraArgs\":[\"--force-sync\"]}")
	assert.Zero(t, n.Load())

	_, err = requestText(body, srv.URL+"/a", false)
	assert.ErrorContains(t, err, "uses plain http", "the address is checked as deploy checks it")
	_, err = (&Payload{Json: `{"frontend":{}}`}).Request("https://hooks.example.com/a", false)
	assert.ErrorContains(t, err, "invalid payload: frontend.image: required")
}

func TestDeployFailsOnAnyStatusButOKWithoutTheToken(t *testing.T) {
	srv, n := webhookServer(t, 503, `{"error":"maintenance"}`)
	_, err := deployPayload(context.Background(), []byte(`{}`), deployRequest{url: srv.URL, token: secret.New(testToken), allowHTTP: true, connectAttempts: 4})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `503 Service Unavailable. Response body: {"error":"maintenance"}`)
	assert.NotContains(t, err.Error(), testToken)
	assert.EqualValues(t, 1, n.Load())
}

func TestDeployRefusesBadOptionsBeforeSending(t *testing.T) {
	srv, n := webhookServer(t, 200, `{"message":"success"}`)
	for _, tc := range []struct {
		name string
		req  deployRequest
		want string
	}{
		{"a bad connect timeout", deployRequest{url: srv.URL, allowHTTP: true, connectTimeout: "ten"}, `--connect-timeout "ten": use a positive Go duration`},
		{"a negative timeout", deployRequest{url: srv.URL, allowHTTP: true, timeout: "-1s"}, `--timeout "-1s": use a positive Go duration`},
		{"plain http not allowed", deployRequest{url: srv.URL}, "uses plain http"},
		{"a token in the URL", deployRequest{url: "https://" + testToken + "@hooks.example.com/x"}, "pass the token as a secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.token = secret.New(testToken)
			_, err := deployPayload(context.Background(), []byte(`{}`), tc.req)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), testToken)
		})
	}
	assert.Zero(t, n.Load())
}

// deploy and request are called in the module's container: a webhook on
// loopback is refused before the token is read or anything is sent, and with
// a bad --connect-attempts both are said at once.
func TestDeployAndRequestRefuseALoopbackWebhook(t *testing.T) {
	p := &Payload{Json: `{"frontend":{"image":"reg.example.com/front:1@sha256:` + strings.Repeat("a", 64) + `"}}`}
	_, err := p.Deploy(context.Background(), "http://localhost:8080/acme/dev", nil, true, "", "", 0, nil)
	require.Error(t, err, "no token needed to refuse it")
	assert.Contains(t, err.Error(), `--webhook-url http://localhost:8080: "localhost:8080" names this machine`)
	assert.Contains(t, err.Error(), "--connect-attempts 0")
	_, err = p.Request("http://127.0.0.1:8080/acme/dev", true)
	assert.ErrorContains(t, err, `"127.0.0.1:8080" names this machine`)
	shown, err := p.Request("https://hooks.example.com/acme/dev", false)
	require.NoError(t, err)
	assert.Contains(t, shown, "POST https://hooks.example.com/acme/dev")
}

func TestDeployTrustsAPrivateCAOnlyWhenGiven(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, `{"message":"success"}`)
	}))
	t.Cleanup(srv.Close)
	body := []byte(`{"frontend":{"image":"reg.example.com/front:1"}}`)

	_, err := deployPayload(context.Background(), body, deployRequest{url: srv.URL, token: secret.New(testToken)})
	require.Error(t, err, "the server's CA is not a system root")
	assert.Contains(t, err.Error(), "certificate")

	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	rec, err := deployPayload(context.Background(), body, deployRequest{url: srv.URL, token: secret.New(testToken), caPEM: ca})
	require.NoError(t, err)
	assert.Equal(t, 200, rec.Status)
	assert.EqualValues(t, 1, n.Load())

	_, err = deployPayload(context.Background(), body, deployRequest{url: srv.URL, token: secret.New(testToken), caPEM: []byte("not a certificate")})
	assert.EqualError(t, err, "--webhook-ca-cert: no PEM certificate in the file")
	assert.EqualValues(t, 1, n.Load())
}

func TestDeployRefusesZeroConnectAttemptsBeforeReadingAnything(t *testing.T) {
	// no engine here: a nil token and payload would fail on first use
	for _, n := range []int{0, -1} {
		_, err := (&Payload{}).Deploy(context.Background(), "https://hooks.example.com/acme/prod", nil, false, "", "", n, nil)
		assert.EqualError(t, err, fmt.Sprintf("--connect-attempts %d: at least 1 (it counts the first try)", n))
	}
}

func TestTheReceiverRefusesAPortNoListenerCanHave(t *testing.T) {
	// no engine here: the check comes before the receiver's container
	for _, port := range []int{0, -1, 65536} {
		_, err := (&LowcodePipeline{}).WebhookReceiver(nil, port, nil, nil)
		assert.EqualError(t, err, fmt.Sprintf("--port %d: a TCP port from 1 to 65535", port))
	}
	assert.NoError(t, webhook.CheckPort(1))
	assert.NoError(t, webhook.CheckPort(65535))
}

// deployRequest is what deploy has of its flags once the token and the CA
// certificate are read.
type deployRequest struct {
	url                     string
	token                   secret.Text
	allowHTTP               bool
	connectTimeout, timeout string
	connectAttempts         int
	caPEM                   []byte
}

// deployPayload sends body as deploy does: the spec made, then sent.
func deployPayload(ctx context.Context, body []byte, r deployRequest) (*Receipt, error) {
	f := deployFlags{url: r.url, allowHTTP: r.allowHTTP, connectTimeout: r.connectTimeout, timeout: r.timeout, connectAttempts: r.connectAttempts}
	addr, err := webhook.ParseAddress(r.url)
	if err != nil {
		return nil, err
	}
	spec, err := f.spec(addr, r.token, r.caPEM)
	if err != nil {
		return nil, err
	}
	rec, err := spec.sendJSON(ctx, body)
	if err != nil {
		return nil, err
	}
	return newReceipt(rec), nil
}

// requestText is what request shows of body, without request's check of
// the address.
func requestText(body []byte, url string, allowHTTP bool) (string, error) {
	addr, err := webhook.ParseAddress(url)
	if err != nil {
		return "", err
	}
	spec, err := deployFlags{url: url, allowHTTP: allowHTTP}.spec(addr, secret.New("masked"), nil)
	if err != nil {
		return "", err
	}
	return spec.request(body)
}
