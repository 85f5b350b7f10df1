// The webhook-receiver command stands in for the platform's deployment
// webhook in local runs and tests: it checks the bearer token and the payload
// as the platform would, records what it accepts (GET /_deliveries lists it)
// and answers 200 {"message":"success"}.
//
//	WEBHOOK_TOKEN=… webhook-receiver -listen :8080

package commands

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"dagger/lowcode-pipeline/internal/payload"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/webhook"
)

// WebhookReceiver is the webhook-receiver command: it serves until ctx ends
// (0) or the server fails (1); 2 for bad flags or no token.
func WebhookReceiver(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("webhook-receiver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", ":8080", "address to listen on")
	tokenFile := fs.String("token-file", "", "file holding the bearer token (default: $WEBHOOK_TOKEN)")
	tlsCert := fs.String("tls-cert", "", "certificate (PEM) to serve https with")
	tlsKey := fs.String("tls-key", "", "private key (PEM) of -tls-cert")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	token, err := readToken(getenv("WEBHOOK_TOKEN"), *tokenFile)
	if err != nil {
		fmt.Fprintln(stderr, "webhook-receiver:", err)
		return 2
	}
	logger := log.New(stderr, "", log.LstdFlags)
	srv := &http.Server{
		Handler: &webhook.Receiver{
			Token:    secret.New(token),
			Validate: func(b []byte) error { _, err := payload.Parse(b); return err },
			Logf:     logger.Printf,
		},
		// a client that stalls is dropped: the demo's one POST takes milliseconds
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       time.Minute,
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(stderr, "webhook-receiver:", err)
		return 1
	}
	serve, scheme := func() error { return srv.Serve(ln) }, "http"
	if *tlsCert != "" || *tlsKey != "" {
		serve, scheme = func() error { return srv.ServeTLS(ln, *tlsCert, *tlsKey) }, "https"
	}
	logger.Printf("webhook receiver listening on %s (%s)", ln.Addr(), scheme)
	done := make(chan error, 1)
	go func() { done <- serve() }()
	select {
	case err = <-done:
		fmt.Fprintln(stderr, "webhook-receiver:", err)
		return 1
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		return 0
	}
}

// readToken is the token of -token-file when given, else the environment's,
// without the white space around it (a file's trailing newline, or one a
// variable was set with): no client can send a token holding it.
func readToken(fromEnv, file string) (string, error) {
	token := strings.TrimSpace(fromEnv)
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		token = strings.TrimSpace(string(data))
	}
	if token == "" {
		return "", errors.New("no token: set WEBHOOK_TOKEN or -token-file")
	}
	return token, nil
}
