package main

import (
	"context"
)

// The engine-free suite (scripts/test: Go tests, real git and npm, fuzzing), in a node:24 container with Go added
// +check
func (t *Tests) UnitTests(ctx context.Context) error {
	goroot := dag.Container().From("golang:1.26").Directory("/usr/local/go")
	_, err := dag.Container().From("node:24").
		WithDirectory("/usr/local/go", goroot).
		WithEnvVariable("PATH", "/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin").
		WithMountedCache("/root/go/pkg/mod", dag.CacheVolume("lowcode-pipeline-tests-gomod")).
		WithMountedCache("/root/.cache/go-build", dag.CacheVolume("lowcode-pipeline-tests-gobuild")).
		WithDirectory("/src", t.Repo).
		WithWorkdir("/src").
		WithExec([]string{"git", "config", "--global", "user.email", "tests@lowcode-pipeline.invalid"}).
		WithExec([]string{"git", "config", "--global", "user.name", "lowcode-pipeline tests"}).
		// a checkout, as CI has: the repository comes without .git, and the
		// tests read what git tracks (git ls-files)
		WithExec([]string{"sh", "-c", "git init -q && git add -A && git commit -qm checkout"}).
		WithExec([]string{"bash", "scripts/test"}).
		Sync(ctx)
	return err
}

// A step's time limit kept by Alpine's sh (busybox), where the module's tools run, as by Debian's dash in unit-tests
// +check
func (t *Tests) StepLimitInAlpineSh(ctx context.Context) error {
	_, err := dag.Container().From("golang:1.26-alpine").
		WithMountedCache("/go/pkg/mod", dag.CacheVolume("lowcode-pipeline-tests-gomod-alpine")).
		WithMountedCache("/root/.cache/go-build", dag.CacheVolume("lowcode-pipeline-tests-gobuild-alpine")).
		WithEnvVariable("CGO_ENABLED", "0").
		WithDirectory("/src", t.Repo).
		WithWorkdir("/src").
		WithExec([]string{"go", "test", "-count=1", "./internal/steplimit/"}).
		Sync(ctx)
	return err
}
