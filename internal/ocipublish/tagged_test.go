package ocipublish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/testsupport/registrytest"
)

// pushedTo pushes a fresh normalized image built at built under refs of a
// loopback registry and returns it.
func pushedTo(t *testing.T, built time.Time, refs ...string) Artifact {
	t.Helper()
	n, err := normalize(t, "frontend", build(t, built, amd64), Options{Epoch: built})
	require.NoError(t, err)
	_, err = Push(context.Background(), artOf(t, n), Target{Refs: refs, Insecure: true, Timeout: time.Minute})
	require.NoError(t, err)
	return artOf(t, n)
}

func hashOf(t *testing.T, a Artifact) v1.Hash {
	t.Helper()
	h, err := a.Digest()
	require.NoError(t, err)
	return h
}

func TestTaggedIsWhatEachTagHolds(t *testing.T) {
	host := loopbackRegistry(t)
	ref := func(tag string) string { return host + "/team/frontend:" + tag }
	first := hashOf(t, pushedTo(t, commit, ref("1.0.0"), ref("latest")))
	second := hashOf(t, pushedTo(t, commit.Add(time.Hour), ref("1.1.0")))
	none := v1.Hash{}
	for _, tc := range []struct {
		name string
		refs []string
		want []v1.Hash
		err  string
	}{
		{"every tag at one digest", []string{ref("1.0.0"), ref("latest")}, []v1.Hash{first, first}, ""},
		{"one tag", []string{ref("1.1.0")}, []v1.Hash{second}, ""},
		{"a tag not pushed yet", []string{ref("1.0.0"), ref("2.0.0")}, []v1.Hash{first, none}, ""},
		{"a repository not there", []string{host + "/team/other:1"}, []v1.Hash{none}, ""},
		{"tags apart, in the refs' order", []string{ref("1.1.0"), ref("1.0.0")}, []v1.Hash{second, first}, ""},
		{"a reference without a tag", []string{host + "/team/frontend"}, nil, `reference "` + host + `/team/frontend"`},
		{"no reference", nil, nil, "no reference to read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Tagged(context.Background(), Target{Refs: tc.refs, Insecure: true, Timeout: time.Minute})
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestAlreadyPushedIsWhatPushReports(t *testing.T) {
	host := loopbackRegistry(t)
	refs := []string{host + "/team/backend:1.0.0", host + "/team/backend:latest"}
	n, err := normalize(t, "backend", build(t, commit, amd64), Options{Epoch: commit})
	require.NoError(t, err)
	pushed, err := Push(context.Background(), artOf(t, n), Target{Refs: refs, Insecure: true, Timeout: time.Minute})
	require.NoError(t, err)
	held, err := Tagged(context.Background(), Target{Refs: refs, Insecure: true, Timeout: time.Minute})
	require.NoError(t, err)
	already := AlreadyPushed(refs, held[0])
	require.Len(t, already, len(pushed))
	for i := range pushed {
		assert.Equal(t, pushed[i].Ref, already[i].Ref, "pinned as a push pins it")
		assert.Equal(t, pushed[i].Digest, already[i].Digest)
		assert.Equal(t, OutcomePushed, pushed[i].Outcome)
		assert.Equal(t, OutcomeUnchanged, already[i].Outcome)
	}
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

func TestTaggedLogsInAsPushDoesAndNeverSaysThePassword(t *testing.T) {
	refs := []string{loginRegistry(t) + "/team/frontend:1"}
	n, err := normalize(t, "frontend", build(t, commit, amd64), Options{Epoch: commit})
	require.NoError(t, err)
	_, err = Push(context.Background(), artOf(t, n), Target{Refs: refs, Insecure: true, Username: loginUser, Password: secret.New(loginPassword), Timeout: time.Minute})
	require.NoError(t, err)

	held, err := Tagged(context.Background(), Target{Refs: refs, Insecure: true, Username: loginUser, Password: secret.New(loginPassword), Timeout: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, []v1.Hash{hashOf(t, artOf(t, n))}, held)

	for _, wrong := range []Target{
		{Refs: refs, Insecure: true, Timeout: time.Minute},
		{Refs: refs, Insecure: true, Username: loginUser, Password: secret.New(loginPassword + "-not"), Timeout: time.Minute},
	} {
		_, err := Tagged(context.Background(), wrong)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "401 Unauthorized")
		assert.NotContains(t, err.Error(), loginPassword)
	}
}

// A login the registry refuses is said with the flags that gave it, first
// (a log line's cut keeps it); no login at all is said otherwise.
func TestARefusedLoginNamesItsFlags(t *testing.T) {
	refs := []string{loginRegistry(t) + "/team/frontend:1"}
	n, err := normalize(t, "frontend", build(t, commit, amd64), Options{Epoch: commit})
	require.NoError(t, err)
	_, err = Push(context.Background(), artOf(t, n), Target{Refs: refs, Insecure: true, Username: loginUser, Password: secret.New(loginPassword), Timeout: time.Minute})
	require.NoError(t, err)
	refused := Target{Refs: refs, Insecure: true, Username: loginUser, Password: secret.New(loginPassword + "-not"), Timeout: time.Minute}
	none := Target{Refs: refs, Insecure: true, Timeout: time.Minute}
	for _, tc := range []struct {
		name   string
		target Target
		call   func(Target) error
		said   string
	}{
		{"push", refused, func(t2 Target) error { _, err := Push(context.Background(), artOf(t, n), t2); return err }, `the registry refused the login of --registry-username "ci" with --registry-password: `},
		{"tags before the build", refused, func(t2 Target) error { _, err := Tagged(context.Background(), t2); return err }, `the registry refused the login of --registry-username "ci" with --registry-password: `},
		{"a new tag", refused, func(t2 Target) error {
			_, err := Retag(context.Background(), t2, hashOf(t, artOf(t, n)), []string{refs[0] + "-rc"})
			return err
		}, `the registry refused the login of --registry-username "ci" with --registry-password: `},
		{"no login", none, func(t2 Target) error { _, err := Push(context.Background(), artOf(t, n), t2); return err }, "401 Unauthorized: the registry asks for a login, and none was given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(tc.target)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.said)
			assert.Contains(t, fielderr.Cut(err.Error(), 200), "login", "the way out comes first")
			assert.NotContains(t, err.Error(), loginPassword)
		})
	}
}

func TestLayoutDigestIsTheDigestOfWhatPushPushes(t *testing.T) {
	built := build(t, commit.Add(time.Hour), amd64)
	out := filepath.Join(t.TempDir(), "out")
	require.NoError(t, Normalized(context.Background(), Prepare{Kind: "frontend", Tarball: layoutTarball(t, built), Created: commit}, t.TempDir(), out, io.Discard))
	index, err := os.ReadFile(filepath.Join(out, "index.json"))
	require.NoError(t, err)
	got, err := LayoutDigest(index)
	require.NoError(t, err)
	loaded, err := loadBack(t, out)
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

func TestRetagLeavesTheRegistryAsPushWould(t *testing.T) {
	for _, tc := range []struct {
		name     string
		artifact func(t *testing.T) Artifact
	}{
		{"an image", func(t *testing.T) Artifact {
			n, err := normalize(t, "backend", build(t, commit, amd64), Options{Epoch: commit})
			require.NoError(t, err)
			return artOf(t, n)
		}},
		{"a platform index", func(t *testing.T) Artifact {
			arm := v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
			idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
				mutate.IndexAddendum{Add: build(t, commit, amd64), Descriptor: v1.Descriptor{Platform: &amd64}},
				mutate.IndexAddendum{Add: build(t, commit, arm), Descriptor: v1.Descriptor{Platform: &arm}})
			n, err := normalize(t, "backend", idx, Options{Epoch: commit, Platforms: []string{"linux/amd64", "linux/arm64"}})
			require.NoError(t, err)
			return artOf(t, n)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.artifact(t)
			digest := hashOf(t, a)
			host := loopbackRegistry(t)
			refs := []string{host + "/team/backend:1.5.0", host + "/team/backend:latest", host + "/team/backend:main"}
			target := Target{Refs: refs, Insecure: true, Timeout: time.Minute}
			// the image was pushed under latest before; main held an older one
			_, err := Push(context.Background(), artOf(t, a), Target{Refs: refs[1:2], Insecure: true})
			require.NoError(t, err)
			older, err := normalize(t, "backend", build(t, commit.Add(-time.Hour), amd64), Options{Epoch: commit.Add(-time.Hour)})
			require.NoError(t, err)
			_, err = Push(context.Background(), artOf(t, older), Target{Refs: refs[2:], Insecure: true})
			require.NoError(t, err)

			held, err := Tagged(context.Background(), target)
			plan := PlanPush("backend", digest, refs, held, err)
			require.False(t, plan.Push, plan.Why)
			require.Equal(t, []string{refs[0], refs[2]}, plan.Retag)
			got, err := Retag(context.Background(), target, digest, plan.Retag)
			require.NoError(t, err)

			// what Push reports, and the registry serves, after a push of the same artifact to a fresh registry
			other := loopbackRegistry(t)
			var otherRefs []string
			for _, ref := range refs {
				otherRefs = append(otherRefs, other+strings.TrimPrefix(ref, host))
			}
			want, err := Push(context.Background(), artOf(t, a), Target{Refs: otherRefs, Insecure: true})
			require.NoError(t, err)
			for i := range want {
				assert.Equal(t, strings.TrimPrefix(want[i].Ref, other), strings.TrimPrefix(got[i].Ref, host))
				assert.Equal(t, want[i].Digest, got[i].Digest)
			}
			assert.Equal(t, []string{OutcomeTagged, OutcomeUnchanged, OutcomeTagged}, []string{got[0].Outcome, got[1].Outcome, got[2].Outcome},
				"the new and the moved tag tagged, latest left as it was")
			after, err := Tagged(context.Background(), target)
			require.NoError(t, err)
			assert.Equal(t, []v1.Hash{digest, digest, digest}, after, "every tag serves the digest")
			if idx, ok := readBack(t, a).(v1.ImageIndex); ok {
				im, err := v1.ParseIndexManifest(bytes.NewReader(registrytest.Manifest(t, refs[0])))
				require.NoError(t, err)
				want, err := idx.IndexManifest()
				require.NoError(t, err)
				assert.Equal(t, want.Manifests, im.Manifests, "the index, with each platform's manifest")
			}
		})
	}
}

func TestRetagSaysWhatFailedWithinItsTimeLimitAndNeverThePassword(t *testing.T) {
	host := loginRegistry(t)
	refs := []string{host + "/team/frontend:1.5.0", host + "/team/frontend:latest"}
	n, err := normalize(t, "frontend", build(t, commit, amd64), Options{Epoch: commit})
	require.NoError(t, err)
	login := Target{Refs: refs, Insecure: true, Username: loginUser, Password: secret.New(loginPassword), Timeout: time.Minute}
	_, err = Push(context.Background(), artOf(t, n), Target{Refs: refs[1:], Insecure: true, Username: loginUser, Password: secret.New(loginPassword)})
	require.NoError(t, err)

	unknown := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("c", 64)}
	_, err = Retag(context.Background(), login, unknown, refs[:1])
	assert.ErrorContains(t, err, "read "+host+"/team/frontend@"+unknown.String(), "a digest the repository does not hold")
	for _, wrong := range []Target{
		{Refs: refs, Insecure: true, Timeout: time.Minute},
		{Refs: refs, Insecure: true, Username: loginUser, Password: secret.New(loginPassword + "-not"), Timeout: time.Minute},
	} {
		_, err := Retag(context.Background(), wrong, hashOf(t, artOf(t, n)), refs[:1])
		require.Error(t, err)
		assert.Contains(t, err.Error(), "401 Unauthorized")
		assert.NotContains(t, err.Error(), loginPassword)
	}
	held, err := Tagged(context.Background(), login)
	require.NoError(t, err)
	assert.Equal(t, v1.Hash{}, held[0], "nothing was tagged by a failed retag")

	hang := make(httpHang)
	slow := httptest.NewServer(hang)
	t.Cleanup(func() { close(hang); slow.Close() })
	h, err := url.Parse(slow.URL)
	require.NoError(t, err)
	_, err = Retag(context.Background(), Target{Refs: []string{h.Host + "/team/frontend:1"}, Insecure: true, Timeout: 200 * time.Millisecond}, hashOf(t, artOf(t, n)), []string{h.Host + "/team/frontend:2"})
	assert.ErrorContains(t, err, "the tagging did not finish within 200ms")
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

func TestWithoutPushRetagsWhatTheRegistryHoldsAndElsePushes(t *testing.T) {
	host := loopbackRegistry(t)
	refs := []string{host + "/team/app-backend:1.5.0", host + "/team/app-backend:latest"}
	img, err := random.Image(512, 2)
	require.NoError(t, err)
	registrytest.Write(t, refs[1], img) // the image is in the registry under latest only
	digest, err := img.Digest()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	target := Target{Refs: refs, Timeout: time.Minute}

	var log strings.Builder
	pushed, ok := WithoutPush(ctx, "backend", digest, <-CheckTags(ctx, target), &log)
	require.True(t, ok, "no container to push: both tags reported")
	require.Len(t, pushed, 2)
	for i, p := range pushed {
		assert.Equal(t, refs[i]+"@"+digest.String(), p.Ref)
	}
	assert.Equal(t, []string{OutcomeTagged, OutcomeUnchanged}, []string{pushed[0].Outcome, pushed[1].Outcome})
	assert.Contains(t, log.String(), "pointing "+refs[0]+" at it, nothing to push")
	again := <-CheckTags(ctx, target)
	assert.Equal(t, []v1.Hash{digest, digest}, again.Held, "the new tag holds the image")

	log.Reset()
	pushed, ok = WithoutPush(ctx, "backend", digest, again, &log)
	require.True(t, ok)
	assert.Equal(t, []string{OutcomeUnchanged, OutcomeUnchanged}, []string{pushed[0].Outcome, pushed[1].Outcome})
	assert.Contains(t, log.String(), "every tag already holds "+digest.String()+"; nothing to push")

	other, err := random.Image(512, 1)
	require.NoError(t, err)
	changed, err := other.Digest()
	require.NoError(t, err)
	log.Reset()
	pushed, ok = WithoutPush(ctx, "backend", changed, again, &log)
	assert.False(t, ok, "an image no tag holds is pushed")
	assert.Nil(t, pushed)
	assert.Contains(t, log.String(), "the backend image: pushing (")

	// a read that says a tag holds the image while the registry does not
	// have it (another run deleted it since): the retag fails, so push
	log.Reset()
	stale := TagsRead{Target: again.Target, Held: []v1.Hash{{}, changed}}
	pushed, ok = WithoutPush(ctx, "backend", changed, stale, &log)
	assert.False(t, ok)
	assert.Nil(t, pushed)
	assert.Contains(t, log.String(), "the backend image: pushing (the retag failed: read "+host+"/team/app-backend@"+changed.String())
}

func TestCheckTagsSaysWhyATagCouldNotBeRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	read := <-CheckTags(ctx, Target{Refs: []string{loopbackRegistry(t) + "/team/app@sha256:" + strings.Repeat("0", 64)}, Timeout: time.Minute})
	require.Error(t, read.Err, "a reference without a tag")
	pushed, ok := WithoutPush(ctx, "frontend", v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("1", 64)}, read, io.Discard)
	assert.False(t, ok, "what could not be read is pushed")
	assert.Nil(t, pushed)
}

// partialCopy copies the layout of a into a new folder without its layers,
// and returns the folder and the layers left out.
func partialCopy(t *testing.T, a Artifact) (string, []v1.Hash) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(a.dir)))
	imgs, _, err := imagesOf(a)
	require.NoError(t, err)
	var layers []v1.Hash
	for _, img := range imgs {
		for _, l := range img.manifest.Layers {
			layers = append(layers, l.Digest)
			require.NoError(t, os.Remove(blobPath(dir, l.Digest)))
		}
	}
	require.NotEmpty(t, layers)
	return dir, layers
}

func TestPushDirFetchesOnlyTheLayersTheRegistryLacks(t *testing.T) {
	host := loopbackRegistry(t)
	built := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	n, err := normalize(t, "frontend", build(t, built, amd64), Options{Epoch: built})
	require.NoError(t, err)
	whole := artOf(t, n)
	digest, _ := whole.Digest()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var (
		mu      sync.Mutex
		fetched []v1.Hash
	)
	fetch := func(_ context.Context, layer v1.Hash, path string) error {
		mu.Lock()
		fetched = append(fetched, layer) // the push fetches concurrently
		mu.Unlock()
		data, err := os.ReadFile(blobPath(whole.dir, layer))
		if err != nil {
			return err
		}
		return os.WriteFile(path, data, 0o644)
	}

	dir, layers := partialCopy(t, whole)
	pushed, err := PushDir(ctx, dir, Target{Refs: []string{host + "/team/app:1"}, Timeout: time.Minute}, fetch)
	require.NoError(t, err)
	assert.Equal(t, digest.String(), pushed[0].Digest, "the image pushed whole")
	assert.ElementsMatch(t, layers, fetched, "a registry that lacks every layer gets each, fetched once")

	fetched = nil
	dir, _ = partialCopy(t, whole)
	pushed, err = PushDir(ctx, dir, Target{Refs: []string{host + "/team/app:2"}, Timeout: time.Minute}, fetch)
	require.NoError(t, err)
	assert.Equal(t, digest.String(), pushed[0].Digest)
	assert.Empty(t, fetched, "the registry holds every layer: none is fetched")

	dir, _ = partialCopy(t, whole)
	_, err = PushDir(ctx, dir, Target{Refs: []string{loopbackRegistry(t) + "/team/app:1"}, Timeout: time.Minute},
		func(context.Context, v1.Hash, string) error { return errors.New("the engine said no") })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fetch the layer sha256:")
	assert.Contains(t, err.Error(), "the engine said no")
}

func TestPushLayoutLeavesWhatTheTagsHoldWhenAskedToReadThem(t *testing.T) {
	var writes sync.Map // method+path → count of writes the registry got
	reg := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut || r.Method == http.MethodPost || r.Method == http.MethodPatch {
			n, _ := writes.LoadOrStore(r.Method+" "+r.URL.Path, 0)
			writes.Store(r.Method+" "+r.URL.Path, n.(int)+1)
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	refs := []string{u.Host + "/team/app-frontend:1.5.0", u.Host + "/team/app-frontend:latest"}
	n, err := normalize(t, "frontend", build(t, commit.Add(time.Hour), amd64), Options{Epoch: commit})
	require.NoError(t, err)
	dir := artOf(t, n).dir
	require.NoError(t, writeIndex(dir, artOf(t, n).root))
	countWrites := func() int {
		total := 0
		writes.Range(func(_, v any) bool { total += v.(int); return true })
		writes.Clear()
		return total
	}
	outcomes := func(r Result) []string {
		var out []string
		for _, p := range r.Pushed {
			out = append(out, p.Outcome)
		}
		return out
	}

	for _, tc := range []struct {
		name       string
		refs       []string
		tagTimeout string
		want       []string
		writes     bool
		log        string
	}{
		{"the first push writes the image", refs, "10s", []string{OutcomePushed, OutcomePushed}, true, "pushing (" + refs[0] + " is not in the registry"},
		{"pushed again, every tag holds it: nothing written", refs, "10s", []string{OutcomeUnchanged, OutcomeUnchanged}, false, "every tag already holds"},
		{"a new tag beside them is pointed at it", append([]string{u.Host + "/team/app-frontend:1.6.0"}, refs...), "10s", []string{OutcomeTagged, OutcomeUnchanged, OutcomeUnchanged}, true, "nothing to push"},
		{"without a tag timeout the tags are not read: pushed", refs, "", []string{OutcomePushed, OutcomePushed}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log strings.Builder
			got, err := PushLayout(context.Background(), Request{Kind: "frontend", Refs: tc.refs, Insecure: true, Timeout: "1m", TagTimeout: tc.tagTimeout}, "", dir, &log)
			require.NoError(t, err)
			assert.Equal(t, tc.want, outcomes(got))
			assert.Equal(t, hashOf(t, artOf(t, n)).String(), got.Digest)
			assert.Equal(t, tc.writes, countWrites() > 0, "writes to the registry")
			assert.Contains(t, log.String(), tc.log)
		})
	}

	_, err = PushLayout(context.Background(), Request{Kind: "frontend", Refs: refs, Timeout: "1m", TagTimeout: "soon"}, "", dir, io.Discard)
	assert.ErrorContains(t, err, `tagTimeout "soon": use a positive Go duration`)
}

// perRepoRegistry is ggcr's in-memory registry, which keeps blobs by digest
// alone, holding them per repository as distribution does, with its
// cross-repository mount (or a refusal of it); it counts uploads and mounts.
type perRepoRegistry struct {
	reg         http.Handler
	refuseMount bool
	mu          sync.Mutex
	has         map[string]bool // repository@digest
	uploads     map[string]int  // by digest
	mounts      map[string]int  // by digest
	mountAsks   int             // mount requests, whatever their answer
}

func newPerRepoRegistry(refuseMount bool) *perRepoRegistry {
	return &perRepoRegistry{reg: registry.New(), refuseMount: refuseMount, has: map[string]bool{}, uploads: map[string]int{}, mounts: map[string]int{}}
}

// pushable is a normalized image of kind, with its digest and its blobs.
func pushable(t *testing.T, kind string) (Artifact, v1.Hash, []v1.Descriptor) {
	t.Helper()
	built := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	n, err := normalize(t, kind, build(t, built, amd64), Options{Epoch: built})
	require.NoError(t, err)
	whole := artOf(t, n)
	blobs, _, err := contentOf(whole)
	require.NoError(t, err)
	return whole, hashOf(t, whole), blobs
}

// servePerRepo serves a perRepoRegistry for the test; its host:port.
func servePerRepo(t *testing.T, refuseMount bool) (*perRepoRegistry, string) {
	t.Helper()
	reg := newPerRepoRegistry(refuseMount)
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return reg, u.Host
}

// layerFetches is a PushDir fetch that copies each layer from a whole
// layout, counting each layer's fetches (the push fetches concurrently).
type layerFetches struct {
	whole Artifact
	mu    sync.Mutex
	n     map[v1.Hash]int
}

func newLayerFetches(whole Artifact) *layerFetches {
	return &layerFetches{whole: whole, n: map[v1.Hash]int{}}
}

func (f *layerFetches) fetch(_ context.Context, layer v1.Hash, path string) error {
	f.mu.Lock()
	f.n[layer]++
	f.mu.Unlock()
	data, err := os.ReadFile(blobPath(f.whole.dir, layer))
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

func (p *perRepoRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	repo, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/blobs/")
	if !ok {
		p.reg.ServeHTTP(w, r)
		return
	}
	q := r.URL.Query()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case (r.Method == http.MethodHead || r.Method == http.MethodGet) && !strings.HasPrefix(rest, "uploads/"):
		if !p.has[repo+"@"+rest] {
			http.Error(w, `{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown"}]}`, http.StatusNotFound)
			return
		}
	case r.Method == http.MethodPost && q.Get("mount") != "":
		d := q.Get("mount")
		p.mountAsks++
		if p.refuseMount {
			http.Error(w, `{"errors":[{"code":"UNSUPPORTED","message":"no mounts here"}]}`, http.StatusMethodNotAllowed)
			return
		}
		if p.has[q.Get("from")+"@"+d] {
			p.has[repo+"@"+d] = true
			p.mounts[d]++
			w.Header().Set("Location", "/v2/"+repo+"/blobs/"+d)
			w.Header().Set("Docker-Content-Digest", d)
			w.WriteHeader(http.StatusCreated)
			return
		}
	case r.Method == http.MethodPut && q.Get("digest") != "":
		rec := &statusRecorder{ResponseWriter: w}
		p.reg.ServeHTTP(rec, r)
		if rec.status == http.StatusCreated {
			p.has[repo+"@"+q.Get("digest")] = true
			p.uploads[q.Get("digest")]++
		}
		return
	}
	p.reg.ServeHTTP(w, r)
}

// Images pushed side by side to two repositories of one registry, sharing
// their blobs (as a deliver's frontend and backend share their base's
// re-encoded layers), send each blob once: the other repository mounts it.
// A registry that refuses the mount gets the blob sent again.
func TestPushesBesideEachOtherSendASharedBlobOnce(t *testing.T) {
	whole, digest, blobs := pushable(t, "frontend")
	for _, tc := range []struct {
		name        string
		refuseMount bool
		uploads     int // of each blob
		mounts      int // of each blob
		fetches     int // of each layer, over both pushes
	}{
		{"a registry that mounts gets each blob once", false, 1, 1, 1},
		{"a registry that refuses the mount gets it from each push", true, 2, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, host := servePerRepo(t, tc.refuseMount)
			fetches := newLayerFetches(whole)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			for _, repo := range []string{"team/frontend", "team/backend"} {
				dir, _ := partialCopy(t, whole)
				wg.Go(func() {
					pushed, err := PushDir(ctx, dir, Target{Refs: []string{host + "/" + repo + ":1"}, Timeout: time.Minute}, fetches.fetch)
					if assert.NoError(t, err) {
						assert.Equal(t, digest.String(), pushed[0].Digest, repo)
					}
				})
			}
			wg.Wait()
			for _, b := range blobs {
				assert.Equal(t, tc.uploads, reg.uploads[b.Digest.String()], "uploads of %s", b.Digest)
				assert.Equal(t, tc.mounts, reg.mounts[b.Digest.String()], "mounts of %s", b.Digest)
			}
			require.NotEmpty(t, fetches.n)
			for layer, n := range fetches.n {
				assert.Equal(t, tc.fetches, n, "fetches of %s", layer)
			}
			for _, repo := range []string{"team/frontend", "team/backend"} {
				got, err := registrytest.Resolve(t, host+"/"+repo+":1")
				require.NoError(t, err)
				assert.Equal(t, digest.String(), got.Digest.String(), "%s serves the image", repo)
			}
		})
	}
}

// A first push to a repository mounts what the base's repository on the
// same registry holds (docker push does): none of those blobs is fetched
// from the engine or sent. Wherever the mount is not made, the blob is sent,
// fetched once, and the image is whole.
func TestAFirstPushMountsWhatTheBasesRepositoryHolds(t *testing.T) {
	whole, digest, blobs := pushable(t, "backend")
	for _, tc := range []struct {
		name        string
		mountFrom   string // {host}: the registry's
		refuseMount bool
		mountAsks   int // per blob
		sent        int // each blob's uploads to team/backend
		fetched     bool
	}{
		{"the base's repository holds them: mounted, nothing fetched or sent", "{host}/hosted/base@" + digest.String(), false, 1, 0, false},
		{"a tag of it names the repository as well", "{host}/hosted/base:24-slim", false, 1, 0, false},
		{"a repository that lacks them: sent in the upload the mount began", "{host}/hosted/empty:1", false, 1, 1, true},
		{"a registry that refuses mounts: sent", "{host}/hosted/base:1", true, 1, 1, true},
		{"a base on another registry: no mount asked", "other.example:5000/hosted/base:1", false, 0, 1, true},
		{"no base: no mount asked", "", false, 0, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, host := servePerRepo(t, tc.refuseMount)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// the base's repository holds every blob of the image (not pushed
			// from here: this process would mount them from its own upload)
			for _, b := range blobs {
				reg.has["hosted/base@"+b.Digest.String()] = true
			}
			fetches := newLayerFetches(whole)
			dir, layers := partialCopy(t, whole)
			target := Target{Refs: []string{host + "/team/backend:1"}, Timeout: time.Minute, MountFrom: strings.ReplaceAll(tc.mountFrom, "{host}", host)}
			pushed, err := PushDir(ctx, dir, target, fetches.fetch)
			require.NoError(t, err)
			assert.Equal(t, digest.String(), pushed[0].Digest)
			got, err := registrytest.Resolve(t, host+"/team/backend:1")
			require.NoError(t, err)
			assert.Equal(t, digest.String(), got.Digest.String(), "the repository serves the image")
			for _, b := range blobs {
				assert.Equal(t, tc.sent, reg.uploads[b.Digest.String()], "uploads of %s", b.Digest)
			}
			assert.Equal(t, tc.mountAsks*len(blobs), reg.mountAsks, "mount requests")
			if tc.fetched {
				for _, l := range layers {
					assert.Equal(t, 1, fetches.n[l], "fetches of %s", l)
				}
			} else {
				assert.Empty(t, fetches.n, "a mounted layer is not fetched from the engine")
			}
		})
	}
}

func TestPushLayoutMountsFromTheRequestsBase(t *testing.T) {
	whole, _, blobs := pushable(t, "frontend")
	reg, host := servePerRepo(t, false)
	for _, b := range blobs {
		reg.has["hosted/nginx@"+b.Digest.String()] = true
	}

	res, err := PushLayout(context.Background(), Request{Kind: "frontend", Refs: []string{host + "/team/frontend:1"}, Timeout: "1m",
		MountFrom: host + "/hosted/nginx:stable"}, "", whole.dir, io.Discard)
	require.NoError(t, err)
	require.Len(t, res.Pushed, 1)
	assert.Empty(t, reg.uploads, "every blob was mounted from the base's repository")
	assert.Len(t, reg.mounts, len(blobs))
}
