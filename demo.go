package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/nodebuild"
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
// registry:3 and a webhook-receiver as services, then runs deliver (build
// with code as data → publish → payload → deploy). The payload carries the
// three images pinned by digest. Prints the images and the receipt: status,
// message, each image reference, the payload's SHA-256 and where it went.
//
// +cache="session"
func (m *LowcodePipeline) Demo(ctx context.Context) (_ string, err error) {
	defer userErr(&err)
	random := make([]byte, 16)
	_, _ = rand.Read(random)
	run := hex.EncodeToString(random)
	// The run's own registry: the engine shares identical services, and
	// Stop stops one for all who hold it (tests/engine-facts.md).
	registry, err := dag.Container().From(registryImage).
		WithEnvVariable("LOWCODE_PIPELINE_DEMO", run).
		WithExposedPort(5000).
		AsService(dagger.ContainerAsServiceOpts{UseEntrypoint: true}).
		Start(ctx)
	if err != nil {
		return "", err
	}
	defer registry.Stop(ctx)

	token := dag.SetSecret("lowcode-pipeline-demo-token-"+run[:8], run)
	service, err := m.WebhookReceiver(token, 8080, nil, nil)
	if err != nil {
		return "", err
	}
	receiver, err := service.Start(ctx)
	if err != nil {
		return "", err
	}
	defer receiver.Stop(ctx)
	endpoint, err := receiver.Endpoint(ctx, dagger.ServiceEndpointOpts{Scheme: "http"})
	if err != nil {
		return "", err
	}
	d, err := m.Deliver(ctx, dag.CurrentModule().Source().Directory("examples/app"), "platform-cli-standin", "draw-standin",
		CodeAsDataKindProject, nil, nil, nodebuild.DefaultImage, nil,
		demoRegistry+"/lowcode-example/{kind}", []string{"demo"}, nil, "", nil, registry, "2026-01-01T00:00:00Z",
		[]string{"org.opencontainers.image.version=demo"},
		nil, endpoint+"/example/demo", token, nil, true)
	if err != nil {
		return "", err
	}
	return d.Summary, nil
}
