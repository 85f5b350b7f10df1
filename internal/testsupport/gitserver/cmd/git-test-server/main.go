// Command git-test-server serves bare git repositories over https with git
// http-backend, demanding the token in $GIT_TOKEN as the Basic password: a
// self-hosted git server with a private CA, for the engine checks in tests/.
//
//	GIT_TOKEN=… git-test-server -root /srv/git -init code.git -tls-cert c.pem -tls-key k.pem -listen :443
package main

import (
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"dagger/lowcode-pipeline/internal/testsupport/gitserver"
)

func main() {
	root := flag.String("root", "/srv/git", "folder of the bare repositories")
	initRepo := flag.String("init", "", "bare repository to create empty under -root, if missing")
	listen := flag.String("listen", ":443", "address to listen on")
	cert := flag.String("tls-cert", "", "certificate (PEM); without it and -tls-key, plain http")
	key := flag.String("tls-key", "", "private key (PEM)")
	flag.Parse()
	if err := serve(*root, *initRepo, *listen, *cert, *key, os.Getenv("GIT_TOKEN")); err != nil {
		log.Fatal(err)
	}
}

func serve(root, initRepo, listen, cert, key, token string) error {
	h, err := handler(root, initRepo, token)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: listen, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if cert == "" && key == "" { // behind a TLS front (the engine checks)
		log.Printf("git server on %s (http), repositories in %s", listen, root)
		return srv.ListenAndServe()
	}
	log.Printf("git server on %s (https), repositories in %s", listen, root)
	return srv.ListenAndServeTLS(cert, key)
}

// handler creates initRepo when missing and serves root with the token.
func handler(root, initRepo, token string) (http.Handler, error) {
	if token == "" {
		return nil, errors.New("no token: set GIT_TOKEN")
	}
	if initRepo != "" {
		if _, err := os.Stat(filepath.Join(root, initRepo)); os.IsNotExist(err) {
			if err := gitserver.InitBare(filepath.Join(root, initRepo)); err != nil {
				return nil, err
			}
		}
	}
	return gitserver.Handler(root, token, func(user string, push bool) {
		if push {
			log.Printf("push as %q", user)
		}
	})
}
