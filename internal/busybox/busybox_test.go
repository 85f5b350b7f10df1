package busybox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolIsTheCommandTheBinaryIsInstalledAs(t *testing.T) {
	for _, tc := range []struct{ argv0, want string }{
		{"/usr/local/bin/oci-publish", "oci-publish"},
		{"snapshot-push", "snapshot-push"},
		{"./webhook-receiver", "webhook-receiver"},
		{"/runtime", ""},
		{"/tmp/go-build1/b001/busybox.test", ""},
		{"/usr/local/bin/oci-publish-old", ""},
		{"", ""},
	} {
		assert.Equal(t, tc.want, Tool(tc.argv0), tc.argv0)
	}
}

func TestInstallCopiesTheRunningBinaryOnce(t *testing.T) {
	// once per process: a fresh start for this test, whatever ran before it
	// in the process (go test -count=N runs it again in the same one)
	install.once, install.err = sync.Once{}, nil
	dir := t.TempDir()
	require.NoError(t, Install(dir))
	self, err := os.Executable()
	require.NoError(t, err)
	want, err := os.ReadFile(self)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(dir, InstallPath))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "the installed file is the running binary")
	info, err := os.Stat(filepath.Join(dir, InstallPath))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), info.Mode().Perm())
	leftovers, err := filepath.Glob(filepath.Join(dir, filepath.Dir(InstallPath), ".install-*"))
	require.NoError(t, err)
	assert.Empty(t, leftovers, "no temporary file is left")

	require.NoError(t, os.Remove(filepath.Join(dir, InstallPath)))
	require.NoError(t, Install(dir))
	_, err = os.Stat(filepath.Join(dir, InstallPath))
	assert.ErrorIs(t, err, os.ErrNotExist, "a process copies itself once: every later call answers with the first")
}

// built is the module, built once for the tests that run it.
var built struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// moduleBinary builds the module (the repository's root package) as the
// engine's Go SDK does, once, and installs it under each name in a fresh
// folder.
func moduleBinary(t testing.TB, names ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the module")
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "busybox-module-"); built.err != nil {
			return
		}
		build := exec.Command("go", "build", "-ldflags", "-s -w", "-o", filepath.Join(built.dir, "lowcode-pipeline"), ".")
		build.Dir = filepath.Join("..", "..")
		built.out, built.err = build.CombinedOutput()
	})
	require.NoError(t, built.err, "%s", built.out)
	dir := t.TempDir()
	bin := filepath.Join(dir, "lowcode-pipeline")
	require.NoError(t, os.Link(filepath.Join(built.dir, "lowcode-pipeline"), bin))
	for _, n := range names {
		require.NoError(t, os.Link(bin, filepath.Join(dir, n)))
	}
	return dir
}

// withoutSession is the environment with no Dagger session, as a tool's
// container has it.
func withoutSession() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DAGGER_") {
			env = append(env, kv)
		}
	}
	return env
}

// BenchmarkTheModuleBinaryStarts: what a process of the module's binary
// costs to start, every package initialised, before it does anything; one
// module call costs about 1.5 s on the engine (tests/engine-facts.md, fact
// 2), so the rest is the engine's.
func BenchmarkTheModuleBinaryStarts(b *testing.B) {
	dir := moduleBinary(b, "oci-publish")
	for b.Loop() {
		cmd := exec.Command(filepath.Join(dir, "oci-publish")) // no arguments: usage, exit 2
		cmd.Env = withoutSession()
		var exit *exec.ExitError
		if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 2 {
			b.Fatalf("oci-publish without arguments: %v, want its usage and exit 2", err)
		}
	}
}

func TestTheModuleBinaryRunsAsEachToolWithoutASession(t *testing.T) {
	dir := moduleBinary(t, Tools...)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"oci-publish", nil, 2, "oci-publish: usage: oci-publish normalize"},
		{"snapshot-push", []string{"-batch", "/nonexistent/batch.json"}, 2, "snapshot-push: -batch:"},
		{"webhook-receiver", []string{"-listen", "127.0.0.1:0"}, 2, "webhook-receiver: no token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(dir, tc.name), tc.args...)
			cmd.Env = withoutSession()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "%s", stderr.String())
			assert.Equal(t, tc.code, exit.ExitCode(), stderr.String())
			assert.Contains(t, stderr.String(), tc.stderr)
			assert.NotContains(t, stderr.String(), "DAGGER_SESSION", "the tool never reaches the engine's client")
		})
	}

	t.Run("under its own name it is the module, which needs a session", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(dir, "lowcode-pipeline"))
		cmd.Env = withoutSession()
		out, err := cmd.CombinedOutput()
		require.Error(t, err)
		assert.Contains(t, string(out), "DAGGER_SESSION_PORT is not set")
	})
}

func TestTheModuleBinaryServesAsTheWebhookReceiver(t *testing.T) {
	dir := moduleBinary(t, "webhook-receiver")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "webhook-receiver"), "-listen", "127.0.0.1:0")
	cmd.Env = append(withoutSession(), "WEBHOOK_TOKEN=binary-token")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	lines := bufio.NewScanner(stderr)
	listening := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+) \(http\)`)
	var addr string
	for addr == "" && lines.Scan() {
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	require.NotEmpty(t, addr, "the receiver says where it listens")
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/",
		strings.NewReader(`{"frontend":{"image":"registry.example.com/app/frontend:1.0.0"}}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer binary-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.NoError(t, cmd.Wait(), "a service stopped by the engine (SIGTERM) exits cleanly")
}
