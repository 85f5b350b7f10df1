package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/supplychain"
)

// Images the module's own tools are built and run in.
const (
	goImage      = "golang:1.26-alpine"
	runtimeImage = "alpine:3.22"
)

// rerun makes the container's next exec run anew on every call, as the
// side-effecting steps (never cached) must: a cache buster of the wall
// clock, set on the exec only, never in an image.
func rerun(ctr *dagger.Container) *dagger.Container {
	return ctr.WithEnvVariable("LOWCODE_PIPELINE_RUN", time.Now().UTC().Format(time.RFC3339Nano))
}

// goBuilder is the container the module's Go tools are built in: static
// binaries, with the module and build caches shared between builds.
func goBuilder() *dagger.Container {
	return dag.Container().From(goImage).
		WithMountedCache("/go/pkg/mod", dag.CacheVolume("lowcode-pipeline-gomod")).
		WithMountedCache("/root/.cache/go-build", dag.CacheVolume("lowcode-pipeline-gobuild")).
		WithEnvVariable("CGO_ENABLED", "0")
}

// toolBinary builds cmd/<name> from this module's own source.
func toolBinary(name string) *dagger.File {
	src := dag.CurrentModule().Source()
	return goBuilder().
		WithDirectory("/src", src, dagger.ContainerWithDirectoryOpts{Include: []string{"go.mod", "go.sum", "cmd/", "internal/"}}).
		WithWorkdir("/src").
		WithExec([]string{"go", "build", "-trimpath", "-o", "/out/" + name, "./cmd/" + name}).
		File("/out/" + name)
}

// goTool builds a Go command from its public module at the pinned version.
func goTool(pkg string) *dagger.File {
	path, _, _ := strings.Cut(pkg, "@")
	name := path[strings.LastIndex(path, "/")+1:]
	return goBuilder().
		WithEnvVariable("GOBIN", "/out").
		WithExec(supplychain.BuildCommand(pkg)).
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
