package webhook

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/redact"
	"dagger/lowcode-pipeline/internal/secret"
)

// MaxPayloadBytes bounds what the receiver reads of one request.
const MaxPayloadBytes = 4 << 20

// Delivery is a payload the receiver accepted.
type Delivery struct {
	At      time.Time       `json:"at"`
	Path    string          `json:"path"`
	Payload json.RawMessage `json:"payload"`
}

// Receiver is a stand-in for the platform's webhook, for local runs and
// tests: it checks what the platform would check and records what it accepts.
type Receiver struct {
	// Token is the bearer token callers must present.
	Token secret.Text
	// Validate checks a payload; a non-nil error is answered with 422 and,
	// when it is a list of problems (json.Marshaler), with that list.
	Validate func([]byte) error
	// Logf receives a line per request, printable and short; it never
	// holds the token.
	Logf func(format string, args ...any)

	mu         sync.Mutex
	deliveries []Delivery
	scrubOnce  sync.Once
	scrubber   redact.Scrubber // of Token, made on the first request
}

// Deliveries returns what was accepted so far, oldest first.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.deliveries...)
}

// DeliveriesPath lists the accepted payloads (GET, same bearer token).
const DeliveriesPath = "/_deliveries"

func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.scrubOnce.Do(func() { r.scrubber = redact.NewScrubber(r.Token) })
	status, answer := r.handle(req)
	if r.Logf != nil {
		method, path := r.scrubber.Scrub(req.Method), r.scrubber.Scrub(req.URL.Path) // a client's words, which may echo the token
		r.Logf("%s %s -> %d", fielderr.Cut(fielderr.Printable(method), 40), fielderr.Cut(fielderr.Printable(path), maxShownURL), status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(answer)
}

type errorAnswer struct {
	Error    string `json:"error"`
	Problems any    `json:"problems,omitempty"`
}

func (r *Receiver) handle(req *http.Request) (int, any) {
	if req.Method == http.MethodGet && req.URL.Path == DeliveriesPath {
		if status, msg := r.authorize(req); status != 0 {
			return status, errorAnswer{Error: msg}
		}
		return http.StatusOK, r.Deliveries()
	}
	if req.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, errorAnswer{Error: "method " + fielderr.Quote(r.scrubber.Scrub(req.Method)) + " not allowed: the webhook takes POST"}
	}
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return http.StatusUnsupportedMediaType, errorAnswer{Error: "Content-Type must be application/json"}
	}
	if status, msg := r.authorize(req); status != 0 {
		return status, errorAnswer{Error: msg}
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxPayloadBytes+1))
	switch {
	case err != nil:
		return http.StatusBadRequest, errorAnswer{Error: "could not read the request body"}
	case len(body) > MaxPayloadBytes:
		return http.StatusRequestEntityTooLarge, errorAnswer{Error: "payload larger than 4 MiB"}
	}
	if r.Validate != nil {
		if err := r.Validate(body); err != nil {
			var problems json.Marshaler
			if errors.As(err, &problems) {
				return http.StatusUnprocessableEntity, errorAnswer{Error: "invalid payload", Problems: problems}
			}
			return http.StatusUnprocessableEntity, errorAnswer{Error: "invalid payload: " + err.Error()}
		}
	}
	r.mu.Lock()
	r.deliveries = append(r.deliveries, Delivery{At: time.Now().UTC(), Path: req.URL.Path, Payload: json.RawMessage(body)})
	r.mu.Unlock()
	return http.StatusOK, map[string]string{"message": "success"}
}

// authorize answers 401 without a bearer token and 403 with a wrong one.
func (r *Receiver) authorize(req *http.Request) (int, string) {
	auth := req.Header.Get("Authorization")
	// the scheme's name is case-insensitive (RFC 9110, 11.1)
	scheme, token, _ := strings.Cut(auth, " ")
	switch {
	case auth == "":
		return http.StatusUnauthorized, "missing Authorization: Bearer <token>"
	case !strings.EqualFold(scheme, "Bearer") || token == "":
		return http.StatusUnauthorized, "Authorization is not Bearer <token>"
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(r.Token.Reveal())) != 1 {
		return http.StatusForbidden, "invalid token"
	}
	return 0, ""
}

// CheckPort refuses a --port no TCP listener can have.
func CheckPort(port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("--port %d: a TCP port from 1 to 65535", port)
	}
	return nil
}
