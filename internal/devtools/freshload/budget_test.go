package freshload

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// beyondAnyModule is every module whose packages the module's binary
// compiles and a module fresh from `dagger init --sdk=go` does not compile:
// what a fresh runner downloads and compiles on top of any Go module's load
// (BenchmarkCompileBeyondAnyGoModule times it). A new dependency is listed
// here with what it is for, or the test fails; one no longer compiled goes.
var beyondAnyModule = map[string]string{
	"github.com/moby/buildkit":               "the Dockerfile frontend's own parser: an image's plan reads its Dockerfile as the build will (internal/images)",
	"github.com/google/go-containerregistry": "the one OCI library: image names (internal/imageref), normalize's types and layout, the push and the base's reads (internal/ocipublish)",
	"github.com/dlclark/regexp2":             "deploy rules are ECMAScript regular expressions, as the platform reads them (internal/rules)",
	"github.com/mattn/go-shellwords":         "an npm script's command line split as a shell would (internal/nodebuild)",
	// brought by the ones above
	"github.com/opencontainers/go-digest":  "digests: go-containerregistry's name, buildkit",
	"github.com/opencontainers/image-spec": "OCI descriptors: buildkit",
	"github.com/agext/levenshtein":         "buildkit: suggestions for a mistyped instruction",
	"github.com/containerd/typeurl/v2":     "buildkit: its errors' stacks",
	"github.com/docker/go-units":           "buildkit: sizes in instructions",
	"github.com/moby/docker-image-spec":    "buildkit: the image config's Docker fields",
	"github.com/pkg/errors":                "buildkit: errors",
	"github.com/planetscale/vtprotobuf":    "buildkit: its errors' stacks",
	"github.com/tonistiigi/go-csvvalue":    "buildkit: instructions' flag values",
	// go-containerregistry's, for the push (remote) and the layout it reads
	"github.com/docker/cli":                            "go-containerregistry's authn: the docker CLI's config file (never read: the login is --registry-password)",
	"github.com/docker/docker-credential-helpers":      "go-containerregistry's authn, through the docker CLI's config",
	"github.com/mitchellh/go-homedir":                  "go-containerregistry's authn: where the docker config is",
	"github.com/docker/distribution":                   "go-containerregistry's transport: a registry's WWW-Authenticate challenge",
	"github.com/klauspost/compress":                    "go-containerregistry's partial: zstd layers (the module writes gzip)",
	"github.com/containerd/stargz-snapshotter/estargz": "go-containerregistry's layout, through mutate and tarball",
	"github.com/vbatts/tar-split":                      "estargz",
	"github.com/sirupsen/logrus":                       "estargz, tar-split",
}

// moduleRoot is the module's folder, from this package's.
var moduleRoot = filepath.Join("..", "..", "..")

// goAsTheSDK runs the go command in dir as the Go SDK builds a module
// (CGO_ENABLED=0, engine-facts 14; no Go workspace: the upload leaves go.work
// out), with env added, and gives its output.
func goAsTheSDK(t testing.TB, dir string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off"), env...)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = fmt.Errorf("%w: %s", err, exit.Stderr)
	}
	require.NoError(t, err, "go %s in %s", strings.Join(args, " "), dir)
	return out
}

// compiledModules is the module path of every non-standard package the Go
// package in dir compiles, its own module's left out.
func compiledModules(t testing.TB, dir string) []string {
	t.Helper()
	out := goAsTheSDK(t, dir, nil, "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", ".")
	mods := strings.Fields(string(out))
	slices.Sort(mods)
	return slices.Compact(mods)
}

func TestTheModuleCompilesOnlyListedDependenciesBeyondAnyGoModule(t *testing.T) {
	sdk := sdkBuildList(t)
	compiled := compiledModules(t, moduleRoot)
	var beyond []string
	for _, mod := range compiled {
		if _, ok := sdk[mod]; !ok {
			beyond = append(beyond, mod)
		}
	}
	for _, mod := range beyond {
		if _, ok := beyondAnyModule[mod]; !ok {
			t.Errorf("the module now compiles %s, which no fresh `dagger init` module does: every hosted runner downloads and compiles it before anything is built; list it in beyondAnyModule with what it is for, or do without it", mod)
		}
	}
	for mod := range beyondAnyModule {
		if !slices.Contains(beyond, mod) {
			t.Errorf("%s is listed in beyondAnyModule but the module no longer compiles it: take it out", mod)
		}
	}
	// the SDK's part is read: a module compiles the generated client's grpc and OpenTelemetry
	assert.Greater(t, len(compiled)-len(beyond), 10, "modules shared with a fresh `dagger init` module")
}

// BenchmarkCompileBeyondAnyGoModule times what a fresh engine compiles for
// this module beyond what it compiles for any Go module: the build cache
// starts holding every package a `dagger init` module compiles too (the
// standard library's, the generated client, the SDK's dependencies at its
// versions), then the module's binary is built as the Go SDK builds it
// (CGO_ENABLED=0, -ldflags "-s -w"). Downloads are not counted (the module
// cache is this machine's). Run by hand; the README's performance section
// has its figure:
//
//	go test ./internal/devtools/freshload -run '^$' -bench . -benchtime 3x
func BenchmarkCompileBeyondAnyGoModule(b *testing.B) {
	sdk := sdkBuildList(b)
	out := goAsTheSDK(b, moduleRoot, nil, "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}} {{with .Module}}{{.Path}}{{end}}", ".")
	shared := []string{"dagger/lowcode-pipeline/internal/dagger"} // the generated client: every module has its own
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, std := fields[0], fields[1] == "true"
		_, ofSDK := sdk[strings.Join(fields[2:], "")]
		// a standard package's internal and vendored ones are built as its dependencies
		if (std && !strings.Contains(pkg, "internal") && !strings.HasPrefix(pkg, "vendor/")) || ofSDK {
			shared = append(shared, pkg)
		}
	}
	goBuild := func(cache string, args ...string) {
		goAsTheSDK(b, moduleRoot, []string{"GOCACHE=" + cache, "GOFLAGS=-mod=mod"}, append([]string{"build"}, args...)...)
	}
	warm := b.TempDir()
	goBuild(warm, shared...)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		cache := b.TempDir()
		require.NoError(b, exec.Command("cp", "-a", warm+"/.", cache).Run())
		b.StartTimer()
		goBuild(cache, "-ldflags", "-s -w", "-o", filepath.Join(b.TempDir(), "runtime"), ".")
	}
}
