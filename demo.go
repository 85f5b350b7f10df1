package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/payload"
)

// Run the whole pipeline on the embedded example project: build, the three images, the payload, one deploy to a local webhook receiver
//
// Uses examples/app from this module with its stand-ins for the vendor's
// tools, so it needs no vendor account and no registry: the images are built
// and labelled but not pushed (their references in the payload are local).
//
// +cache="never"
func (m *LowcodePipeline) Demo(ctx context.Context) (string, error) {
	ex := New(dag.CurrentModule().Source().Directory("examples/app"), defaultImage, nil,
		"platform-cli-standin", "draw-standin", m.NpmCache, "demo", "", "")
	var front *dagger.Container
	g, gctx := errgroup.WithContext(ctx)
	build := func(image func(context.Context) (*dagger.Container, error), keep **dagger.Container) {
		g.Go(func() error {
			c, err := image(gctx)
			if err == nil {
				c, err = c.Sync(gctx)
			}
			if keep != nil {
				*keep = c
			}
			return err
		})
	}
	build(func(ctx context.Context) (*dagger.Container, error) { return ex.FrontendImage(ctx, "", "") }, &front)
	build(func(ctx context.Context) (*dagger.Container, error) { return ex.BackendImage(ctx, "") }, nil)
	build(func(ctx context.Context) (*dagger.Container, error) { return ex.CodeAsDataImage(ctx, false, "") }, nil)
	if err := g.Wait(); err != nil {
		return "", err
	}
	drawVersion, err := front.Label(ctx, "draw_version")
	if err != nil {
		return "", err
	}

	p := payload.FromDefault(payload.Options{
		FrontendImage:   "localhost/lowcode-example/frontend:demo",
		BackendImages:   []string{"localhost/lowcode-example/backend:demo"},
		CodeAsDataImage: "localhost/lowcode-example/codeasdata:demo",
	})
	body, err := p.Marshal()
	if err != nil {
		return "", err
	}

	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	token := hex.EncodeToString(secret)
	receiver, err := m.WebhookReceiver(dag.SetSecret("lowcode-pipeline-demo-token", token), 8080).Start(ctx)
	if err != nil {
		return "", err
	}
	defer receiver.Stop(ctx)
	endpoint, err := receiver.Endpoint(ctx, dagger.ServiceEndpointOpts{Scheme: "http"})
	if err != nil {
		return "", err
	}
	receipt, err := deployPayload(ctx, deployRequest{
		url: endpoint + "/example/demo", token: token, payload: body, allowHTTP: true, connectRetries: 3,
	})
	if err != nil {
		return "", err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "built examples/app: frontend, backend and code-as-data images (draw_version %s), not pushed\n\npayload:\n%s\nreceipt:\n%s", drawVersion, body, receipt)
	return out.String(), nil
}
