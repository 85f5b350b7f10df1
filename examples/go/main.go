// Using lowcode-pipeline from another Dagger module, in Go
//
// A platform team's own module installs lowcode-pipeline as a dependency
// (`dagger install github.com/your-org/lowcode-pipeline@<version>`; here
// `../..`) and calls its steps with typed calls: every step returns an
// object, and the results are read as Go values, never parsed from text.
// Each call into the dependency is a module call (about 1.5 s): Deliver makes
// one, Plan chains three. The engine checks in tests/ call both functions.
package main

import (
	"context"
	"fmt"
	"strings"

	"dagger/lowcode-pipeline-example/internal/dagger"
)

type LowcodePipelineExample struct{}

// Delivery is what Deliver reports: read from lowcode-pipeline's delivery as typed fields
type Delivery struct {
	// HTTP status the webhook answered
	Status int
	// The image references the payload carried, pinned by digest
	Images []string
	// SHA-256 of the payload bytes that were sent
	PayloadSha256 string
}

// Build the project, publish its images and deploy them: lowcode-pipeline's deliver, one call, from Go
//
// It pushes and deploys, so it is never cached, like the function it calls.
//
// +cache="session"
func (m *LowcodePipelineExample) Deliver(
	ctx context.Context,
	// The platform project
	source *dagger.Directory,
	// Where the images go, e.g. registry.example.com/team/app-{kind}
	repository string,
	// Image tag
	tag string,
	// The platform's webhook
	webhookUrl string,
	// Its bearer token
	webhookToken *dagger.Secret,
	// The platform toolkit's package, when package.json does not depend on @olympeio/toolkit
	// +optional
	toolkit string,
	// The design tool's package, when package.json does not depend on @olympeio/draw
	// +optional
	drawPackage string,
	// A registry run as a service of this session (tests, local runs)
	// +optional
	registryService *dagger.Service,
	// Allow a plain-http webhook (local receivers only)
	// +optional
	allowHttp bool,
) (*Delivery, error) {
	delivery := dag.LowcodePipeline().Deliver(repository, []string{tag}, webhookUrl, webhookToken, dagger.LowcodePipelineDeliverOpts{
		Source:          source,
		Toolkit:         toolkit,
		DrawPackage:     drawPackage,
		RegistryService: registryService,
		AllowHTTP:       allowHttp,
	})

	// The delivery's fields are objects too: its release's references are typed values.
	frontend, err := delivery.Release().Frontend(ctx)
	if err != nil {
		return nil, err
	}
	if len(frontend) == 0 {
		return nil, fmt.Errorf("the release has no frontend image")
	}
	digest, err := frontend[0].Digest(ctx)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(digest, "sha256:") {
		return nil, fmt.Errorf("the frontend image was not pinned by digest")
	}

	receipt := delivery.Receipt()
	status, err := receipt.Status(ctx)
	if err != nil {
		return nil, err
	}
	images, err := receipt.Images(ctx)
	if err != nil {
		return nil, err
	}
	sum, err := receipt.PayloadSha256(ctx)
	if err != nil {
		return nil, err
	}
	return &Delivery{Status: status, Images: images, PayloadSha256: sum}, nil
}

// Where each backend image would go under deploy rules, as a table: a payload built from references alone
func (m *LowcodePipelineExample) Plan(
	ctx context.Context,
	// Backend image references
	backendRef []string,
	// Deploy rules, "<image pattern> -> <backend pattern>"
	deployRule []string,
	// The platform's backends
	backend []string,
) (string, error) {
	return dag.LowcodePipeline().
		Payload(dagger.LowcodePipelinePayloadOpts{BackendRef: backendRef}).
		WithDeployRules(deployRule).
		Plan(backend).
		Summary(ctx)
}
