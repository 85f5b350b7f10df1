package ocipublish

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// A base's registry answering an error with a huge body of escape sequences
// (round-18 probes F1, F2): the read keeps 64 KiB of it, and the publish's log
// says it printable and short.
func TestABaseRegistrysHugeHostileErrorIsReadBoundedAndShownPrintable(t *testing.T) {
	body := "gone\x1b]0;owned\x07\x1b[2J\u202eevil\u009b31m" + strings.Repeat("x", 256<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			return
		}
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/library/base@sha256:" + strings.Repeat("0123456789abcdef", 4)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := RegistryBases(context.Background(), ref, Cache{})
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated")
	assert.Less(t, len(err.Error()), errorBodyLimit+1024)
	said := shown(err)
	assert.Equal(t, fielderr.Printable(said), said, "printable")
	assert.Less(t, len(said), 600)
	assert.Contains(t, said, `gone\x1b]0;owned\a\x1b[2J\u202eevil\u009b31m`)
}
