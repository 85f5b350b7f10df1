package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"dagger/lowcode-pipeline/internal/dagger"
)

const (
	// The registry the demo starts, and the address it publishes to: the
	// engine routes the host to the service, and speaks plain http only to
	// localhost.
	registryImage = "registry:3"
	demoRegistry  = "localhost:5000"
)

// Run the whole pipeline on the embedded example project: build, publish to a local registry, one deploy to a local webhook receiver
//
// Uses examples/app from this module with its stand-ins for the vendor's
// tools, so it needs no vendor account and no registry of yours: it starts
// registry:3 and a webhook-receiver as services, then runs the chain
// build --code-as-data → publish → payload → deploy. The payload carries the
// three images pinned by digest. Returns the receipt.
//
// +cache="never"
func (m *LowcodePipeline) Demo(ctx context.Context) (*Receipt, error) {
	example := &LowcodePipeline{
		Source:       dag.CurrentModule().Source().Directory("examples/app"),
		NodeImage:    defaultImage,
		PlatformCli:  "platform-cli-standin",
		DrawPackage:  "draw-standin",
		NpmCache:     m.NpmCache,
		ImageVersion: "demo",
	}
	registry, err := dag.Container().From(registryImage).
		WithExposedPort(5000).
		AsService(dagger.ContainerAsServiceOpts{UseEntrypoint: true}).
		Start(ctx)
	if err != nil {
		return nil, err
	}
	defer registry.Stop(ctx)

	build, err := example.Build(ctx, true, false, nil)
	if err != nil {
		return nil, err
	}
	release, err := build.Publish(ctx, demoRegistry, "lowcode-example/frontend", "lowcode-example/backend", []string{"demo"},
		"lowcode-example/codeasdata", nil, "", nil, registry, false, nil, nil)
	if err != nil {
		return nil, err
	}
	p, err := release.Payload(ctx, nil, "")
	if err != nil {
		return nil, err
	}

	random := make([]byte, 16)
	_, _ = rand.Read(random)
	token := dag.SetSecret("lowcode-pipeline-demo-token", hex.EncodeToString(random))
	service, err := m.WebhookReceiver(token, 8080, nil, nil)
	if err != nil {
		return nil, err
	}
	receiver, err := service.Start(ctx)
	if err != nil {
		return nil, err
	}
	defer receiver.Stop(ctx)
	endpoint, err := receiver.Endpoint(ctx, dagger.ServiceEndpointOpts{Scheme: "http"})
	if err != nil {
		return nil, err
	}
	return p.Deploy(ctx, endpoint+"/example/demo", token, true, "", "", 3, false, nil)
}
