package commands

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/payload"
)

func TestReadToken(t *testing.T) {
	tok, err := readToken("from-env", "")
	require.NoError(t, err)
	assert.Equal(t, "from-env", tok)

	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("from-file\n"), 0o600))
	tok, err = readToken("from-env", file)
	require.NoError(t, err)
	assert.Equal(t, "from-file", tok, "a file's trailing newline is not part of the token, and the file wins")

	tok, err = readToken("from-env\n", "")
	require.NoError(t, err)
	assert.Equal(t, "from-env", tok, "nor a variable's (round-15 note N1): no client sends a token holding one")

	_, err = readToken("", "")
	assert.EqualError(t, err, "no token: set WEBHOOK_TOKEN or -token-file")
	_, err = readToken(" \n", "")
	assert.EqualError(t, err, "no token: set WEBHOOK_TOKEN or -token-file")
}

// lockedBuffer is a buffer a server goroutine writes while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestWebhookReceiverServesUntilItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stderr lockedBuffer
	exit := make(chan int, 1)
	getenv := func(k string) string {
		if k == "WEBHOOK_TOKEN" {
			return "receiver-token"
		}
		return ""
	}
	go func() { exit <- WebhookReceiver(ctx, []string{"-listen", "127.0.0.1:0"}, getenv, nil, &stderr) }()

	listening := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+) \(http\)`)
	var addr string
	require.Eventually(t, func() bool {
		m := listening.FindStringSubmatch(stderr.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	}, 10*time.Second, 10*time.Millisecond, "the receiver says where it listens")

	body := `{"frontend":{"image":"registry.example.com/app/frontend@sha256:` + strings.Repeat("a", 64) + `"}}`
	_, err := payload.Parse([]byte(body))
	require.NoError(t, err, "the test's payload is one the platform accepts")
	post := func(token string) int {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusForbidden, post("another-token"), "a wrong token is refused")
	assert.Equal(t, http.StatusOK, post("receiver-token"))

	cancel()
	select {
	case code := <-exit:
		assert.Equal(t, 0, code, "an ended context is a clean stop")
	case <-time.After(10 * time.Second):
		t.Fatal("the receiver did not stop when its context ended")
	}
}

func TestWebhookReceiverRefusesToStartWithoutAToken(t *testing.T) {
	var stderr bytes.Buffer
	code := WebhookReceiver(context.Background(), []string{"-listen", "127.0.0.1:0"}, func(string) string { return "" }, nil, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "webhook-receiver: no token")
}
