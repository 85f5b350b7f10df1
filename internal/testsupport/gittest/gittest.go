// Package gittest serves a real git repository over HTTP for tests: git
// http-backend behind a Go server that demands a token, so the auth path of
// the code under test is the real one.
package gittest

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/testsupport/gitserver"
)

// Token is the password the server demands (any user name).
const Token = "glpat-S3CRET-token-777"

// Remote is a bare repository served over HTTP by git http-backend behind a
// Go server that demands the token, so the auth path is the real one.
type Remote struct {
	Bare, URL string
	Pushes    atomic.Int32
	caFile    string
	mu        sync.Mutex
	users     []string
}

// Users are the distinct user names the server was sent with the token.
func (r *Remote) Users() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.users)
}

// Git runs git with no user or system configuration, failing the test on error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// NewRemote serves a bare repository whose main branch holds README.md,
// other/keep.txt and codeasdata/main/stale.patch.json.
func NewRemote(t testing.TB) *Remote { return serve(t, true, false) }

// NewEmptyRemote serves a bare repository with no commit at all.
func NewEmptyRemote(t testing.TB) *Remote { return serve(t, false, false) }

// NewTLSRemote serves the seeded repository over https with a certificate of
// its own CA; CAFile is that CA in PEM, for the client to trust.
func NewTLSRemote(t testing.TB) (r *Remote, caFile string) {
	r = serve(t, true, true)
	return r, r.caFile
}

func serve(t testing.TB, seeded, tls bool) *Remote {
	_, err := exec.LookPath("git")
	require.NoError(t, err, "these tests run the real git")
	root := t.TempDir()
	r := &Remote{Bare: filepath.Join(root, "code.git")}
	require.NoError(t, gitserver.InitBare(r.Bare))

	if seeded {
		// Seed the branch: a README and a file outside the snapshot folder.
		seed := filepath.Join(root, "seed")
		Git(t, root, "init", "--quiet", "--initial-branch=main", seed)
		Write(t, filepath.Join(seed, "README.md"), "# code as data\n")
		Write(t, filepath.Join(seed, "other/keep.txt"), "not the snapshot's\n")
		Write(t, filepath.Join(seed, "codeasdata/main/stale.patch.json"), "{}\n")
		Git(t, seed, "add", ".")
		Git(t, seed, "commit", "--quiet", "-m", "seed")
		Git(t, seed, "push", "--quiet", r.Bare, "main")
	}

	handler, err := gitserver.Handler(root, Token, func(user string, push bool) {
		if push {
			r.Pushes.Add(1)
		}
		r.mu.Lock()
		if !slices.Contains(r.users, user) {
			r.users = append(r.users, user)
		}
		r.mu.Unlock()
	})
	require.NoError(t, err)
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(handler)
		r.caFile = filepath.Join(root, "ca.pem")
		cert := srv.Certificate()
		require.NoError(t, os.WriteFile(r.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o644))
	} else {
		srv = httptest.NewServer(handler)
	}
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/code.git"
	return r
}

// Stalled serves an address that accepts connections and requests and
// never answers, until the test ends.
func Stalled(t testing.TB) string {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-done:
		case <-req.Context().Done():
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv.URL + "/code.git"
}

// Write creates path with content, and its folders.
func Write(t testing.TB, path, content string) {
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// Checkout clones the remote's main branch as it is now.
func (r *Remote) Checkout(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "check")
	Git(t, "", "clone", "--quiet", "--branch", "main", r.Bare, dir)
	return dir
}

// CheckoutBranch clones one branch of the remote as it is now.
func (r *Remote) CheckoutBranch(t testing.TB, branch string) string {
	dir := filepath.Join(t.TempDir(), "check-"+branch)
	Git(t, "", "clone", "--quiet", "--branch", branch, r.Bare, dir)
	return dir
}
