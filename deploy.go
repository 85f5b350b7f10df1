package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/durationflag"
	"dagger/lowcode-pipeline/internal/fielderr"
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

// newReceipt is the Receipt of doc. Its fields hold what the server said
// made printable, as its summary and json do: `dagger call … message`
// prints a field as it is.
func newReceipt(doc results.Receipt) *Receipt {
	return &Receipt{Summary: doc.Text(), Json: results.JSON(doc),
		Status: doc.Status, Message: fielderr.Printable(doc.Message), Url: fielderr.Printable(doc.Url), PayloadSha256: doc.PayloadSha256,
		Images: doc.Images, SentAt: doc.SentAt, DurationMs: doc.DurationMs, ConnectAttempts: doc.ConnectAttempts, Warnings: fielderr.PrintableEach(doc.Warnings)}
}

// defaultConnectAttempts is deploy's --connect-attempts default.
const defaultConnectAttempts = 4

// deployFlags are deploy's flags as given.
type deployFlags struct {
	url                     string
	token                   *dagger.Secret
	allowHTTP               bool
	connectTimeout, timeout string
	connectAttempts         int
	caCert                  *dagger.File
	// direct: the webhook is a Dagger service (the demo's receiver), sent
	// to past the engine's proxy (webhook.Config.Direct); no flag sets it
	direct bool
}

// address reads --webhook-url, once, and checks what needs nothing read: the
// address is not this machine's (in the engine, loopback is the module's own
// container), and connecting is tried at least once. The address is nil when
// it could not be read.
func (f deployFlags) address() (*webhook.Address, error) {
	addr, err := webhook.ParseAddress(f.url)
	if err == nil {
		err = addr.CheckNotLoopback()
	}
	return addr, errors.Join(webhook.CheckConnectAttempts(f.connectAttempts), err)
}

// read reads the token and the CA certificate, concurrently (engine round
// trips).
func (f deployFlags) read(ctx context.Context) (secret.Text, []byte, error) {
	var (
		token secret.Text
		caPEM []byte
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		plain, err := f.token.Plaintext(gctx)
		if err != nil {
			return fmt.Errorf("read --webhook-token: %w", err)
		}
		token = secret.New(plain)
		return nil
	})
	g.Go(func() (err error) { caPEM, err = readFile(gctx, f.caCert, "--webhook-ca-cert"); return err })
	if err := g.Wait(); err != nil {
		return secret.Text{}, nil, err
	}
	return token, caPEM, nil
}

// deploySpec is deploy's flags checked (deployFlags.spec): the call to
// make, the address, token and limits checked before anything is sent.
type deploySpec struct {
	call *webhook.Prepared
}

// spec checks the address read, the token, the time limits and the CA
// certificate read (nil: the system's roots).
func (f deployFlags) spec(addr *webhook.Address, token secret.Text, caPEM []byte) (*deploySpec, error) {
	cfg := webhook.Config{
		URL: addr, Token: token, AllowHTTP: f.allowHTTP, ConnectAttempts: f.connectAttempts, Direct: f.direct,
		Logf: func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) },
	}
	var errs [3]error
	cfg.ConnectTimeout, errs[0] = durationflag.Optional("--connect-timeout", f.connectTimeout)
	cfg.Timeout, errs[1] = durationflag.Optional("--timeout", f.timeout)
	if caPEM != nil {
		if cfg.RootCAs, errs[2] = webhook.CAPool(caPEM); errs[2] != nil {
			errs[2] = fmt.Errorf("--webhook-ca-cert: %w", errs[2])
		}
	}
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	call, err := webhook.Prepare(cfg)
	if err != nil {
		return nil, err
	}
	return &deploySpec{call: call}, nil
}

// send sends the payload once (body, and what it holds, checked) and says
// what happened.
func (s *deploySpec) send(ctx context.Context, body []byte, parsed *payload.Payload) (results.Receipt, error) {
	rec, err := s.call.Send(ctx, body)
	if err != nil {
		return results.Receipt{}, err
	}
	return results.Receipt{
		Status: rec.Status, Message: rec.Message, Url: rec.URL, PayloadSha256: rec.PayloadSHA256, Images: parsed.Images(),
		SentAt: rec.SentAt.Format(time.RFC3339Nano), DurationMs: int(rec.DurationMs), ConnectAttempts: rec.ConnectAttempts, Warnings: rec.Warnings,
	}, nil
}

// sendJSON checks a payload given as JSON (a Payload object's), then sends
// it once.
func (s *deploySpec) sendJSON(ctx context.Context, body []byte) (results.Receipt, error) {
	parsed, err := payload.Parse(body)
	if err != nil {
		return results.Receipt{}, fmt.Errorf("invalid payload, nothing sent: %w", err)
	}
	return s.send(ctx, body, parsed)
}

// request is the request sendJSON would make of body, after checking it.
func (s *deploySpec) request(body []byte) (string, error) {
	if _, err := payload.Parse(body); err != nil {
		return "", fmt.Errorf("invalid payload: %w", err)
	}
	return s.call.Request(body), nil
}

// readFile is f's contents, read for flag; nil without f.
func readFile(ctx context.Context, f *dagger.File, flag string) ([]byte, error) {
	if f == nil {
		return nil, nil
	}
	text, err := f.Contents(ctx)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", flag, err)
	}
	return []byte(text), nil
}
