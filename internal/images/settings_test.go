package images

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildArgsAreCheckedAsWhatTheyAre(t *testing.T) {
	const pinned = "vendor.example.com/frontend:stable@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	args, err := BuildArgs(Frontend, "node:24-slim", []string{"FRONTEND_BASE_IMAGE=" + pinned, "WEB_USER=www-data", "DOCUMENT_ROOT=/var/www/html/", "NPM_TOKEN_FILE=x"})
	require.NoError(t, err)
	assert.Equal(t, [][2]string{{"SOURCES_PATH", "dist/web"}, {"FRONTEND_BASE_IMAGE", pinned}, {"WEB_USER", "www-data"},
		{"DOCUMENT_ROOT", "/var/www/html"}, {"NPM_TOKEN_FILE", "x"}, {"BACKEND_BASE_IMAGE", "node:24-slim"}}, args,
		"a base image pinned by digest is accepted; an argument of the project's own Dockerfiles passes as it is")

	args, err = BuildArgs(Backend, "node:24-slim", []string{"BACKEND_BASE_IMAGE=gcr.io/distroless/nodejs24-debian12:nonroot"})
	require.NoError(t, err)
	assert.Equal(t, [][2]string{{"SOURCES_PATH", "dist/node"}, {"BACKEND_BASE_IMAGE", "gcr.io/distroless/nodejs24-debian12:nonroot"}}, args,
		"a given backend base replaces the derived one")

	_, err = BuildArgs(Frontend, "node:24", []string{"FRONTEND_BASE_IMAGE=Vendor/Frontend", "WEB_USER=nginx:nginx", "DOCUMENT_ROOT=html",
		"BACKEND_BASE_IMAGE=node", "SOURCES_PATH=src", "no-equals", "WEB_USER=again"})
	require.Error(t, err)
	for _, want := range []string{`--build-arg[0] "FRONTEND_BASE_IMAGE=Vendor/Frontend"`, `--build-arg[1] "WEB_USER=nginx:nginx": one user name or numeric id`,
		`--build-arg[2] "DOCUMENT_ROOT=html": an absolute folder`, `--build-arg[3] "BACKEND_BASE_IMAGE=node": the reference has neither a tag nor a digest`,
		`--build-arg[4] "SOURCES_PATH=src": SOURCES_PATH is fixed by the interface`, `--build-arg[5] "no-equals": want NAME=VALUE`,
		`--build-arg[6] "WEB_USER=again": WEB_USER is given twice`} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestWebUserIsOneUserThatCopyChownTakes(t *testing.T) {
	for _, tc := range []struct {
		user string
		ok   bool
	}{
		{"nginx", true}, {"www-data", true}, {"1000", true}, {"_apt", true}, {"svc.web", true}, {"machine$", true},
		{"", false}, {"nginx:nginx", false}, {"a b", false}, {"-x", false}, {".x", false}, {"$(id)", false},
		{"ü", false}, {strings.Repeat("a", 33), false}, {strings.Repeat("a", 32), true}, {strings.Repeat("a", 31) + "$", true},
	} {
		_, err := BuildArgs(Frontend, "node:24", []string{"WEB_USER=" + tc.user})
		if tc.ok {
			assert.NoError(t, err, tc.user)
		} else {
			assert.ErrorContains(t, err, "one user name or numeric id", tc.user)
		}
	}
}

func TestParseCreated(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{"SOURCE_DATE_EPOCH", "1764151389", "2025-11-26T10:03:09Z", ""},
		{"git's %cI, in UTC", "2026-11-26T12:03:09+01:00", "2026-11-26T11:03:09Z", ""},
		{"the Unix epoch", "0", "1970-01-01T00:00:00Z", ""},
		{"the last second RFC 3339 writes", "253402300799", "9999-12-31T23:59:59Z", ""},
		{"a second after it", "253402300800", "", `--created "253402300800": a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z`},
		{"seconds beyond any integer", "99999999999999999999", "", "a time from 1970-01-01T00:00:00Z"},
		{"before the Unix epoch", "1969-12-31T23:59:59Z", "", "a time from 1970-01-01T00:00:00Z"},
		{"Go's zero time, which would mean none", "0001-01-01T00:00:00Z", "", "a time from 1970-01-01T00:00:00Z"},
		{"negative seconds", "-1", "", `--created "-1": give the commit time as RFC 3339`},
		{"words", "yesterday", "", `--created "yesterday": give the commit time as RFC 3339`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCreated(tc.in)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.Format(time.RFC3339))
			assert.Equal(t, time.UTC, got.Location())
		})
	}
	got, err := ParseCreated("")
	require.NoError(t, err)
	assert.True(t, got.IsZero(), "no --created: no created label")
	_, err = ParseCreated(strings.Repeat("9", 100_000) + "x")
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 400, "a huge value is cut in the error")
}

func TestNativeAddonsStayOnTheirPlatform(t *testing.T) {
	addons := []string{"node_modules/a/build/Release/a.node", "b.node", "c.node", "d.node", "e.node", "f.node"}
	assert.NoError(t, CheckNativeAddons(addons, "linux/amd64", nil), "the engine's platform")
	assert.NoError(t, CheckNativeAddons(addons, "linux/amd64", []string{"linux/amd64"}))
	assert.NoError(t, CheckNativeAddons(nil, "linux/amd64", []string{"linux/arm64"}), "no addon, any platform")
	assert.NoError(t, CheckNativeAddons(addons, "linux/arm64/v8", []string{"linux/arm64"}), "a variant written out is the same platform")
	err := CheckNativeAddons(addons, "linux/arm64/v8", []string{"linux/arm64", "linux/amd64"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "backend image for linux/amd64:", "only the other platform is foreign")
	assert.Contains(t, err.Error(), "(--platform linux/arm64)", "a --platform value that is accepted")
	err = CheckNativeAddons(addons, "linux/amd64", []string{"linux/amd64", "linux/arm64"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "built for linux/amd64 (node_modules/a/build/Release/a.node, b.node, c.node, d.node, e.node, and 1 more)")
	assert.Contains(t, err.Error(), "backend image for linux/arm64")
}

func TestCheckPlatformsComparesBeforeAnythingIsPushed(t *testing.T) {
	for _, tc := range []struct {
		name        string
		asked, have []string
		want        string
	}{
		{"every platform asked is there", []string{"linux/amd64", "linux/arm64"}, []string{"linux/arm64", "linux/amd64"}, ""},
		{"a variant written out matches", []string{"linux/arm64"}, []string{"linux/arm64/v8"}, ""},
		{"a base image without arm64 gives amd64 twice", []string{"linux/amd64", "linux/arm64"}, []string{"linux/amd64", "linux/amd64"},
			"linux/arm64 is missing"},
		{"a platform not asked for", []string{"linux/amd64"}, []string{"linux/amd64", "linux/s390x"}, "linux/s390x was not asked for"},
		{"nothing built", []string{"linux/arm64"}, nil, "has nothing, asked linux/arm64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPlatforms("frontend", tc.asked, tc.have)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
			assert.ErrorContains(t, err, "nothing was pushed")
		})
	}
}

// A password written into a flag's value is not printed by its refusal: a
// label's URL given twice, a proxy's login in a build argument, a registry's
// login before --repository's host (round-13 probes P13-1 and P13-3, #65).
// A label value holding a login without a scheme is refused: labels are
// public.
func TestFlagRefusalsShowNoLogin(t *testing.T) {
	const secret = "glpat-S3cr3tT0kenValue"
	for _, tc := range []struct {
		name string
		err  func() error
		says string
	}{
		{"a label's URL given twice", func() error {
			_, err := ParseLabels(time.Time{}, []string{"org.opencontainers.image.source=https://gitlab.example.com/acme/app.git",
				"org.opencontainers.image.source=https://gitlab-ci-token:" + secret + "@gitlab.example.com/acme/app.git"})
			return err
		}, `--label[1] "…@gitlab.example.com/acme/app.git": org.opencontainers.image.source is given twice`},
		{"a label's login without a scheme", func() error {
			_, err := ParseLabels(time.Time{}, []string{"src=gitlab-ci-token:" + secret + "@gitlab.example.com/acme/app.git"})
			return err
		}, `--label[0] "…@gitlab.example.com/acme/app.git": the value of src holds a login (user:password@host), which a label would publish`},
		// round-14 probe F2: an address spelt so that no parser finds its
		// user-info is no address a label keeps
		{"a label's login after one slash", func() error {
			_, err := ParseLabels(time.Time{}, []string{"src=https:/ci:" + secret + "@git.example.com/team/app.git"})
			return err
		}, `the value of src holds a login`},
		{"a label's login after two slashes and no scheme", func() error {
			_, err := ParseLabels(time.Time{}, []string{"src=//ci:" + secret + "@git.example.com/team/app.git"})
			return err
		}, `the value of src holds a login`},
		{"a label's login percent-encoded", func() error {
			_, err := ParseLabels(time.Time{}, []string{"src=ci%3A" + secret + "@git.example.com"})
			return err
		}, `the value of src holds a login`},
		{"a login after a mailto: (round-16 probe F6)", func() error {
			_, err := ParseLabels(time.Time{}, []string{"maintainer=mailto:ops@example.com ci:" + secret + "@registry.example.com"})
			return err
		}, `the value of maintainer holds a login`},
		{"a label's address percent-encoded whole", func() error {
			_, err := ParseLabels(time.Time{}, []string{"src=https%3A%2F%2Fci%3A" + secret + "%40git.example.com"})
			return err
		}, `the value of src holds a login`},
		{"a proxy's login given twice", func() error {
			_, err := ParseBuildArgs([]string{"HTTPS_PROXY=http://u:" + secret + "@proxy:3128", "HTTPS_PROXY=http://u:" + secret + "@proxy:3128"})
			return err
		}, `--build-arg[1] "…@proxy:3128": HTTPS_PROXY is given twice`},
		{"a registry's login before the repository", func() error {
			_, err := PublishRequest{Repository: "ci:" + secret + "@registry.example.com/team/app-{kind}", Tags: []string{"1"}}.Targets()
			return err
		}, `--repository "…@registry.example.com/team/app-{kind}" holds a login (user:password@): give it with --registry-username and --registry-password`},
		{"a password typed into the user name", func() error {
			_, err := PublishRequest{Repository: "registry.example.com/team/app-{kind}", Tags: []string{"1"}, Username: "ci:" + secret}.Targets()
			return err
		}, `--registry-username holds a ':' (not shown: the part after it may be a password): give the user name alone`},
		{"a registry's login, without {kind}", func() error {
			_, err := PublishRequest{Repository: "ci:" + secret + "@registry.example.com/team/app", Tags: []string{"1"}}.Targets()
			return err
		}, `--repository "…@registry.example.com/team/app"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.says)
			assert.NotContains(t, err.Error(), secret[6:14])
		})
	}
}

// A label may still name an address that is no login: an email, a mailto:
// link, an npm package and its version.
func TestALabelOfAnEmailOrAPackageIsKept(t *testing.T) {
	for _, l := range []string{"org.opencontainers.image.authors=team@example.com", "contact=mailto:team@example.com",
		"toolkit=@olympeio/toolkit@2.9.2"} {
		set, err := ParseLabels(time.Time{}, []string{l})
		require.NoError(t, err, l)
		key, value, _ := strings.Cut(l, "=")
		assert.Equal(t, LabelSet{{key, value}}, set)
	}
}
