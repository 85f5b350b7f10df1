package nodebuild

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProjectNpmrcLeavesOutWhatNamesAnEnvironmentVariable(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a token from the CI's environment is left out, the settings kept",
			"@vendor:registry=https://npm.vendor.com/\n//npm.vendor.com/:_authToken=${NPM_TOKEN}\nlegacy-peer-deps=true\n",
			"@vendor:registry=https://npm.vendor.com/\nlegacy-peer-deps=true\n"},
		{"a variable in a key too", "//${NPM_HOST}/:_authToken=abc\nfund=false\n", "fund=false\n"},
		{"npm's optional form too", "//r.example/:_authToken=${NPM_TOKEN?}\n", ""},
		{"a comment naming one is kept", "# set ${NPM_TOKEN} in CI\n; or ${X}\nfund=false\n", "# set ${NPM_TOKEN} in CI\n; or ${X}\nfund=false\n"},
		{"line endings are kept", "a=1\r\nb=${B}\r\nc=3", "a=1\r\nc=3"},
		{"indented lines are settings too", "  //r/:_authToken = ${T}\nx=1", "x=1"},
		{"a literal token is the project's own choice", "//r.example/:_authToken=npm_abc\n", "//r.example/:_authToken=npm_abc\n"},
		{"nothing to leave out", "save-exact=true\n", "save-exact=true\n"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(ProjectNpmrc([]byte(tc.in))))
		})
	}
}

// TestProjectNpmrcLetsTheNpmrcSecretAuthenticate asks this machine's npm for
// a package from a registry on loopback, with a project .npmrc that names
// the registry and takes its token from $NPM_TOKEN (unset, as in the
// module's containers) and a user .npmrc (the --npmrc secret) that holds
// the token: as the project wrote it, npm sends "${NPM_TOKEN}" itself; as
// the containers get it, the secret's token.
func TestProjectNpmrcLetsTheNpmrcSecretAuthenticate(t *testing.T) {
	_, err := exec.LookPath("npm")
	require.NoError(t, err, "the test needs npm")
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http:")
	project := "registry=" + srv.URL + "/\n" + host + "/:_authToken=${NPM_TOKEN}\n"
	for _, tc := range []struct {
		name, npmrc, want string
	}{
		{"the project's file as written", project, "Bearer ${NPM_TOKEN}"},
		{"the project's file as the containers get it", string(ProjectNpmrc([]byte(project))), "Bearer secret-token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestFile), []byte(`{"name":"p","version":"1.0.0"}`), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, ProjectConfig), []byte(tc.npmrc), 0o644))
			user := filepath.Join(t.TempDir(), "npmrc")
			require.NoError(t, os.WriteFile(user, []byte(host+"/:_authToken=secret-token\n"), 0o600))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "npm", "view", "left-pad", "version", "--fetch-retries=0")
			cmd.Dir = dir
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "NPM_TOKEN=") && !strings.HasPrefix(strings.ToUpper(kv), "NPM_CONFIG_") {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			cmd.Env = append(cmd.Env, "NPM_CONFIG_USERCONFIG="+user, "NPM_CONFIG_CACHE="+t.TempDir(), "NPM_CONFIG_UPDATE_NOTIFIER=false")
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the registry has no package: %s", out)
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, seen, "npm asked the loopback registry nothing: %s", out)
			assert.Equal(t, tc.want, seen[len(seen)-1])
		})
	}
}

// FuzzProjectNpmrc: what the containers get is the project's lines in
// order, none of its settings names a variable, and a second pass changes
// nothing.
func FuzzProjectNpmrc(f *testing.F) {
	for _, s := range []string{"a=1\n//r/:_authToken=${T}\n", "# ${x}\r\nb=${", "  ; c\n\n${", "x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		kept := ProjectNpmrc(data)
		lines := bytes.SplitAfter(data, []byte("\n"))
		i := 0
		for _, line := range bytes.SplitAfter(kept, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			for i < len(lines) && !bytes.Equal(lines[i], line) {
				i++
			}
			if i == len(lines) {
				t.Fatalf("line %q is not one of the project's, in order", line)
			}
			i++
			text := strings.TrimSpace(string(line))
			if !strings.HasPrefix(text, "#") && !strings.HasPrefix(text, ";") && strings.Contains(text, "${") {
				t.Fatalf("setting %q names a variable", line)
			}
		}
		if again := ProjectNpmrc(kept); !bytes.Equal(again, kept) {
			t.Fatalf("a second pass changed %q into %q", kept, again)
		}
	})
}
