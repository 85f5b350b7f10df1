package commands

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/ocipublish"
	"dagger/lowcode-pipeline/internal/testsupport/tartest"
)

func TestRunPushesTheTarballAndPrintsThePinnedReferences(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	u, _ := url.Parse(srv.URL)

	dir := t.TempDir()
	prepareFile := prepared(t, dir, "frontend", 512, 2)
	normalized := filepath.Join(dir, "normalized")
	var stdout, stderr bytes.Buffer
	code := OCIPublish(context.Background(), []string{"normalize", "-request", prepareFile, "-out", normalized}, func(string) string { return "" }, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Empty(t, stdout.String(), "normalize prints nothing: its output is the layout")

	req, _ := json.Marshal(ocipublish.Request{Kind: "frontend", Refs: []string{"localhost:5000/team/frontend:1.0.0"}, Connect: u.Host,
		Username: "ci", Timeout: "1m"})
	reqFile := filepath.Join(dir, "request.json")
	require.NoError(t, os.WriteFile(reqFile, req, 0o600))
	// a second push of the same layout changes nothing
	for _, outcome := range []string{ocipublish.OutcomePushed, ocipublish.OutcomeUnchanged} {
		stdout.Reset()
		code = OCIPublish(context.Background(), []string{"push", "-request", reqFile, "-layout", normalized}, func(string) string { return "" }, &stdout, &stderr)
		require.Equal(t, 0, code, stderr.String())
		var res ocipublish.Result
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
		require.Len(t, res.Pushed, 1)
		assert.Equal(t, "localhost:5000/team/frontend:1.0.0@"+res.Digest, res.Pushed[0].Ref)
		assert.Equal(t, outcome, res.Pushed[0].Outcome)
	}
}

// The password comes from REGISTRY_PASSWORD, never the request; a registry
// that echoes it back (the login's basic header included) has it hidden in
// what the push says.
func TestPushNeverSaysThePasswordARegistryEchoes(t *testing.T) {
	const password = "s3cret-registry-pa55word"
	reg := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"errors":[{"code":"DENIED","message":"%s as %s"}]}`, password, r.Header.Get("Authorization"))
			return
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	code, stdout, stderr := pushOne(t, u.Host, "ci", password)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "oci-publish: the backend image: push "+u.Host+"/team/backend:1: ")
	assert.Contains(t, stderr, "DENIED: *** as Basic ", "the registry's words, the password hidden")
	assert.NotContains(t, stderr, password)
	assert.NotContains(t, stderr, base64.StdEncoding.EncodeToString([]byte("ci:"+password)))
	assert.Empty(t, stdout)
}

func TestNormalizingTwiceWritesTheSameLayout(t *testing.T) {
	dir := t.TempDir()
	prepareFile := prepared(t, dir, "backend", 256, 1)
	var index [2]string
	for i := range 2 {
		out := filepath.Join(dir, fmt.Sprint("out", i))
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, OCIPublish(context.Background(), []string{"normalize", "-request", prepareFile, "-out", out}, os.Getenv, &stdout, &stderr), stderr.String())
		data, err := os.ReadFile(filepath.Join(out, "index.json"))
		require.NoError(t, err)
		index[i] = string(data)
	}
	assert.Equal(t, index[0], index[1], "the cached step's output depends on its inputs only")
}

func TestRunRefusesATarballThatWritesOutsideItsFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "layout"), 0o755))
	tarball := filepath.Join(dir, "image.tar")
	tartest.Pack(t, filepath.Join(dir, "layout"), tarball, &tar.Header{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644})
	data, _ := json.Marshal(ocipublish.Prepare{Kind: "backend", Tarball: tarball})
	reqFile := filepath.Join(dir, "request.json")
	require.NoError(t, os.WriteFile(reqFile, data, 0o600))
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, OCIPublish(context.Background(), []string{"normalize", "-request", reqFile, "-out", filepath.Join(dir, "out")}, os.Getenv, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `the backend image: the image tarball has an entry outside it: "../escape"`)
	assert.NoFileExists(t, filepath.Join(os.TempDir(), "escape"))
	assert.Empty(t, stdout.String())
}

// What a tarball's layout says (a media type) reaches the log printable
// (round-19 note).
func TestRunSaysALayoutsWordsPrintable(t *testing.T) {
	dir := t.TempDir()
	layoutDir := filepath.Join(dir, "layout")
	require.NoError(t, os.MkdirAll(layoutDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(layoutDir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(layoutDir, "index.json"), []byte(`{"schemaVersion":2,"manifests":[{"mediaType":"evil\u001b]0;owned\u0007\u202e","digest":"sha256:`+strings.Repeat("0", 64)+`","size":1}]}`), 0o644))
	tarball := filepath.Join(dir, "image.tar")
	tartest.Pack(t, layoutDir, tarball)
	data, _ := json.Marshal(ocipublish.Prepare{Kind: "backend", Tarball: tarball})
	reqFile := filepath.Join(dir, "request.json")
	require.NoError(t, os.WriteFile(reqFile, data, 0o600))
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, OCIPublish(context.Background(), []string{"normalize", "-request", reqFile, "-out", filepath.Join(dir, "out")}, os.Getenv, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `evil\x1b]0;owned\a\u202e`)
	assert.Equal(t, fielderr.Printable(strings.TrimSuffix(stderr.String(), "\n")), strings.TrimSuffix(stderr.String(), "\n"))
}

func TestRunNeedsARequest(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, OCIPublish(context.Background(), []string{"push", "-request", filepath.Join(t.TempDir(), "none.json")}, os.Getenv, &stdout, &stderr))
	assert.True(t, strings.HasPrefix(stderr.String(), "oci-publish: -request:"))
	stderr.Reset()
	assert.Equal(t, 2, OCIPublish(context.Background(), []string{"-request", "x"}, os.Getenv, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "usage: oci-publish normalize")
}

// prepared writes, in dir, a random image of layers layers of size bytes as
// the tarball Container.asTarball gives, and normalize's request for it (a
// kind's image, the Unix epoch); it returns the request's file.
func prepared(t *testing.T, dir, kind string, size, layers int64) string {
	t.Helper()
	img, err := random.Image(size, layers)
	require.NoError(t, err)
	tarball := imageTarball(t, dir, img)
	prepare, err := json.Marshal(ocipublish.Prepare{Kind: kind, Tarball: tarball, Created: time.Unix(0, 0).UTC()})
	require.NoError(t, err)
	prepareFile := filepath.Join(dir, "prepare.json")
	require.NoError(t, os.WriteFile(prepareFile, prepare, 0o600))
	return prepareFile
}

// imageTarball writes img into dir as the tarball Container.asTarball gives
// (an OCI layout, image.tar) and returns its path.
func imageTarball(t *testing.T, dir string, img v1.Image) string {
	t.Helper()
	p, err := layout.Write(filepath.Join(dir, "layout"), empty.Index)
	require.NoError(t, err)
	require.NoError(t, p.AppendImage(img))
	tarball := filepath.Join(dir, "image.tar")
	tartest.Pack(t, filepath.Join(dir, "layout"), tarball)
	return tarball
}

// A registry answering an error with a huge body (here 64 MiB of escapes
// for the scrubber to read, the password in it): the push ends soon, in
// bounded memory, saying a short line that shows no part of the password.
func TestPushReadsAHugeErrorAnswerInBoundedTimeAndMemory(t *testing.T) {
	const password = "Reg1stry-Passw0rd-Sekret"
	for name, body := range map[string]string{
		"64 MiB of escapes":         strings.Repeat(`%41<b>&#x41;\u0041`, 64<<20/18),
		"the password, then 64 MiB": password + strings.Repeat(`%41<b>&#x41;\u0041`, 64<<20/18),
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/v2/":
				case r.Method == http.MethodHead:
					w.WriteHeader(http.StatusNotFound)
				default:
					w.WriteHeader(http.StatusForbidden)
					fmt.Fprint(w, body)
				}
			}))
			defer srv.Close()
			u, _ := url.Parse(srv.URL)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			code, _, stderr := pushOne(t, u.Host, "ci", password)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			assert.Equal(t, 1, code)
			assert.Less(t, took, 10*time.Second)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<20), "bytes allocated")
			assert.Less(t, len(stderr), 1024)
			assert.Contains(t, stderr, "oci-publish: the backend image: push "+u.Host+"/team/backend:1: ")
			for i := 4; i <= len(password); i++ {
				assert.NotContains(t, stderr, password[:i])
			}
		})
	}
}

// A token endpoint answering a success of 256 MiB, fast: the push fails
// in bounded memory, saying the answer was too large.
func TestPushRefusesAHugeSuccessfulAnswer(t *testing.T) {
	token := `{"token":"` + strings.Repeat("a", 256<<20) + `"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/token") {
			io.WriteString(w, token)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="http://`+r.Host+`/token",service="reg"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, _, stderr := pushOne(t, u.Host, "", "")
	runtime.ReadMemStats(&after)
	assert.Equal(t, 1, code)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<20), "bytes allocated")
	assert.Contains(t, stderr, "the registry's answer is over 8 MiB, more than a manifest or a token")
}

// pushOne runs `oci-publish push` of a one-image layout to host's
// team/backend:1 as username with password: its exit code and output.
func pushOne(t *testing.T, host, username, password string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	layoutDir := filepath.Join(dir, "layout")
	p, err := layout.Write(layoutDir, empty.Index)
	require.NoError(t, err)
	img, err := random.Image(64, 1)
	require.NoError(t, err)
	require.NoError(t, p.AppendImage(img))
	req, _ := json.Marshal(ocipublish.Request{Kind: "backend", Refs: []string{host + "/team/backend:1"}, Username: username, Timeout: "1m"})
	reqFile := filepath.Join(dir, "request.json")
	require.NoError(t, os.WriteFile(reqFile, req, 0o600))
	env := func(k string) string { return map[string]string{"REGISTRY_PASSWORD": password}[k] }
	var out, errOut bytes.Buffer
	code = OCIPublish(context.Background(), []string{"push", "-request", reqFile, "-layout", layoutDir}, env, &out, &errOut)
	return code, out.String(), errOut.String()
}
