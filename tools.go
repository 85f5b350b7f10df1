package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	telemetry "github.com/dagger/otel-go"

	"dagger/lowcode-pipeline/internal/busybox"
	"dagger/lowcode-pipeline/internal/commands"
	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/steplimit"
	"dagger/lowcode-pipeline/internal/supplychain"
)

// The module's binary is also its tools (internal/busybox): started as one,
// it runs that command and exits before serving the engine.
func init() {
	if name := busybox.Called(); name != "" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		code := commands.All[name](ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
}

// Images the module's tools run in, and the supply-chain tools are built in
// with --tools-from-source.
const (
	runtimeImage = "alpine:3.22"
	goImage      = "golang:1.26-alpine"
)

// rerun makes the container's next exec run anew on every call, as the
// side-effecting steps (never cached) must: a cache buster of the wall
// clock, set on the exec only, never in an image.
func rerun(ctr *dagger.Container) *dagger.Container {
	return ctr.WithEnvVariable("LOWCODE_PIPELINE_RUN", time.Now().UTC().Format(time.RFC3339Nano))
}

// withServiceBinding binds svc to ctr as alias, kept out of the engine's
// proxy: the engine gives every exec its HTTP_PROXY and HTTPS_PROXY
// (tests/engine-facts.md, fact 23), and a proxy cannot reach a service's
// alias. The engine's own NO_PROXY, which the module's process has too, is
// kept.
func withServiceBinding(ctr *dagger.Container, alias string, svc *dagger.Service) *dagger.Container {
	noProxy := noProxyWith(cmp.Or(os.Getenv("NO_PROXY"), os.Getenv("no_proxy")), alias)
	return ctr.WithServiceBinding(alias, svc).
		WithEnvVariable("NO_PROXY", noProxy).
		WithEnvVariable("no_proxy", noProxy)
}

// noProxyWith is the NO_PROXY list noProxy with hosts added, once each.
func noProxyWith(noProxy string, hosts ...string) string {
	var list []string
	for _, h := range append(strings.Split(noProxy, ","), hosts...) {
		if h = strings.TrimSpace(h); h != "" && !slices.Contains(list, h) {
			list = append(list, h)
		}
	}
	return strings.Join(list, ",")
}

// goBuilder is the container Go tools are built in (--tools-from-source):
// static binaries, with the module and build caches shared between builds.
func goBuilder() *dagger.Container {
	return dag.Container().From(goImage).
		WithMountedCache("/go/pkg/mod", dag.CacheVolume("lowcode-pipeline-gomod")).
		WithMountedCache("/root/.cache/go-build", dag.CacheVolume("lowcode-pipeline-gobuild")).
		WithEnvVariable("CGO_ENABLED", "0")
}

// moduleWorkdir is the folder of the module's runtime container that
// CurrentModule.workdirFile reads from (tests/engine-facts.md, fact 13).
const moduleWorkdir = "/scratch"

// withTool installs the module's own binary in ctr as the command name
// (internal/busybox): the engine built it to load the module, so a cold run
// copies it instead of compiling a tool, and an unchanged module gives the
// same file.
func withTool(ctr *dagger.Container, name string) (*dagger.Container, error) {
	if err := busybox.Install(moduleWorkdir); err != nil {
		return nil, err
	}
	bin := dag.CurrentModule().WorkdirFile(busybox.InstallPath)
	return ctr.WithFile("/usr/local/bin/"+name, bin, dagger.ContainerWithFileOpts{Permissions: 0o755}), nil
}

// withScripts installs scripts (name → sh text) as commands in
// steplimit.Dir, in a fixed order (the same container, the same cache).
func withScripts(ctr *dagger.Container, scripts map[string]string) *dagger.Container {
	for _, name := range steplimit.Names(scripts) {
		ctr = ctr.WithNewFile(path.Join(steplimit.Dir, name), scripts[name], dagger.ContainerWithNewFileOpts{Permissions: 0o755})
	}
	return ctr
}

// limited is ctr with the commands that run another within a time limit
// (steplimit.Within).
func limited(ctr *dagger.Container) *dagger.Container {
	return withScripts(ctr, steplimit.Files())
}

// goTool builds a Go command from its public module at the pinned version.
func goTool(pkg string) *dagger.File {
	path, _, _ := strings.Cut(pkg, "@")
	name := path[strings.LastIndex(path, "/")+1:]
	return limited(goBuilder()).
		WithEnvVariable("GOBIN", "/out").
		WithExec(steplimit.Within(steplimit.Tool, supplychain.BuildCommand(pkg))).
		File("/out/" + name)
}

// explain adds to a failed exec's error the lines its command wrote for the
// user ("lowcode-pipeline: …", "oci-publish: …"): the engine's message only
// says that the process exited non-zero. Other output stays in the engine's
// log, where Dagger masks secrets; only our own tools' lines are repeated.
func explain(err error) error {
	var exec *dagger.ExecError
	if !errors.As(err, &exec) {
		return err
	}
	said := fielderr.ToolLines(exec.Stderr)
	if len(said) == 0 {
		return err
	}
	if len(said) > 5 {
		said = append(said[:5], fmt.Sprintf("(%d more lines in the log)", len(said)-5))
	}
	return fmt.Errorf("%w\n%s", err, strings.Join(said, "\n"))
}

// inSpan runs f in a span of its own, named for a person: `--progress plain`
// and the TUI then show where a call's time goes (deliver runs its steps in
// one call), and a failed step is marked failed with its error.
func inSpan[T any](ctx context.Context, name string, f func(context.Context) (T, error)) (_ T, err error) {
	ctx, span := Tracer().Start(ctx, name)
	defer telemetry.EndWithCause(span, &err)
	return f(ctx)
}

// userErr makes a Dagger function's error the text its caller reads
// (fielderr.Plain): deferred by every function that calls the engine.
func userErr(err *error) { *err = fielderr.Plain(*err) }

// Time limits of the waits the module makes itself.
const (
	// prefetchTimeout bounds the early fetches: one that hangs must not
	// hold the run, as the step that needs it fetches again.
	prefetchTimeout = 5 * time.Minute
	// publishLimit bounds the push of one image, all its tags.
	publishLimit = 15 * time.Minute
)

// Normalize keeps, in a cache volume, what its output depends on only by
// digest (ocipublish.Cache): re-encoded layers, a base's first export. The
// volume keeps its name across versions of the module (those built by one
// Go release share its canonical blobs): a base's first export cannot be
// made again on an engine restarted since it pulled the base
// (tests/engine-facts.md, fact 52).
const (
	cacheDir    = "/var/cache/lowcode-pipeline/publish"
	cacheVolume = "lowcode-pipeline-layer-verdicts"
)

// platformNames are the platforms as strings.
func platformNames(platform []dagger.Platform) []string {
	out := make([]string, len(platform))
	for i, p := range platform {
		out[i] = string(p)
	}
	return out
}
