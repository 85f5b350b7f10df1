package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/steplimit"
	"dagger/lowcode-pipeline/internal/webhook"
)

const (
	// The registry the demo starts, and the address it publishes to: the
	// engine routes the host to the service, and speaks plain http only to
	// localhost.
	registryImage = "registry:3"
	demoRegistry  = "localhost:5000"
)

// demo runs deliver on examples/app, with its own registry and webhook
// receiver as services.
func demo(ctx context.Context) (string, error) {
	random := make([]byte, 16)
	_, _ = rand.Read(random)
	run := hex.EncodeToString(random)
	// The run's own registry: the engine shares identical services, and
	// Stop stops one for all who hold it (tests/engine-facts.md).
	registry, err := started(ctx, "the demo's registry (the pull of "+registryImage+", then its start)", dag.Container().From(registryImage).
		WithEnvVariable("LOWCODE_PIPELINE_DEMO", run).
		WithExposedPort(5000).
		AsService(dagger.ContainerAsServiceOpts{UseEntrypoint: true}))
	if err != nil {
		return "", err
	}
	defer registry.Stop(ctx)

	token := dag.SetSecret("lowcode-pipeline-demo-token-"+run[:8], run)
	service, err := webhookReceiver(token, 8080, nil, nil)
	if err != nil {
		return "", err
	}
	receiver, err := started(ctx, "the demo's webhook receiver (the pull of "+runtimeImage+", then its start)", service)
	if err != nil {
		return "", err
	}
	defer receiver.Stop(ctx)
	endpoint, err := receiver.Endpoint(ctx, dagger.ServiceEndpointOpts{Scheme: "http"})
	if err != nil {
		return "", err
	}
	spec, err := newDeliverySpec(ctx, deliveryFlags{
		build: buildFlags{source: dag.CurrentModule().Source().Directory("examples/app"), toolkit: "platform-cli-standin",
			drawPackage: "draw-standin", codeAsData: CodeAsDataKindProject, nodeImage: nodebuild.DefaultImage},
		publish: publishFlags{repository: demoRegistry + "/lowcode-example/{kind}", tag: []string{"demo"}, registryService: registry,
			created: "2026-01-01T00:00:00Z", label: []string{"org.opencontainers.image.version=demo"}},
		deploy: deployFlags{url: endpoint + "/example/demo", token: token, allowHTTP: true, connectAttempts: defaultConnectAttempts, direct: true},
	})
	if err != nil {
		return "", err
	}
	d, err := spec.run(ctx)
	if err != nil {
		return "", err
	}
	return d.Summary, nil
}

// started is svc started, the pull of its image and its start bounded as a
// tool's step (the engine's own wait for its ports has no limit of ours).
func started(ctx context.Context, what string, svc *dagger.Service) (_ *dagger.Service, err error) {
	err = steplimit.Wait(ctx, steplimit.Sum(steplimit.Pull, steplimit.Tool), what, func(ctx context.Context) (err error) {
		svc, err = svc.Start(ctx)
		return err
	})
	return svc, err
}

// webhookReceiver is the webhook-receiver service (the module's binary).
func webhookReceiver(webhookToken *dagger.Secret, port int, tlsCert *dagger.File, tlsKey *dagger.Secret) (*dagger.Service, error) {
	if err := webhook.CheckPort(port); err != nil {
		return nil, err
	}
	args := []string{"webhook-receiver", "-listen", fmt.Sprintf(":%d", port)}
	ctr, err := withTool(dag.Container().From(runtimeImage), "webhook-receiver")
	if err != nil {
		return nil, err
	}
	ctr = ctr.WithSecretVariable("WEBHOOK_TOKEN", webhookToken).WithExposedPort(port)
	switch {
	case tlsCert != nil && tlsKey != nil:
		ctr = ctr.WithMountedFile("/run/lowcode-pipeline/tls.crt", tlsCert).WithMountedSecret("/run/lowcode-pipeline/tls.key", tlsKey)
		args = append(args, "-tls-cert", "/run/lowcode-pipeline/tls.crt", "-tls-key", "/run/lowcode-pipeline/tls.key")
	case tlsCert != nil || tlsKey != nil:
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	return ctr.AsService(dagger.ContainerAsServiceOpts{Args: args}), nil
}
