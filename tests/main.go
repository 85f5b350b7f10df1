// Engine-level tests of lowcode-pipeline
//
// Each +check calls lowcode-pipeline as a dependency, through the typed Go
// bindings generated from its schema, as another module would: a renamed
// function, flag or field breaks the compilation, not a check at run time.
// Run them with `dagger check -m tests`. They need a Dagger engine; the pure
// Go tests (scripts/test) need none. What the engine does that they rely on
// is in engine-facts.md.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"dagger/tests/internal/dagger"
)

type Tests struct {
	// The lowcode-pipeline repository
	Repo *dagger.Directory
}

func New(
	// The lowcode-pipeline repository
	// +defaultPath="/"
	// +ignore=["**/node_modules", "**/dist", ".git"]
	repo *dagger.Directory,
) *Tests {
	return &Tests{Repo: repo}
}

// The example project's stand-ins for the vendor's packages.
const (
	toolkit     = "platform-cli-standin"
	drawPackage = "draw-standin"
)

// app is examples/app, the project the checks build.
func (t *Tests) app() *dagger.Directory { return t.Repo.Directory("examples/app") }

// build is the module's build of source with the example's stand-ins.
func build(source *dagger.Directory, opts dagger.LowcodePipelineBuildOpts) *dagger.LowcodePipelineBuild {
	opts.Source, opts.Toolkit, opts.DrawPackage = source, toolkit, drawPackage
	return dag.LowcodePipeline().Build(opts)
}

// fails checks that err is an error holding every one of wants.
func fails(what string, err error, wants ...string) error {
	if err == nil {
		return fmt.Errorf("%s: expected an error containing %q, got none", what, wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			return fmt.Errorf("%s: error %q does not contain %q", what, err, w)
		}
	}
	return nil
}

// sameJSON compares two JSON documents as data, never as text.
func sameJSON(got, want string) error {
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return fmt.Errorf("not JSON: %w: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return err
	}
	gn, _ := json.Marshal(g)
	wn, _ := json.Marshal(w)
	if string(gn) != string(wn) {
		return fmt.Errorf("JSON differs\n got %s\nwant %s", gn, wn)
	}
	return nil
}

// registry starts registry:3 for one check. Each check names its own: the
// engine shares identical services between concurrent checks, so one
// check's Stop would stop another's registry under its push, and a restarted
// registry is empty (engine-facts.md). The name makes the definition, so the
// instance, the check's own.
func registry(ctx context.Context, check string) (*dagger.Service, error) {
	return dag.Container().From("registry:3").
		WithEnvVariable("LOWCODE_PIPELINE_CHECK", check).
		WithExposedPort(5000).
		AsService(dagger.ContainerAsServiceOpts{UseEntrypoint: true}).
		Start(ctx)
}

// checkRegistry is the registry the checks publish to: registry:3 as a
// service, named localhost:5000 (the engine routes the host to the service
// and speaks plain http only to localhost).
const checkRegistry = "localhost:5000"

// pinRelease and pinDelivery hold one run's result by its ID: a
// side-effecting step runs once a session (+cache="session"), so this is no
// longer needed for that; the checks that compare two runs in one session
// give each its own inputs, and read each run through its ID.
func pinRelease(ctx context.Context, r *dagger.LowcodePipelineRelease) (*dagger.LowcodePipelineRelease, error) {
	id, err := r.ID(ctx)
	if err != nil {
		return nil, err
	}
	return dag.LoadLowcodePipelineReleaseFromID(dagger.LowcodePipelineReleaseID(id)), nil
}

func pinDelivery(ctx context.Context, d *dagger.LowcodePipelineDelivery) (*dagger.LowcodePipelineDelivery, error) {
	id, err := d.ID(ctx)
	if err != nil {
		return nil, err
	}
	return dag.LoadLowcodePipelineDeliveryFromID(dagger.LowcodePipelineDeliveryID(id)), nil
}

func pinReceipt(ctx context.Context, r *dagger.LowcodePipelineReceipt) (*dagger.LowcodePipelineReceipt, error) {
	id, err := r.ID(ctx)
	if err != nil {
		return nil, err
	}
	return dag.LoadLowcodePipelineReceiptFromID(dagger.LowcodePipelineReceiptID(id)), nil
}
