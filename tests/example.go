package main

import (
	"context"
	"fmt"
	"strings"

	"dagger/tests/internal/dagger"
)

// The checks of examples/go, the module that calls lowcode-pipeline from Go
// with its generated bindings: what it shows a reader must work. tests/
// depends on it as on lowcode-pipeline.

// The Go example's plan: a payload, deploy rules and a plan, chained from another module.
// +check
func (t *Tests) GoExamplePlans(ctx context.Context) error {
	table, err := dag.LowcodePipelineExample().Plan(ctx, []string{"registry.example.com/api:1", "registry.example.com/jobs:1"},
		[]string{"/api: -> ^api$", "/jobs: -> ^(?!api$)"}, []string{"api", "worker"})
	if err != nil {
		return err
	}
	for _, want := range []string{"registry.example.com/api:1", "registry.example.com/jobs:1", "worker"} {
		if !strings.Contains(table, want) {
			return fmt.Errorf("the example's plan lacks %q:\n%s", want, table)
		}
	}
	return nil
}

// The Go example's deliver: lowcode-pipeline's deliver from another module, its fields read one by one, one delivery of the published digests.
// +check
func (t *Tests) GoExampleDelivers(ctx context.Context) error {
	reg, err := registry(ctx, "GoExampleDelivers")
	if err != nil {
		return err
	}
	defer reg.Stop(ctx)
	rcv, err := startReceiver(ctx, "/acme/go-example")
	if err != nil {
		return err
	}
	defer rcv.svc.Stop(ctx)
	d := dag.LowcodePipelineExample().Deliver(t.app(), checkRegistry+"/lowcode/{kind}", "3.0.0", rcv.url, rcv.token,
		dagger.LowcodePipelineExampleDeliverOpts{Toolkit: toolkit, DrawPackage: drawPackage, RegistryService: reg, AllowHTTP: true})
	// read field by field, each read a query of its own through the chain:
	// the example and deliver run once in a session (+cache="session")
	status, err := d.Status(ctx)
	if err != nil {
		return err
	}
	images, err := d.Images(ctx)
	if err != nil {
		return err
	}
	sum, err := d.PayloadSha256(ctx)
	if err != nil {
		return err
	}
	if status != 200 || len(images) != 2 || len(sum) != 64 {
		return fmt.Errorf("unexpected delivery: status %d, images %v, payload sha256 %q", status, images, sum)
	}
	for _, ref := range images {
		if !strings.HasPrefix(ref, checkRegistry+"/lowcode/") || !strings.Contains(ref, ":3.0.0@sha256:") {
			return fmt.Errorf("the example deployed %q, want a reference pinned by digest in the check's registry", ref)
		}
	}
	got, err := rcv.deliveries(ctx)
	if err != nil {
		return err
	}
	if len(got) != 1 || got[0].Path != "/acme/go-example" {
		return fmt.Errorf("the receiver recorded %d deliveries, want exactly 1 to /acme/go-example", len(got))
	}
	return nil
}
