// Command webhook-receiver stands in for the platform's deployment webhook in
// local runs and tests: it checks the bearer token and the payload as the
// platform would, records what it accepts (GET /_deliveries lists it) and
// answers 200 {"message":"success"}.
//
//	WEBHOOK_TOKEN=… webhook-receiver -listen :8080
package main

import (
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"dagger/lowcode-pipeline/internal/payload"
	"dagger/lowcode-pipeline/internal/webhook"
)

func main() {
	listen := flag.String("listen", ":8080", "address to listen on")
	tokenFile := flag.String("token-file", "", "file holding the bearer token (default: $WEBHOOK_TOKEN)")
	tlsCert := flag.String("tls-cert", "", "certificate (PEM) to serve https with")
	tlsKey := flag.String("tls-key", "", "private key (PEM) of -tls-cert")
	flag.Parse()

	token, err := readToken(*tokenFile)
	if err != nil {
		log.Fatal(err)
	}
	r := &webhook.Receiver{
		Token:    token,
		Validate: func(b []byte) error { _, err := payload.Parse(b); return err },
		Logf:     log.Printf,
	}
	srv := &http.Server{Addr: *listen, Handler: r, ReadHeaderTimeout: 10 * time.Second}
	if *tlsCert != "" || *tlsKey != "" {
		log.Printf("webhook receiver listening on %s (https)", *listen)
		log.Fatal(srv.ListenAndServeTLS(*tlsCert, *tlsKey))
	}
	log.Printf("webhook receiver listening on %s", *listen)
	log.Fatal(srv.ListenAndServe())
}

func readToken(file string) (string, error) {
	token := os.Getenv("WEBHOOK_TOKEN")
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
