// Package webhook sends the deployment payload to the platform's webhook: one
// POST with a bearer token, exactly once, and reports what happened without
// ever revealing the token.
package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/loopback"
	"dagger/lowcode-pipeline/internal/redact"
	"dagger/lowcode-pipeline/internal/secret"
)

// Defaults for Config's zero values.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultTimeout        = 60 * time.Second
	DefaultRetryBackoff   = time.Second
	DefaultMaxErrorBody   = 8 << 10
)

// MaxTokenBytes is the longest webhook token taken: an HTTP server refuses a
// longer header line (nginx's and Apache's default limit is 8 KiB), and the
// scrubbing of every spelling of the token stays well under a second.
const MaxTokenBytes = 8 << 10

// MaxURLBytes is the longest webhook address taken, so that every message
// that names it stays short: https://<client_host>/<project>/<instance> is
// far shorter, and browsers and servers commonly stop at 2 KiB or 8 KiB.
const MaxURLBytes = 2 << 10

// Address is a webhook address read once (ParseAddress) and passed on: to
// the loopback check, to Prepare.
type Address struct {
	raw string
	u   *url.URL
}

// ParseAddress reads a webhook address (--webhook-url): its length and its
// syntax. What else is wrong with it is Prepare's to say, which knows the
// token to scrub from what it shows.
func ParseAddress(raw string) (*Address, error) {
	if len(raw) > MaxURLBytes {
		return nil, fmt.Errorf("--webhook-url is %d bytes, more than the %d a webhook address takes: check the value (a whole file?); nothing was sent", len(raw), MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--webhook-url %s is not a URL: write https://<client_host>/<project>/<instance>, as the vendor gave it", redact.Quote(raw))
	}
	return &Address{raw: raw, u: u}, nil
}

// Config is one deployment call.
type Config struct {
	URL   *Address    // required
	Token secret.Text // the bearer token
	// AllowHTTP permits http:// addresses (a bearer token over plain HTTP can
	// be read on the way; meant for local receivers).
	AllowHTTP bool
	// ConnectTimeout bounds connecting (TCP and TLS); Timeout bounds the whole
	// call, response included.
	ConnectTimeout, Timeout time.Duration
	// ConnectAttempts is how many times, the first included, a failure to
	// connect at all is tried, waiting RetryBackoff, then twice as long each
	// time; zero means one (the module's --connect-attempts defaults to 4).
	ConnectAttempts int
	RetryBackoff    time.Duration
	// MaxErrorBody is how much of an error response body is kept.
	MaxErrorBody int
	// Logf receives progress lines; they never hold the token.
	Logf func(format string, args ...any)
	// RootCAs, when set, replaces the system roots (tests, private CAs).
	RootCAs *x509.CertPool
	// Direct sends the call to the address itself, never through the
	// proxy of HTTP_PROXY/HTTPS_PROXY: a Dagger service's address, which a
	// proxy cannot reach.
	Direct bool
}

// Receipt records one delivery. It holds no secret, and no character a
// terminal would act on: what the server said is kept as Prepared.text
// shows it.
type Receipt struct {
	SentAt          time.Time `json:"sentAt"`
	URL             string    `json:"url"`
	PayloadSHA256   string    `json:"payloadSha256"`
	Status          int       `json:"status"`
	Message         string    `json:"message"`
	DurationMs      int64     `json:"durationMs"`
	ConnectAttempts int       `json:"connectAttempts"`
	Warnings        []string  `json:"warnings,omitempty"`
}

// Error is a failed deployment call. Its text and Body never hold the
// token, nor a character a terminal would act on.
type Error struct {
	// Status is the HTTP status, or 0 when no response came.
	Status int
	// Body is the response body's first Config.MaxErrorBody bytes, scrubbed.
	Body string
	// Sent is false only when the request certainly never reached the server.
	Sent bool
	msg  string
}

func (e *Error) Error() string { return e.msg }

// Prepared is a validated call, ready to send.
type Prepared struct {
	cfg      Config
	url      *url.URL
	redacted string // the address as it may be printed: receipts, the request shown
	shown    string // redacted, cut, for messages
	scrubber redact.Scrubber
}

// maxShownURL is what a message shows of the address at most.
const maxShownURL = 300

// Prepare checks the token and the address, and fills in defaults.
func Prepare(cfg Config) (*Prepared, error) {
	if cfg.URL == nil {
		return nil, errors.New("no webhook address: give --webhook-url")
	}
	if err := checkToken(cfg.Token); err != nil {
		return nil, err
	}
	raw, u := cfg.URL.raw, cfg.URL.u
	p := &Prepared{url: u, scrubber: redact.NewScrubber(cfg.Token)}
	// a careless address may hold the token in its path too
	redacted := p.text(Redact(raw))
	// what messages show of it: cut, as escaping can make a 2 KiB address 6
	shown := fielderr.Cut(redacted, maxShownURL)
	switch {
	case u.User != nil:
		return nil, fmt.Errorf("--webhook-url %s carries credentials in its user-info: pass the token as a secret (--webhook-token env:WEBHOOK_TOKEN) and remove it from the URL", shown)
	case u.Scheme == "http" && !cfg.AllowHTTP:
		return nil, fmt.Errorf("--webhook-url %s uses plain http, which would send the bearer token unencrypted: use https, or allow http explicitly for a local receiver (--allow-http)", shown)
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, fmt.Errorf("--webhook-url %s: scheme must be https (or http with --allow-http)", shown)
	case u.Host == "" && !strings.HasPrefix(strings.ToLower(raw), u.Scheme+"://"):
		return nil, fmt.Errorf("--webhook-url %s: write two forward slashes after %s:, %s://<client_host>/<project>/<instance>", shown, u.Scheme, u.Scheme)
	case u.Host == "":
		return nil, fmt.Errorf("--webhook-url %s has no host: write %s://<client_host>/<project>/<instance>", shown, u.Scheme)
	case !portInRange(u.Host):
		return nil, fmt.Errorf("--webhook-url %s: the port after the host is out of range: a number from 1 to 65535, or none for %s's default", shown, u.Scheme)
	case redact.Ambiguous(raw):
		return nil, errors.New("--webhook-url has an '@' after its host (in the path, query or fragment), which some parsers read as user-info, so the address could be neither printed safely nor trusted to reach the host it seems to: write it as %40; nothing was sent")
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.ConnectAttempts != 0 { // 0: one attempt, as the zero Config says
		if err := CheckConnectAttempts(cfg.ConnectAttempts); err != nil {
			return nil, err
		}
	}
	cfg.ConnectAttempts = max(cfg.ConnectAttempts, 1)
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = DefaultRetryBackoff
	}
	if cfg.MaxErrorBody <= 0 {
		cfg.MaxErrorBody = DefaultMaxErrorBody
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	p.cfg, p.redacted, p.shown = cfg, redacted, shown
	return p, nil
}

// portInRange says whether host (host[:port], as url.URL keeps it) has no
// port or one from 1 to 65535: Go's parser takes :0, :99999 and an empty
// port, which fail only once dialled, saying nothing of the flag.
func portInRange(host string) bool {
	i := strings.LastIndex(host, ":")
	if i < 0 || strings.Contains(host[i:], "]") {
		return true
	}
	n, err := strconv.Atoi(host[i+1:])
	return err == nil && n >= 1 && n <= 65535
}

// checkToken refuses a token no Authorization header can carry, first: the
// scrubbing of every message is made from it.
func checkToken(token secret.Text) error {
	switch tok := token.Reveal(); {
	case !token.Set():
		return errors.New("webhook token is empty: the call needs Authorization: Bearer <token>")
	case strings.ContainsAny(tok, "\r\n"):
		return errors.New("webhook token contains a line break: check the secret's value (a trailing newline from a file?)")
	case strings.ContainsFunc(tok, func(r rune) bool { return r < 0x20 || r == 0x7f }) || !utf8.ValidString(tok):
		return errors.New("--webhook-token contains a control character (a NUL?) or invalid UTF-8, which no HTTP header can carry: check the secret's value; nothing was sent")
	case len(tok) > MaxTokenBytes:
		return fmt.Errorf("--webhook-token is %d bytes, more than the %d an HTTP header line carries (nginx's and Apache's default limit): check the secret's value (a whole file?); nothing was sent", len(tok), MaxTokenBytes)
	}
	return nil
}

// CheckConnectAttempts refuses a --connect-attempts below 1: it counts the
// first try, so 0 would send nothing.
func CheckConnectAttempts(n int) error {
	if n < 1 {
		return fmt.Errorf("--connect-attempts %d: at least 1 (it counts the first try)", n)
	}
	return nil
}

// CheckNotLoopback refuses an address on the loopback of the machine it is
// used on: the module calls the webhook from its own container in the
// engine (tests/engine-facts.md, fact 22), where no webhook listens. A
// receiver on the user's machine (webhook-receiver … up --ports) answers
// that machine only. What else is wrong with the address is Prepare's to say.
// It runs before the token is read, so it shows the address's scheme and
// host alone: a path may hold the token, and nothing could scrub it yet.
func (a *Address) CheckNotLoopback() error {
	u := a.u
	if !loopback.Host(u.Host) {
		return nil
	}
	origin := Redact((&url.URL{Scheme: u.Scheme, Host: u.Host}).String())
	return fmt.Errorf("--webhook-url %s: %s names this machine, but the module calls the webhook from its own container in the engine, whose loopback has no webhook "+
		"(a receiver started with `webhook-receiver … up --ports` answers your machine only): give an address the engine reaches; nothing was sent",
		fielderr.Cut(fielderr.Printable(origin), maxShownURL), fielderr.Quote(u.Host))
}

// RedactedURL is the address as it may be printed, in the request shown and
// the receipt: a query, which may hold a token, shows as "?…", so that
// …/deploy?instance=prod does not read as …/deploy, where deploy does not
// send.
func (p *Prepared) RedactedURL() string {
	if p.url.RawQuery != "" {
		return p.redacted + QueryNotShown
	}
	return p.redacted
}

// QueryNotShown stands for the query of an address shown (RedactedURL).
const QueryNotShown = "?…"

// Request shows the request Send would make, with the token masked and the
// query not shown (RedactedURL). The payload is the same JSON, escaped for a
// terminal (fielderr.PrintableJSON): a rule may hold U+202E or U+009B, which
// JSON allows raw in a string.
func (p *Prepared) Request(body []byte) string {
	query := ""
	if p.url.RawQuery != "" {
		query = "; the address's query is not shown, as it may hold a token"
	}
	return fmt.Sprintf("POST %s\nAuthorization: Bearer ***\nContent-Type: application/json\n\n%s\n(not sent%s; payload sha256 %s)\n",
		p.RedactedURL(), fielderr.PrintableJSON(bytes.TrimRight(body, "\n")), query, Digest(body))
}

// Digest is the payload's SHA-256 in hex, as receipts name it.
func Digest(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// Redact is how an address is printed: see internal/redact.
func Redact(raw string) string { return redact.String(raw) }

// Send posts body once. Only a failure to connect at all (DNS, refused, TLS
// handshake) is retried: once a connection exists the request may have
// reached the server, and a deployment sent twice is worse than a failed step.
func (p *Prepared) Send(ctx context.Context, body []byte) (*Receipt, error) {
	rec := &Receipt{URL: p.RedactedURL(), PayloadSHA256: Digest(body)}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()

	start := time.Now()
	backoff := p.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		rec.ConnectAttempts = attempt
		rec.SentAt = time.Now().UTC()
		resp, connected, err := p.attempt(ctx, body)
		if err == nil {
			defer resp.Body.Close()
			rec.Status = resp.StatusCode
			err = p.readResponse(ctx, resp, rec)
			rec.DurationMs = time.Since(start).Milliseconds()
			return rec, err
		}
		failure := p.describe(ctx, err, connected)
		if connected || attempt >= p.cfg.ConnectAttempts || !retryable(err) || ctx.Err() != nil {
			return nil, &Error{Sent: connected, msg: failure}
		}
		p.cfg.Logf("could not connect to %s (attempt %d of %d): %s; retrying in %s", p.shown, attempt, p.cfg.ConnectAttempts, failure, backoff)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, &Error{msg: p.describe(ctx, ctx.Err(), false)}
		}
		backoff *= 2
	}
}

// attempt makes one request on a fresh connection. connected reports whether
// a connection was established, i.e. whether the server may have the request.
func (p *Prepared) attempt(ctx context.Context, body []byte) (*http.Response, bool, error) {
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, p.url.String(), bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	// No GetBody: the transport must never replay this request by itself.
	req.GetBody = nil
	req.Header.Set("Authorization", "Bearer "+p.cfg.Token.Reveal())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "lowcode-pipeline")
	resp, err := p.client().Do(req)
	return resp, connected.Load(), err
}

func (p *Prepared) client() *http.Client {
	dialer := &net.Dialer{Timeout: p.cfg.ConnectTimeout}
	proxy := http.ProxyFromEnvironment
	if p.cfg.Direct {
		proxy = nil
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               proxy,
			DialContext:         dialer.DialContext,
			TLSHandshakeTimeout: p.cfg.ConnectTimeout,
			TLSClientConfig:     &tls.Config{RootCAs: p.cfg.RootCAs, MinVersion: tls.VersionTLS12},
			DisableKeepAlives:   true,
			ForceAttemptHTTP2:   true,
		},
		// Never follow a redirect: the token and the payload go to the
		// address the user gave and nowhere else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func (p *Prepared) readResponse(ctx context.Context, resp *http.Response, rec *Receipt) error {
	status := fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	if resp.StatusCode == http.StatusOK {
		data, err := p.readBody(resp)
		if err != nil {
			rec.Warnings = append(rec.Warnings, "HTTP 200, but the response body could not be read: "+p.unread(ctx, err))
			return nil
		}
		switch message, ok := messageOf(data); {
		case !ok:
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("HTTP 200, but the body is not the expected {\"message\": …} JSON: %s", p.excerpt(data)))
		case message != "success":
			rec.Message = fielderr.Cut(p.text(message), 500)
			rec.Warnings = append(rec.Warnings, fmt.Sprintf(`HTTP 200 with message "%s" instead of "success"`, rec.Message))
		default:
			rec.Message = message
		}
		return nil
	}
	data, err := p.readBody(resp)
	body := p.excerpt(data)
	if err != nil {
		body += " [cut: " + p.unread(ctx, err) + "]"
	}
	// the interface has a failed request's body written out: the log holds
	// it whole (up to MaxErrorBody), as an error a person reads may be cut
	p.cfg.Logf("%s answered %s; response body:\n%s", p.shown, status, body)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return &Error{Status: resp.StatusCode, Body: body, Sent: true, msg: fmt.Sprintf(
			"deployment failed: %s redirects to %s, which is not followed (the token and payload go only to the address given); use the final address as the webhook URL. Response body: %s",
			status, fielderr.Cut(p.text(Redact(p.resolved(resp.Header.Get("Location")))), maxShownURL), body)}
	}
	return &Error{Status: resp.StatusCode, Body: body, Sent: true, msg: fmt.Sprintf("deployment failed: %s %s. Response body: %s", p.shown, status, body)}
}

// messageOf is JSON.parse(body).message as the platform's JavaScript reads
// it, when it is a string: the key "message" exactly (encoding/json would
// take "Message", "MESSAGE" or "meſſage" for it), the last one when it
// repeats.
func messageOf(body []byte) (string, bool) {
	var fields map[string]json.RawMessage // a map's keys match exactly; a repeated one keeps its last value
	if json.Unmarshal(body, &fields) != nil {
		return "", false
	}
	var message *string
	if json.Unmarshal(fields["message"], &message) != nil || message == nil {
		return "", false
	}
	return *message, true
}

// excerpt shows a response body within MaxErrorBody, marked when cut, as
// text: cut first, then scrubbed, so that what the cut leaves of a token
// echoed across it is hidden too.
func (p *Prepared) excerpt(data []byte) string {
	if len(data) == 0 {
		return "(empty)"
	}
	shown, cut := p.scrubber.ScrubAtMost(string(data), p.cfg.MaxErrorBody)
	if !cut {
		return fielderr.Printable(shown)
	}
	return fielderr.Printable(shown) + fmt.Sprintf("… [truncated after %d bytes]", p.cfg.MaxErrorBody)
}

// unread says why a body could not be read whole: the time limit, named,
// when it ended the read.
func (p *Prepared) unread(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("the answer did not end within the overall time limit of %s", p.cfg.Timeout)
	}
	return p.text(err.Error())
}

// readBody reads what excerpt shows, and one byte more to tell it was cut.
func (p *Prepared) readBody(resp *http.Response) ([]byte, error) {
	return io.ReadAll(io.LimitReader(resp.Body, int64(p.cfg.MaxErrorBody)+1))
}

// text is what a server said (or an address, or an error that repeats a
// server) as it may be printed or kept in a receipt: the token scrubbed in
// every spelling, then every character a terminal would act on shown as an
// escape, so that no server can forge a line of a CI log.
func (p *Prepared) text(s string) string {
	return fielderr.Printable(p.scrubber.Scrub(s))
}

// resolved is a Location as a client would follow it: a relative one
// (/acme/production/, //host/…) read against the webhook's address. An
// empty or unreadable one stays as it is.
func (p *Prepared) resolved(location string) string {
	if location == "" {
		return location
	}
	u, err := p.url.Parse(location)
	if err != nil {
		return location
	}
	return u.String()
}

// describe turns a transport error into a message that says which limit or
// step failed, without the URL's secrets (url.Error would print it whole).
func (p *Prepared) describe(ctx context.Context, err error, connected bool) string {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	var msg string
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && connected:
		msg = fmt.Sprintf("no response from %s within the overall time limit of %s; the request may have reached the server, so it is not sent again: check the deployment on the platform before re-running", p.shown, p.cfg.Timeout)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("could not reach %s within the overall time limit of %s: %v", p.shown, p.cfg.Timeout, err)
	case isTimeout(err) && !connected:
		msg = fmt.Sprintf("could not connect to %s within the connect time limit of %s: %v", p.shown, p.cfg.ConnectTimeout, err)
	case connected:
		msg = fmt.Sprintf("connection to %s failed after the request was sent: %v; the request may have reached the server, so it is not sent again: check the deployment on the platform before re-running", p.shown, err)
	default:
		msg = fmt.Sprintf("could not connect to %s: %v", p.shown, err)
	}
	return "deployment failed: " + p.text(msg)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// retryable reports whether a failure to connect may heal: a certificate the
// client rejects will not.
func retryable(err error) bool {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verification     *tls.CertificateVerificationError
	)
	return !errors.As(err, &unknownAuthority) && !errors.As(err, &hostname) &&
		!errors.As(err, &invalid) && !errors.As(err, &verification)
}

// CAPool is the pool of the PEM certificates given, to trust instead of the
// system's roots (a self-hosted webhook's private CA).
func CAPool(pemData []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		return nil, errors.New("no PEM certificate in the file")
	}
	return pool, nil
}
