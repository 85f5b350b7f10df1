package ocipublish

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pushedTo pushes a fresh normalized image built at built under refs of a
// loopback registry and returns it.
func pushedTo(t *testing.T, built time.Time, refs ...string) Artifact {
	t.Helper()
	n, err := Normalize("frontend", build(t, built, amd64), Options{Epoch: built})
	require.NoError(t, err)
	_, err = Push(context.Background(), n, Target{Refs: refs, Insecure: true, Timeout: time.Minute})
	require.NoError(t, err)
	return n
}

func TestTaggedIsTheDigestEveryTagHoldsOrSaysWhyNot(t *testing.T) {
	host := loopbackRegistry(t)
	ref := func(tag string) string { return host + "/team/frontend:" + tag }
	first := pushedTo(t, commit, ref("1.0.0"), ref("latest"))
	second := pushedTo(t, commit.Add(time.Hour), ref("1.1.0"))
	for _, tc := range []struct {
		name string
		refs []string
		want Artifact
		err  []string
	}{
		{"every tag at one digest", []string{ref("1.0.0"), ref("latest")}, first, nil},
		{"one tag", []string{ref("1.1.0")}, second, nil},
		{"a tag not pushed yet", []string{ref("1.0.0"), ref("2.0.0")}, nil, []string{ref("2.0.0") + " is not in the registry"}},
		{"a repository not there", []string{host + "/team/other:1"}, nil, []string{host + "/team/other:1 is not in the registry"}},
		{"tags apart", []string{ref("1.0.0"), ref("1.1.0")}, nil, []string{ref("1.0.0") + " holds " + digestOf(t, first), ref("1.1.0") + " holds " + digestOf(t, second)}},
		{"a reference without a tag", []string{host + "/team/frontend"}, nil, []string{`reference "` + host + `/team/frontend"`}},
		{"no reference", nil, nil, []string{"no reference to read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Tagged(context.Background(), Target{Refs: tc.refs, Insecure: true, Timeout: time.Minute})
			if tc.want == nil {
				for _, want := range tc.err {
					assert.ErrorContains(t, err, want)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, digestOf(t, tc.want), got.String())
		})
	}
}

func TestAlreadyPushedIsWhatPushReports(t *testing.T) {
	host := loopbackRegistry(t)
	refs := []string{host + "/team/backend:1.0.0", host + "/team/backend:latest"}
	n, err := Normalize("backend", build(t, commit, amd64), Options{Epoch: commit})
	require.NoError(t, err)
	pushed, err := Push(context.Background(), n, Target{Refs: refs, Insecure: true, Timeout: time.Minute})
	require.NoError(t, err)
	held, err := Tagged(context.Background(), Target{Refs: refs, Insecure: true, Timeout: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, pushed, AlreadyPushed(refs, held))
}

func TestTaggedNamesItsTimeLimit(t *testing.T) {
	hang := make(httpHang)
	srv := httptest.NewServer(hang)
	t.Cleanup(func() { close(hang); srv.Close() })
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	_, err = Tagged(context.Background(), Target{Refs: []string{u.Host + "/team/frontend:1"}, Insecure: true, Timeout: 200 * time.Millisecond})
	assert.ErrorContains(t, err, "the registry did not answer within 200ms")
}

// basicAuth lets through only requests that log in as user with password.
func basicAuth(next http.Handler, user, password string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func TestTaggedLogsInAsPushDoesAndNeverSaysThePassword(t *testing.T) {
	const user, password = "ci", "hunter2-registry-secret"
	srv := httptest.NewServer(basicAuth(registry.New(), user, password))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	refs := []string{u.Host + "/team/frontend:1"}
	n, err := Normalize("frontend", build(t, commit, amd64), Options{Epoch: commit})
	require.NoError(t, err)
	_, err = Push(context.Background(), n, Target{Refs: refs, Insecure: true, Username: user, Password: password, Timeout: time.Minute})
	require.NoError(t, err)

	held, err := Tagged(context.Background(), Target{Refs: refs, Insecure: true, Username: user, Password: password, Timeout: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, n), held.String())

	for _, wrong := range []Target{
		{Refs: refs, Insecure: true, Timeout: time.Minute},
		{Refs: refs, Insecure: true, Username: user, Password: password + "-not", Timeout: time.Minute},
	} {
		_, err := Tagged(context.Background(), wrong)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "401 Unauthorized")
		assert.NotContains(t, err.Error(), password)
	}
}

func TestLayoutDigestIsTheDigestOfWhatPushPushes(t *testing.T) {
	built := build(t, commit.Add(time.Hour), amd64)
	out := filepath.Join(t.TempDir(), "out")
	require.NoError(t, Normalized(Prepare{Kind: "frontend", Tarball: layoutTarball(t, built), Created: commit}, t.TempDir(), out, io.Discard))
	index, err := os.ReadFile(filepath.Join(out, "index.json"))
	require.NoError(t, err)
	got, err := LayoutDigest(index)
	require.NoError(t, err)
	loaded, err := Load(out)
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, loaded), got.String())
	assert.NotEqual(t, digestOf(t, built), got.String(), "the normalized image's, not the build's")

	for _, bad := range []struct{ index, err string }{
		{`{"schemaVersion":2,"manifests":[]}`, "the OCI layout holds no image"},
		{`not json`, "read the OCI layout's index"},
	} {
		_, err := LayoutDigest([]byte(bad.index))
		assert.ErrorContains(t, err, bad.err)
	}
}

func TestUnchangedOnlyWhenEveryTagHoldsTheDigest(t *testing.T) {
	built := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}
	other := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("b", 64)}
	for _, tc := range []struct {
		name      string
		held      v1.Hash
		err       error
		unchanged bool
		why       string
	}{
		{"every tag holds it", built, nil, true, "the backend image: every tag already holds sha256:aaaa"},
		{"the tags hold another", other, nil, false, "the backend image: pushing (its tags hold sha256:bbbb"},
		{"the registry not read", v1.Hash{}, errors.New("r/team/b:1 is not in the registry"), false, "the backend image: pushing (r/team/b:1 is not in the registry)"},
		{"an error wins over a digest", built, errors.New("the registry did not answer within 10s"), false, "pushing (the registry did not answer within 10s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unchanged, why := Unchanged("backend", built, tc.held, tc.err)
			assert.Equal(t, tc.unchanged, unchanged)
			assert.Contains(t, why, tc.why)
		})
	}
}
