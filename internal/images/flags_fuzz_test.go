package images

import (
	"encoding/json"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/imageref"
)

// The flags publish and build read, fuzzed: what is accepted is what the
// image build, the registry and the labels can take, and what is refused is
// refused with an error that names the flag and repeats only a cut of the
// value, however long the value.

// maxErrorLine bounds one problem's line: the message and at most two cut
// values (fielderr.Quote: 2×80 bytes quoted, and the length), e.g.
// --repository's and the name it makes.
const maxErrorLine = 800

func assertSmallError(t *testing.T, err error, flag string) {
	t.Helper()
	for _, line := range strings.Split(err.Error(), "\n") {
		assert.LessOrEqual(t, len(line), maxErrorLine, "a line of the error: %.200s…", line)
	}
	assert.Contains(t, err.Error(), flag, "the error names the flag")
}

func FuzzLabels(f *testing.F) {
	f.Add("2.14.0", "org.opencontainers.image.revision=abc", "org.opencontainers.image.source=https://tok@git.example.com/a.git?x=1")
	f.Add("1.0.0", "a=b=c", "k=https://a@b/c@d")
	f.Add("1.0.0", "draw_version=1", "x")
	f.Fuzz(func(t *testing.T, drawVersion, l1, l2 string) {
		labels, err := Labels(Meta{DrawVersion: drawVersion, Created: time.Unix(1, 0), Labels: []string{l1, l2}})
		if err != nil {
			if drawVersion != "" {
				assertSmallError(t, err, "--label[")
			}
			return
		}
		require.GreaterOrEqual(t, len(labels), 2)
		assert.Equal(t, [2]string{LabelDrawVersion, drawVersion}, labels[0])
		assert.Equal(t, [2]string{LabelCreated, "1970-01-01T00:00:01Z"}, labels[1])
		keys := map[string]bool{}
		for _, l := range labels {
			assert.False(t, keys[l[0]], "a key once: %q", l[0])
			keys[l[0]] = true
		}
		for _, l := range labels[2:] {
			assert.True(t, labelKey.match(l[0]), "a label key: %q", l[0])
			if strings.Contains(l[1], "://") {
				// a URL is public once in a label: nothing of its user-info or query
				u, err := url.Parse(l[1])
				require.NoError(t, err, "a shown URL parses")
				assert.Nil(t, u.User)
				assert.Empty(t, u.RawQuery)
				assert.Empty(t, u.Fragment)
			}
		}
	})
}

func FuzzPublishTargets(f *testing.F) {
	f.Add("registry.example.com/team/app-{kind}", "1.4.0", "latest", "linux/arm64", "ci", true, true)
	f.Add("localhost:5000/{kind}", "v1", "v1", "", "", false, false)
	f.Add("Registry/{kind}:tag", "-x", ".y", "linux/s390x", "", true, false)
	f.Add("r_1.example.com/{kind}", "1", "1", "", "", false, true)
	f.Fuzz(func(t *testing.T, repository, tag1, tag2, platform, username string, hasPassword, codeAsData bool) {
		req := PublishRequest{Repository: repository, HasCodeAsData: codeAsData, Tags: []string{tag1, tag2},
			Username: username, HasPassword: hasPassword}
		if platform != "" {
			req.Platforms = []string{platform}
		}
		targets, err := req.Targets()
		if err != nil {
			assertSmallError(t, err, "--")
			return
		}
		kinds := []Kind{Frontend, Backend}
		if codeAsData {
			kinds = append(kinds, CodeAsData)
		}
		require.Len(t, targets, len(kinds))
		for i, target := range targets {
			assert.Equal(t, kinds[i], target.Kind)
			assert.Equal(t, strings.ReplaceAll(repository, KindPlaceholder, string(target.Kind)), target.Repository)
			assert.NotEmpty(t, target.Registry, "a registry host")
			for j, ref := range target.Refs() {
				// what the push is given, as oci-publish reads it: a name with
				// its registry and one tag, the repository Targets read
				tagged, err := name.NewTag(ref, name.StrictValidation)
				require.NoError(t, err, ref)
				assert.Equal(t, req.Tags[j], tagged.TagStr())
				assert.Equal(t, target.Name.Repository(), tagged.Context())
				assert.Equal(t, target.Registry, target.Name.Host())
			}
			// what the payload is checked with before the push
			assert.True(t, strings.HasPrefix(target.Placeholder(), target.Repository+":"+tag1+"@"), target.Placeholder())
			assert.NoError(t, imageref.ValidateDeployable(target.Placeholder()))
		}
	})
}

func FuzzParseCreated(f *testing.F) {
	for _, s := range []string{"1764151389", "2026-11-26T12:03:09+01:00", "0", "253402300799", "253402300800",
		"9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "99999999999999999999", "-1", "2026-11-26T12:03:09.123456789Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		created, err := ParseCreated(s)
		if err != nil {
			assertSmallError(t, err, "--created")
			return
		}
		if s == "" {
			assert.True(t, created.IsZero(), "no --created: none")
			return
		}
		assert.Equal(t, time.UTC, created.Location())
		assert.False(t, created.Before(time.Unix(0, 0)), "not before the Unix epoch")
		// every later step writes it: the labels, the image config (JSON), the
		// oci-publish request
		text := created.Format(time.RFC3339Nano)
		again, err := ParseCreated(text)
		require.NoError(t, err, "what the labels write reads again: %s", text)
		assert.True(t, again.Equal(created))
		_, err = json.Marshal(created)
		assert.NoError(t, err)
		_, err = Labels(Meta{DrawVersion: "1", Created: created})
		assert.NoError(t, err)
	})
}

func FuzzBuildArgs(f *testing.F) {
	f.Add("FRONTEND_BASE_IMAGE=vendor.example.com/frontend:stable", "WEB_USER=www-data", "DOCUMENT_ROOT=/var/www/html/", "node:24")
	f.Add("WEB_USER=nginx:nginx", "SOURCES_PATH=x", "BACKEND_BASE_IMAGE=node", "node:24-alpine-slim")
	f.Add("NPM_TOKEN_FILE=x", "A=", "=b", "")
	f.Fuzz(func(t *testing.T, a1, a2, a3, backendBase string) {
		for _, kind := range Kinds {
			args, err := BuildArgs(kind, backendBase, []string{a1, a2, a3})
			if err != nil {
				assertSmallError(t, err, "--build-arg[")
				continue
			}
			require.NotEmpty(t, args)
			assert.Equal(t, [2]string{"SOURCES_PATH", kind.SourcesPath()}, args[0], "SOURCES_PATH as the interface says, first")
			names := map[string]int{}
			for _, a := range args {
				names[a[0]]++
				assert.Regexp(t, argName, a[0])
				switch a[0] {
				case ArgFrontendBase, ArgCodeAsDataBase:
					assert.NoError(t, imageref.ValidateDeployable(a[1]), "a base image names one version")
				case ArgWebUser:
					assert.True(t, webUser.match(a[1]), "a user: %q", a[1])
					assert.NotContains(t, a[1], ":", "no group: COPY --chown adds :root")
				case ArgDocumentRoot:
					assert.True(t, path.IsAbs(a[1]) && path.Clean(a[1]) == a[1] && a[1] != "/", "an absolute clean folder: %q", a[1])
				}
			}
			for name, n := range names {
				assert.Equal(t, 1, n, "%s once", name)
			}
			assert.Equal(t, 1, names[ArgBackendBase], "the backend's base, given or derived")
		}
	})
}
