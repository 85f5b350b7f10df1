package freshload

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
)

// sdkBuildList is what `dagger init --sdk=go` writes on the engine the
// module is made for: path → version of every module it requires.
func sdkBuildList(t testing.TB) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "dagger-init.go.mod"))
	require.NoError(t, err)
	f, err := modfile.Parse("dagger-init.go.mod", data, nil)
	require.NoError(t, err)
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		out[r.Old.Path] = r.New.Version
	}
	require.NotEmpty(t, out)
	return out
}

// buildList is the module path → version (a replacement's, when replaced)
// of every module in the build list of the Go module in dir: what its
// packages compile at, and more (a test's), so no version that matters is
// missed. The module alone, as an engine builds it: not the Go workspace.
func buildList(t *testing.T, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{if not .Main}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}", "all")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	require.NoError(t, err, "go list -m all in %s", dir)
	mods := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, version, ok := strings.Cut(line, " "); ok {
			mods[path] = version
		}
	}
	return mods
}

func TestEveryModuleTheGoSDKAlsoUsesIsAtTheSDKsVersion(t *testing.T) {
	sdk := sdkBuildList(t)
	for _, dir := range []string{".", "tests", filepath.Join("examples", "go")} {
		t.Run(dir, func(t *testing.T) {
			mods := buildList(t, filepath.Join(moduleRoot, dir))
			shared := 0
			for path, version := range mods {
				want, ok := sdk[path]
				if !ok {
					continue
				}
				shared++
				assert.Equal(t, want, version,
					"%s is compiled at %s, a fresh Go module at %s: every fresh engine compiles it, and what it imports, again; pick dependency versions that need no newer one (go mod graph | grep %s)",
					path, version, want, path)
			}
			// a Go module of the engine has the SDK's modules in its build list, so
			// one that shares few of them is the test reading nothing
			assert.Greater(t, shared, len(sdk)/2, "modules shared with the Go SDK's")
		})
	}
}
