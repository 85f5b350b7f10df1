package ocipublish

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/testsupport/registrytest"
)

// pushOf pushes the layout in dir as oci-publish push does: a minute at
// most, anonymously unless password is given.
func pushOf(dir string, refs []string, password string, change func(*Request)) (Result, string, error) {
	r := Request{Kind: "frontend", Refs: refs, Timeout: "1m"}
	if password != "" {
		r.Username = loginUser
	}
	if change != nil {
		change(&r)
	}
	var log strings.Builder
	res, err := Push(context.Background(), r, secret.New(password), dir, &log)
	return res, log.String(), err
}

// writesCounted serves h (a registry) on loopback, counting
// the writes it gets (any PUT, POST or PATCH): its host.
func writesCounted(t *testing.T, h http.Handler) (string, func() int) {
	t.Helper()
	var mu sync.Mutex
	writes := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut || r.Method == http.MethodPost || r.Method == http.MethodPatch {
			mu.Lock()
			writes++
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Host, func() int { mu.Lock(); defer mu.Unlock(); n := writes; writes = 0; return n }
}

func outcomesOf(r Result) []string {
	var out []string
	for _, p := range r.Pushed {
		out = append(out, p.Outcome)
	}
	return out
}

// The one container that pushes reads each tag first: every tag that holds
// the image is left as it is, a new one beside them pointed at it, and only
// a repository without the image is pushed to. Each tag is pinned by the
// digest it was read back at.
func TestPushLeavesWhatTheTagsHoldAndPinsEveryTag(t *testing.T) {
	host, writes := writesCounted(t, registry.New())
	img := build(t, commit, amd64)
	dir, digest := layoutOf(t, img), digestOf(t, img)
	ref := func(tag string) string { return host + "/team/app-frontend:" + tag }
	for _, tc := range []struct {
		name   string
		refs   []string
		want   []string
		writes bool
		log    string
	}{
		{"the first push writes the image", []string{ref("1.5.0"), ref("latest")}, []string{OutcomePushed, OutcomePushed}, true, "pushing (" + ref("1.5.0") + " is not in the registry"},
		{"pushed again, every tag holds it: nothing written", []string{ref("latest"), ref("1.5.0")}, []string{OutcomeUnchanged, OutcomeUnchanged}, false, "every tag already holds"},
		{"a new tag beside them is pointed at it", []string{ref("1.6.0"), ref("1.5.0")}, []string{OutcomeTagged, OutcomeUnchanged}, true, "nothing to push"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, log, err := pushOf(dir, tc.refs, "", nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, outcomesOf(got))
			assert.Equal(t, digest, got.Digest)
			for i, p := range got.Pushed {
				assert.Equal(t, tc.refs[i]+"@"+digest, p.Ref)
				held, err := registrytest.Resolve(t, tc.refs[i])
				require.NoError(t, err)
				assert.Equal(t, digest, held.Digest.String(), "the registry serves %s at the digest", tc.refs[i])
			}
			assert.Equal(t, tc.writes, writes() > 0, "writes to the registry")
			assert.Contains(t, log, tc.log)
		})
	}
}

// A registry that takes a manifest and does not keep it under the tag fails
// the push at the read back, naming the tag and what it holds: the result
// pins only digests the registry was seen to serve.
func TestPushFailsWhenATagDoesNotReadBackAsPushed(t *testing.T) {
	reg := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/1.5.0") {
			w.WriteHeader(http.StatusCreated) // said taken, not kept
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	img := build(t, commit, amd64)
	_, _, err := pushOf(layoutOf(t, img), []string{host + "/team/app-frontend:1.5.0"}, "", nil)
	require.Error(t, err)
	assert.Equal(t, "read back: "+host+"/team/app-frontend:1.5.0 is not in the registry, not the "+digestOf(t, img)+" pushed", err.Error())
}

// What normalize said, kept beside the layout, the push says again, each
// line printable: the engine shows no output of the normalize it mounts.
func TestPushSaysWhatNormalizeSaid(t *testing.T) {
	host, _ := writesCounted(t, registry.New())
	dir := layoutOf(t, build(t, commit, amd64))
	require.NoError(t, os.WriteFile(filepath.Join(dir, notesFile), []byte("oci-publish: the frontend image: a note\noci-publish: a tar entry \"a\x1b[2Jb\"\n"), 0o644))
	_, log, err := pushOf(dir, []string{host + "/team/app-frontend:1"}, "", nil)
	require.NoError(t, err)
	assert.Contains(t, log, "oci-publish: the frontend image: a note\noci-publish: a tar entry \"a\\x1b[2Jb\"\n")
}

func TestPushWritesAPlatformIndexWhole(t *testing.T) {
	host := loopbackRegistry(t)
	arm := v1.Platform{OS: "linux", Architecture: "arm64"}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: build(t, commit, amd64), Descriptor: v1.Descriptor{Platform: &amd64}},
		mutate.IndexAddendum{Add: build(t, commit, arm), Descriptor: v1.Descriptor{Platform: &arm}})
	got, _, err := pushOf(layoutOf(t, idx), []string{host + "/team/frontend:1"}, "", nil)
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, idx), got.Digest)
	for _, p := range []v1.Platform{amd64, arm} {
		desc, err := registrytest.Resolve(t, host+"/team/frontend:1")
		require.NoError(t, err)
		assert.Equal(t, digestOf(t, idx), desc.Digest.String(), "%s: the index is served", p)
	}
}

func TestPushReachesAServiceUnderAnotherNameAndReportsTheGivenOne(t *testing.T) {
	host := loopbackRegistry(t)
	got, _, err := pushOf(layoutOf(t, build(t, commit, amd64)), []string{"localhost:5000/team/backend:1"}, "", func(r *Request) { r.Connect = host })
	require.NoError(t, err)
	require.Len(t, got.Pushed, 1)
	assert.True(t, strings.HasPrefix(got.Pushed[0].Ref, "localhost:5000/team/backend:1@sha256:"), got.Pushed[0].Ref)
	_, err = registrytest.Resolve(t, host+"/team/backend:1")
	assert.NoError(t, err, "it went to the address connected to")
}

func TestPushNamesItsTimeLimit(t *testing.T) {
	hang := make(httpHang)
	srv := httptest.NewServer(hang)
	t.Cleanup(func() { close(hang); srv.Close() })
	u, _ := url.Parse(srv.URL)
	_, _, err := pushOf(layoutOf(t, build(t, commit, amd64)), []string{u.Host + "/team/frontend:1"}, "", func(r *Request) { r.Timeout = "200ms" })
	require.Error(t, err)
	assert.ErrorContains(t, err, "the push did not finish within 200ms")
}

func TestPushRefusesARequestItCannotFollowNamingTheField(t *testing.T) {
	dir := layoutOf(t, build(t, commit, amd64))
	for _, tc := range []struct {
		name   string
		change func(*Request)
		err    string
	}{
		{"a reference without a tag", func(r *Request) { r.Refs = []string{"registry.example.com/team/front"} }, `refs[0] "registry.example.com/team/front": `},
		{"an upper-case repository", func(r *Request) { r.Refs = []string{"registry.example.com/Team/front:1"} }, `refs[0] "registry.example.com/Team/front:1": `},
		{"two repositories", func(r *Request) { r.Refs = []string{"r.example/team/a:1", "r.example/team/b:1"} }, `refs[1] "r.example/team/b:1": not the repository of refs[0]`},
		{"no reference", func(r *Request) { r.Refs = nil }, "refs: no reference to push to"},
		{"no time limit", func(r *Request) { r.Timeout = "soon" }, `timeout "soon": use a positive Go duration`},
		{"a bad address to connect to", func(r *Request) { r.Connect = "a b" }, `connect "a b": `},
		{"a huge reference", func(r *Request) { r.Refs = []string{strings.Repeat("Ab", 5000) + ":1"} }, "(10002 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := pushOf(dir, []string{"r.example/team/front:1"}, "", tc.change)
			assert.ErrorContains(t, err, tc.err)
			assert.Less(t, len(err.Error()), 600, "the error stays small")
		})
	}
	_, _, err := pushOf(t.TempDir(), []string{"r.example/team/front:1"}, "", nil)
	assert.ErrorContains(t, err, "read the OCI layout")
}

// A registry at a loopback or private address may speak plain http, so its
// https is tried first; one that speaks https with a certificate the
// machine does not trust (a private CA the engine was not given) is refused
// for that, with the way out.
func TestARegistryWhoseCertificateIsNotTrustedIsSaidSo(t *testing.T) {
	srv := httptest.NewUnstartedServer(registry.New())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused
	srv.StartTLS()
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	dir := layoutOf(t, build(t, commit, amd64))
	for name, change := range map[string]func(*Request){
		"loopback":    nil,
		"a service's": func(r *Request) { r.Refs, r.Connect = []string{"localhost:5000/team/frontend:1"}, u.Host },
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := pushOf(dir, []string{u.Host + "/team/frontend:1"}, "", change)
			require.Error(t, err)
			assert.ErrorContains(t, err, "x509: certificate signed by unknown authority")
			assert.Contains(t, fielderr.Cut(err.Error(), 300), "its certificate is not trusted here: give the engine its CA", "a log line's cut keeps the way out")
			assert.Less(t, len(err.Error()), 600, "the error stays small: %s", err)
		})
	}
}

// A login the registry refuses is said with the flags that gave it, first
// (a log line's cut keeps it); no login at all is said otherwise.
func TestARefusedLoginNamesItsFlags(t *testing.T) {
	refs := []string{loginRegistry(t) + "/team/frontend:1"}
	dir := layoutOf(t, build(t, commit, amd64))
	_, _, err := pushOf(dir, refs, loginPassword, nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, password, said string
	}{
		{"a wrong password", loginPassword + "-not", `the registry refused the login of --registry-username "ci" with --registry-password: `},
		{"no login", "", "the registry asks for a login, and none was given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := pushOf(dir, refs, tc.password, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.said)
			assert.Contains(t, fielderr.Cut(err.Error(), 200), "login", "the way out comes first")
			assert.NotContains(t, err.Error(), loginPassword)
		})
	}
}

// A registry may echo what it was sent: the password, or the basic login
// that carries it in base64, in its error's body, in WWW-Authenticate or in
// the Location of an upload. No spelling of it reaches the error, which
// stays printable.
func TestThePasswordIsNeverSaidWhateverTheRegistryEchoes(t *testing.T) {
	const password = "s3cret-registry-pa55word"
	basic := base64.StdEncoding.EncodeToString([]byte(loginUser + ":" + password))
	for _, tc := range []struct {
		name string
		echo func(w http.ResponseWriter, r *http.Request)
	}{
		{"in the body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"errors":[{"code":"DENIED","message":"denied %s: %s\u001b[2J"}]}`, password, r.Header.Get("Authorization"))
		}},
		{"in WWW-Authenticate", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+password+` `+r.Header.Get("Authorization")+`"`)
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"errors":[{"code":"UNAUTHORIZED","message":"%s"}]}`, basic)
		}},
		{"in Location", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				w.Header().Set("Location", "/v2/upload?pw="+password+"&auth="+url.QueryEscape(r.Header.Get("Authorization")))
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "bad upload %s %s", r.URL, password)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := registry.New()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/v2/" || r.Method == http.MethodHead {
					reg.ServeHTTP(w, r) // the login is taken, the tags read
					return
				}
				tc.echo(w, r)
			}))
			t.Cleanup(srv.Close)
			u, _ := url.Parse(srv.URL)
			_, _, err := pushOf(layoutOf(t, build(t, commit, amd64)), []string{u.Host + "/team/frontend:1"}, password, nil)
			require.Error(t, err)
			for _, spelling := range []string{password, basic, url.QueryEscape(basic), password[3:15]} {
				assert.NotContains(t, err.Error(), spelling)
			}
			assert.Equal(t, fielderr.Printable(err.Error()), err.Error(), "printable")
		})
	}
}

func TestConnectAddressKeepsTheRegistrysPort(t *testing.T) {
	assert.Equal(t, "registry:5000", ConnectAddress("localhost:5000", "registry"))
	assert.Equal(t, "registry", ConnectAddress("registry.example.com", "registry"))
}

func TestPlanPushRetagsWhenAnotherTagHoldsTheDigestAndPushesWhenNone(t *testing.T) {
	built := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}
	other := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("b", 64)}
	none := v1.Hash{}
	refs := []string{"r.example/team/backend:1.4.0", "r.example/team/backend:latest", "r.example/team/backend:main"}
	for _, tc := range []struct {
		name  string
		held  []v1.Hash
		err   error
		push  bool
		retag []string
		why   string
	}{
		{"every tag holds it", []v1.Hash{built, built, built}, nil, false, nil, "the backend image: every tag already holds sha256:aaaa"},
		{"a new tag beside one that holds it", []v1.Hash{none, built, built}, nil, false, []string{refs[0]},
			"the backend image: r.example/team/backend:latest already holds sha256:aaaa" + strings.Repeat("a", 60) + "; pointing r.example/team/backend:1.4.0 at it, nothing to push"},
		{"tags moved and new", []v1.Hash{other, none, built}, nil, false, []string{refs[0], refs[1]}, "pointing r.example/team/backend:1.4.0 (and 1 more) at it"},
		{"no tag holds it", []v1.Hash{other, none, other}, nil, true, nil,
			"the backend image: pushing (r.example/team/backend:1.4.0 holds sha256:bbbb" + strings.Repeat("b", 60) + ", not sha256:aaaa"},
		{"no tag there", []v1.Hash{none, none, none}, nil, true, nil, "pushing (r.example/team/backend:1.4.0 is not in the registry, not sha256:aaaa"},
		{"the registry not read", nil, errors.New("the registry did not answer within 10s"), true, nil, "the backend image: pushing (the registry did not answer within 10s)"},
		{"an error wins over the digests", []v1.Hash{built, built, built}, errors.New("read r: 401 Unauthorized"), true, nil, "pushing (read r: 401 Unauthorized)"},
		{"fewer digests than tags", []v1.Hash{built}, nil, true, nil, "pushing (1 tags read of 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := PlanPush("backend", built, refs, tc.held, tc.err)
			assert.Equal(t, tc.push, plan.Push)
			if !tc.push {
				assert.Equal(t, tc.retag, plan.Retag)
			} else {
				assert.Empty(t, plan.Retag, "a push writes every tag")
			}
			assert.Contains(t, plan.Why, tc.why)
		})
	}
	plan := PlanPush("backend", none, refs, []v1.Hash{none, none, none}, nil)
	assert.True(t, plan.Push, "a digest not known never matches a tag that is not there")
	assert.Contains(t, plan.Why, "pushing (the image's digest is not known)")
	plan = PlanPush("backend", built, nil, nil, nil)
	assert.True(t, plan.Push)
	assert.Contains(t, plan.Why, "pushing (no reference)")
}

// FuzzPlanPush: whatever the tags hold, an image is left unpushed only when a
// tag holds its digest, and then exactly the other tags move.
func FuzzPlanPush(f *testing.F) {
	f.Add([]byte{1, 1}, false)
	f.Add([]byte{0, 1, 2}, false)
	f.Add([]byte{}, false)
	f.Add([]byte{1}, true)
	f.Fuzz(func(t *testing.T, states []byte, failed bool) {
		digest := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}
		other := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("b", 64)}
		var refs, moved []string
		var held []v1.Hash
		holds := false
		for i, b := range states {
			refs = append(refs, fmt.Sprintf("r.example/team/frontend:t%d", i))
			switch b % 3 {
			case 0:
				held = append(held, v1.Hash{})
			case 1:
				held, holds = append(held, digest), true
				continue
			case 2:
				held = append(held, other)
			}
			moved = append(moved, refs[i])
		}
		var err error
		if failed {
			err = errors.New("the registry did not answer within 10s")
		}
		plan := PlanPush("frontend", digest, refs, held, err)
		require.NotEmpty(t, plan.Why)
		assert.Less(t, len(plan.Why), 600, "one line for the log")
		if failed || !holds {
			assert.True(t, plan.Push, "no tag holds the digest, or nothing was read: push")
			assert.Empty(t, plan.Retag)
			return
		}
		assert.False(t, plan.Push)
		assert.Equal(t, moved, plan.Retag, "exactly the tags that do not hold the digest, in order")
	})
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

// The login of loginRegistry.
const loginUser, loginPassword = "ci", "hunter2-registry-secret"

// loginRegistry is go-containerregistry's registry on loopback, behind a
// basic-auth login as loginUser with loginPassword: its host.
func loginRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(basicAuth(registry.New(), loginUser, loginPassword))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Host
}

// FuzzPushRequest: whatever the request holds, parse names the field of a
// problem in a small, printable error, and takes only refs of one
// repository, each with a tag, reached at Connect when given.
func FuzzPushRequest(f *testing.F) {
	f.Add("registry.example.com/team/app-frontend:1.4.0", "registry.example.com/team/app-frontend:latest", "", "15m0s")
	f.Add("localhost:5000/x:1", "localhost:5000/y:1", "registry:5000", "1s")
	f.Add("r.example/Team/x:1", "", "a b", "soon")
	f.Fuzz(func(t *testing.T, ref1, ref2, connect, timeout string) {
		refs := []string{ref1}
		if ref2 != "" {
			refs = append(refs, ref2)
		}
		r := Request{Kind: "frontend", Refs: refs, Connect: connect, Timeout: timeout}
		tg, cancel, err := r.parse(context.Background(), secret.Text{})
		if err != nil {
			assert.Less(t, len(err.Error()), 1000, "small")
			assert.Equal(t, fielderr.Printable(err.Error()), err.Error(), "printable")
			assert.Regexp(t, `^(timeout|refs|refs\[\d\]|connect) `, err.Error()+" ", "names the field")
			return
		}
		defer cancel()
		require.Len(t, tg.named, len(refs))
		for i := range refs {
			assert.Equal(t, tg.named[0].Context(), tg.named[i].Context(), "one repository")
			assert.Equal(t, tg.named[i].TagStr(), tg.reached[i].TagStr())
			if connect != "" {
				assert.Equal(t, tg.named[i].RepositoryStr(), tg.reached[i].RepositoryStr())
			}
		}
	})
}

// A registry's answer that goes on without end is read up to its limit
// (an error's body is cut, any other fails: internal/commands tests a huge
// token): the push fails, its error small.
func TestAnEndlessAnswerEndsThePushWithASmallError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
	}{{"an error", http.StatusBadRequest}, {"an answer", http.StatusAccepted}} {
		t.Run(tc.name, func(t *testing.T) {
			const most = 256 << 20
			var mu sync.Mutex
			served := 0
			reg := registry.New()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/v2/" || r.Method == http.MethodHead {
					reg.ServeHTTP(w, r)
					return
				}
				w.Header().Set("Location", r.URL.Path)
				w.WriteHeader(tc.status)
				chunk := []byte(strings.Repeat("{", 64<<10))
				for n := 0; n < most; n += len(chunk) {
					if _, err := w.Write(chunk); err != nil {
						return
					}
					mu.Lock()
					served += len(chunk)
					mu.Unlock()
				}
			}))
			t.Cleanup(srv.Close)
			u, _ := url.Parse(srv.URL)
			_, _, err := pushOf(layoutOf(t, build(t, commit, amd64)), []string{u.Host + "/team/frontend:1"}, "", nil)
			require.Error(t, err)
			assert.Less(t, len(err.Error()), 1000, "a small error")
			mu.Lock()
			defer mu.Unlock()
			assert.Less(t, served, 64<<20, "read up to the limit, not to the end")
		})
	}
}
