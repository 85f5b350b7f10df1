// Package gitserver serves bare git repositories over HTTP with git
// http-backend behind a bearer of HTTP Basic credentials: the smallest real
// git server, for tests (internal/gittest) and the engine checks
// (cmd/git-test-server, below).
package gitserver

import (
	"net/http"
	"net/http/cgi"
	"os/exec"
	"path/filepath"
	"strings"
)

// Handler serves the repositories under root to clients whose Basic
// password is token (any user name); seen is told the user name of each
// request, push says whether it is a push.
func Handler(root, token string, seen func(user string, push bool)) (http.Handler, error) {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return nil, err
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		user, pw, ok := req.BasicAuth()
		if !ok || pw != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		if seen != nil {
			seen(user, strings.HasSuffix(req.URL.Path, "/git-receive-pack"))
		}
		backend.ServeHTTP(w, req)
	}), nil
}

// InitBare creates an empty bare repository that accepts pushes over HTTP.
func InitBare(dir string) error {
	if out, err := exec.Command("git", "init", "--quiet", "--bare", "--initial-branch=main", dir).CombinedOutput(); err != nil {
		return &gitError{string(out), err}
	}
	if out, err := exec.Command("git", "-C", dir, "config", "http.receivepack", "true").CombinedOutput(); err != nil {
		return &gitError{string(out), err}
	}
	return nil
}

type gitError struct {
	out string
	err error
}

func (e *gitError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.out) }
