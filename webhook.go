package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/payload"
	"dagger/lowcode-pipeline/internal/webhook"
)

// Images the module's own tools are built and run in.
const (
	goImage      = "golang:1.26-alpine"
	runtimeImage = "alpine:3.22"
)

// Send the deployment payload to the platform's webhook: one POST with Authorization: Bearer, never sent twice
//
// The payload is validated first (an invalid payload is never sent). Only a
// failure to connect at all is retried; any status but 200 fails the step
// with the response body written out. Prints the receipt.
//
// +cache="never"
func (m *LowcodePipeline) Deploy(
	ctx context.Context,
	// Webhook address from the vendor, e.g. https://<client_host>/<project>/<instance>
	webhookUrl string,
	// Webhook token, e.g. env:WEBHOOK_TOKEN
	webhookToken *dagger.Secret,
	// Payload JSON file (see the payload function)
	// +optional
	payload *dagger.File,
	// Payload JSON text (instead of a file)
	// +optional
	payloadJson string,
	// Validate and print what would be sent (token masked), send nothing
	// +optional
	dryRun bool,
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
	// How many more times a failure to connect at all is tried (never once the request may have been received)
	// +optional
	// +default=3
	connectRetries int,
) (string, error) {
	data, err := readInput(ctx, "--payload", payload, payloadJson)
	if err != nil {
		return "", err
	}
	token, err := webhookToken.Plaintext(ctx)
	if err != nil {
		return "", fmt.Errorf("read --webhook-token: %w", err)
	}
	return deployPayload(ctx, deployRequest{
		url: webhookUrl, token: token, payload: data, dryRun: dryRun, allowHTTP: allowHttp,
		connectTimeout: connectTimeout, timeout: timeout, connectRetries: connectRetries,
	})
}

// A stand-in for the platform's webhook, for local runs and tests
//
// Checks method, content type and bearer token (401/403), validates the
// payload (422 with the problems), records what it accepts (GET /_deliveries,
// same token) and answers 200 {"message":"success"}. Plain http: deploy to it
// with --allow-http.
func (m *LowcodePipeline) WebhookReceiver(
	// Bearer token the receiver demands
	token *dagger.Secret,
	// Port to listen on
	// +optional
	// +default=8080
	port int,
) *dagger.Service {
	return dag.Container().From(runtimeImage).
		WithFile("/usr/local/bin/webhook-receiver", toolBinary("webhook-receiver")).
		WithSecretVariable("WEBHOOK_TOKEN", token).
		WithExposedPort(port).
		AsService(dagger.ContainerAsServiceOpts{Args: []string{"webhook-receiver", "-listen", fmt.Sprintf(":%d", port)}})
}

// toolBinary builds cmd/<name> from this module's own source.
func toolBinary(name string) *dagger.File {
	src := dag.CurrentModule().Source()
	return dag.Container().From(goImage).
		WithMountedCache("/go/pkg/mod", dag.CacheVolume("lowcode-pipeline-gomod")).
		WithMountedCache("/root/.cache/go-build", dag.CacheVolume("lowcode-pipeline-gobuild")).
		WithEnvVariable("CGO_ENABLED", "0").
		WithDirectory("/src", src, dagger.ContainerWithDirectoryOpts{Include: []string{"go.mod", "go.sum", "cmd/", "internal/"}}).
		WithWorkdir("/src").
		WithExec([]string{"go", "build", "-trimpath", "-o", "/out/" + name, "./cmd/" + name}).
		File("/out/" + name)
}

type deployRequest struct {
	url, token              string
	payload                 []byte
	dryRun, allowHTTP       bool
	connectTimeout, timeout string
	connectRetries          int
}

// deployPayload validates, then sends (or shows) the payload and renders the receipt.
func deployPayload(ctx context.Context, r deployRequest) (string, error) {
	// Validate, then send the very bytes that were validated.
	if _, err := payload.Parse(r.payload); err != nil {
		return "", fmt.Errorf("invalid payload, nothing sent: %w", err)
	}
	call, err := prepareWebhook(r)
	if err != nil {
		return "", err
	}
	if r.dryRun {
		return call.DryRun(r.payload), nil
	}
	return sendPayload(ctx, call, r.payload)
}

// prepareWebhook checks the address, token and limits before anything is
// built or sent.
func prepareWebhook(r deployRequest) (*webhook.Prepared, error) {
	var err error
	cfg := webhook.Config{
		URL: r.url, Token: r.token, AllowHTTP: r.allowHTTP, ConnectRetries: r.connectRetries,
		Logf: func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) },
	}
	if cfg.ConnectTimeout, err = parseDuration("--connect-timeout", r.connectTimeout); err != nil {
		return nil, err
	}
	if cfg.Timeout, err = parseDuration("--timeout", r.timeout); err != nil {
		return nil, err
	}
	return webhook.Prepare(cfg)
}

// sendPayload posts body once and renders the receipt.
func sendPayload(ctx context.Context, call *webhook.Prepared, body []byte) (string, error) {
	rec, err := call.Send(ctx, body)
	if err != nil {
		return "", err
	}
	out, err := json.MarshalIndent(rec, "", "  ")
	return string(out) + "\n", err
}

func parseDuration(flag, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: invalid duration %q: use a positive Go duration such as 500ms, 10s or 2m", flag, s)
	}
	return d, nil
}
