package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/durationflag"
	"dagger/lowcode-pipeline/internal/payload"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/webhook"
)

// Receipt records one deployment request; it holds no secret
type Receipt struct {
	// What was sent where and what came back, for a person
	Summary string
	// The whole receipt as JSON, for a script
	Json string
	// HTTP status of the answer: 200 (0 on a dry run)
	Status int
	// The answer's message: success
	Message string
	// The webhook address, user-info and query values redacted
	Url string
	// SHA-256 of the payload sent
	PayloadSha256 string
	// The image references the payload deploys
	Images []string
	// When the request was sent (RFC 3339, UTC)
	SentAt string
	// How long the call took, in milliseconds
	DurationMs int
	// How many times connecting was tried, the first included (only a failure to connect at all is tried again)
	ConnectAttempts int
	// What was odd about a 200 answer, e.g. a body that is not {"message": "success"}
	Warnings []string
}

// Send the payload to the platform's webhook: one POST with Authorization: Bearer, never sent twice
//
// Only a failure to connect at all is retried; once a connection exists the
// request may have reached the platform, so a dropped connection or a time-out
// fails without a second request. Any status but 200 fails with the response
// body written out.
//
// +cache="session"
func (p *Payload) Deploy(
	ctx context.Context,
	// Webhook address from the vendor, e.g. https://<client_host>/<project>/<instance>
	webhookUrl string,
	// Webhook token, e.g. env://WEBHOOK_TOKEN
	webhookToken *dagger.Secret,
	// Allow an http:// address (a local receiver); the token would travel unencrypted
	// +optional
	allowHttp bool,
	// Time limit for connecting (TCP and TLS)
	// +optional
	// +default="10s"
	connectTimeout string,
	// Time limit for the whole call, response included
	// +optional
	// +default="60s"
	timeout string,
	// How many times connecting is tried, the first included (never again once the request may have been received)
	// +optional
	// +default=4
	connectAttempts int,
	// CA certificate (PEM) that signs a self-hosted webhook's certificate; trusted by this call only, instead of the system's
	// +optional
	webhookCaCert *dagger.File,
) (_ *Receipt, err error) {
	defer userErr(&err)
	if err := errors.Join(webhook.CheckConnectAttempts(connectAttempts), webhook.CheckNotLoopback(webhookUrl)); err != nil {
		return nil, err
	}
	token, err := webhookToken.Plaintext(ctx)
	if err != nil {
		return nil, fmt.Errorf("read --webhook-token: %w", err)
	}
	r := deployRequest{
		url: webhookUrl, token: secret.New(token), allowHTTP: allowHttp,
		connectTimeout: connectTimeout, timeout: timeout, connectAttempts: connectAttempts,
	}
	if webhookCaCert != nil {
		pem, err := webhookCaCert.Contents(ctx)
		if err != nil {
			return nil, fmt.Errorf("read --webhook-ca-cert: %w", err)
		}
		r.caPEM = []byte(pem)
	}
	return deployPayload(ctx, []byte(p.Json), r)
}

// The request deploy would send, the token masked: checks the payload and the address, sends nothing
func (p *Payload) Request(
	// Webhook address from the vendor, e.g. https://<client_host>/<project>/<instance>
	webhookUrl string,
	// Allow an http:// address (a local receiver)
	// +optional
	allowHttp bool,
) (_ string, err error) {
	defer userErr(&err)
	if err := webhook.CheckNotLoopback(webhookUrl); err != nil {
		return "", err
	}
	return requestText([]byte(p.Json), webhookUrl, allowHttp)
}

// requestText is the request a deploy of body to webhookUrl would send, the
// token masked, after the checks deploy makes of the payload and the address.
func requestText(body []byte, webhookUrl string, allowHttp bool) (string, error) {
	if _, err := payload.Parse(body); err != nil {
		return "", fmt.Errorf("invalid payload: %w", err)
	}
	// The token is not needed to show the request: it is masked.
	call, err := prepareWebhook(deployRequest{url: webhookUrl, token: secret.New("masked"), allowHTTP: allowHttp})
	if err != nil {
		return "", err
	}
	return call.Request(body), nil
}

// A stand-in for the platform's webhook, for local runs and tests
//
// Checks method, content type and bearer token (401/403), validates the
// payload (422 with the problems), records what it accepts (GET /_deliveries,
// same token) and answers 200 {"message":"success"}. Plain http: deploy to it
// with --allow-http.
func (m *LowcodePipeline) WebhookReceiver(
	// Bearer token the receiver demands
	webhookToken *dagger.Secret,
	// Port to listen on
	// +optional
	// +default=8080
	port int,
	// Certificate (PEM) to serve https with, e.g. one a private CA signed; plain http without it
	// +optional
	tlsCert *dagger.File,
	// Private key (PEM) of --tls-cert
	// +optional
	tlsKey *dagger.Secret,
) (_ *dagger.Service, err error) {
	defer userErr(&err)
	if err := webhook.CheckPort(port); err != nil {
		return nil, err
	}
	args := []string{"webhook-receiver", "-listen", fmt.Sprintf(":%d", port)}
	ctr, err := withTool(dag.Container().From(runtimeImage), "webhook-receiver")
	if err != nil {
		return nil, err
	}
	ctr = ctr.WithSecretVariable("WEBHOOK_TOKEN", webhookToken).WithExposedPort(port)
	switch {
	case tlsCert != nil && tlsKey != nil:
		ctr = ctr.WithMountedFile("/run/lowcode-pipeline/tls.crt", tlsCert).WithMountedSecret("/run/lowcode-pipeline/tls.key", tlsKey)
		args = append(args, "-tls-cert", "/run/lowcode-pipeline/tls.crt", "-tls-key", "/run/lowcode-pipeline/tls.key")
	case tlsCert != nil || tlsKey != nil:
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	return ctr.AsService(dagger.ContainerAsServiceOpts{Args: args}), nil
}

type deployRequest struct {
	url                     string
	token                   secret.Text
	allowHTTP               bool
	connectTimeout, timeout string
	connectAttempts         int
	caPEM                   []byte // --webhook-ca-cert
}

// deployPayload checks the payload and the call, then sends the payload (or
// shows it) and turns what happened into a receipt.
func deployPayload(ctx context.Context, body []byte, r deployRequest) (*Receipt, error) {
	parsed, err := payload.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("invalid payload, nothing sent: %w", err)
	}
	call, err := prepareWebhook(r)
	if err != nil {
		return nil, err
	}
	rec, err := call.Send(ctx, body)
	if err != nil {
		return nil, err
	}
	return newReceipt(results.Receipt{
		Status: rec.Status, Message: rec.Message, Url: rec.URL, PayloadSha256: rec.PayloadSHA256, Images: parsed.Images(),
		SentAt: rec.SentAt.Format(time.RFC3339Nano), DurationMs: int(rec.DurationMs), ConnectAttempts: rec.ConnectAttempts, Warnings: rec.Warnings,
	}), nil
}

// defaultConnectAttempts is deploy's --connect-attempts default.
const defaultConnectAttempts = 4

// document is the receipt as results renders it.
func (r *Receipt) document() results.Receipt {
	return results.Receipt{Status: r.Status, Message: r.Message, Url: r.Url, PayloadSha256: r.PayloadSha256, Images: r.Images,
		SentAt: r.SentAt, DurationMs: r.DurationMs, ConnectAttempts: r.ConnectAttempts, Warnings: r.Warnings}
}

func newReceipt(r results.Receipt) *Receipt {
	return &Receipt{Summary: r.Text(), Json: results.JSON(r),
		Status: r.Status, Message: r.Message, Url: r.Url, PayloadSha256: r.PayloadSha256, Images: r.Images, SentAt: r.SentAt,
		DurationMs: r.DurationMs, ConnectAttempts: r.ConnectAttempts, Warnings: r.Warnings}
}

// prepareWebhook checks the address, token and limits before anything is sent.
func prepareWebhook(r deployRequest) (*webhook.Prepared, error) {
	var err error
	cfg := webhook.Config{
		URL: r.url, Token: r.token, AllowHTTP: r.allowHTTP, ConnectAttempts: r.connectAttempts,
		Logf: func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) },
	}
	if cfg.ConnectTimeout, err = durationflag.Optional("--connect-timeout", r.connectTimeout); err != nil {
		return nil, err
	}
	if cfg.Timeout, err = durationflag.Optional("--timeout", r.timeout); err != nil {
		return nil, err
	}
	if r.caPEM != nil {
		if cfg.RootCAs, err = webhook.CAPool(r.caPEM); err != nil {
			return nil, fmt.Errorf("--webhook-ca-cert: %w", err)
		}
	}
	return webhook.Prepare(cfg)
}
