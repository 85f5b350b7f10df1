package main

import (
	"context"
	"fmt"
	"strings"
)

// The checks of examples/go, the module that chains lowcode-pipeline from Go
// with its generated bindings: what it shows a reader must work.

var qExamplePlan = gqlExample("example-plan", `{ lowcodePipelineExample {
	plan(backendImage: ["registry.example.com/api:1", "registry.example.com/jobs:1"],
		deployRule: ["/api: -> ^api$", "/jobs: -> ^(?!api$)"], backend: ["api", "worker"]) } }`)

// The Go example's plan: a payload, deploy rules and a plan, chained from another module.
// +check
func (t *Tests) GoExamplePlans(ctx context.Context) error {
	var out struct{ LowcodePipelineExample struct{ Plan string } }
	if err := t.run(ctx, qExamplePlan, nil, &out); err != nil {
		return err
	}
	table := out.LowcodePipelineExample.Plan
	for _, want := range []string{"registry.example.com/api:1", "registry.example.com/jobs:1", "worker"} {
		if !strings.Contains(table, want) {
			return fmt.Errorf("the example's plan lacks %q:\n%s", want, table)
		}
	}
	return nil
}

var qExampleDeliver = gqlExample("example-deliver", `query($source: ID!, $registry: ID!, $url: String!, $token: ID!) {
	lowcodePipelineExample { deliver(source: $source, platformCli: "platform-cli-standin", drawPackage: "draw-standin",
		registry: "`+checkRegistry+`", tag: "3.0.0", webhookUrl: $url, webhookToken: $token, registryService: $registry,
		allowHttp: true) { status images payloadSha256 } } }`)

// The Go example's deliver: build → publish → payload → deploy from another module, one delivery of the published digests.
// +check
func (t *Tests) GoExampleDelivers(ctx context.Context) error {
	vars, registry, err := t.exampleWithRegistry(ctx, "GoExampleDelivers")
	if err != nil {
		return err
	}
	defer registry.Stop(ctx)
	receiver, token, err := t.withReceiver(ctx, vars, "/acme/go-example")
	if err != nil {
		return err
	}
	defer receiver.Stop(ctx)
	var out struct {
		LowcodePipelineExample struct {
			Deliver struct {
				Status        int
				Images        []string
				PayloadSha256 string
			}
		}
	}
	if err := t.run(ctx, qExampleDeliver, vars, &out); err != nil {
		return err
	}
	d := out.LowcodePipelineExample.Deliver
	if d.Status != 200 || len(d.Images) != 2 || len(d.PayloadSha256) != 64 {
		return fmt.Errorf("unexpected delivery: %+v", d)
	}
	for _, ref := range d.Images {
		if !strings.HasPrefix(ref, checkRegistry+"/lowcode/") || !strings.Contains(ref, ":3.0.0@sha256:") {
			return fmt.Errorf("the example deployed %q, want a reference pinned by digest in the check's registry", ref)
		}
	}
	got, err := deliveries(ctx, receiver, token)
	if err != nil {
		return err
	}
	if len(got) != 1 || got[0].Path != "/acme/go-example" {
		return fmt.Errorf("the receiver recorded %d deliveries, want exactly 1 to /acme/go-example", len(got))
	}
	return nil
}
