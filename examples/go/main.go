// Using lowcode-pipeline from another Dagger module, in Go
//
// A platform team's own module installs lowcode-pipeline as a dependency
// (`dagger install github.com/your-org/lowcode-pipeline@<version>`; here
// `../..`) and chains its steps with typed calls: every step returns an
// object, and the results are read as Go values, never parsed from text.
// The engine checks in tests/ call both functions.
package main

import (
	"context"
	"fmt"

	"dagger/lowcode-pipeline-example/internal/dagger"
)

type LowcodePipelineExample struct{}

// Delivery is what Deliver reports: read from lowcode-pipeline's receipt as typed fields
type Delivery struct {
	// HTTP status the webhook answered
	Status int
	// The image references the payload carried, pinned by digest
	Images []string
	// SHA-256 of the payload bytes that were sent
	PayloadSha256 string
}

// Build the project, publish its images and deploy them: lowcode-pipeline's whole chain from Go
//
// It pushes and deploys, so it is never cached, like the steps it calls.
//
// +cache="never"
func (m *LowcodePipelineExample) Deliver(
	ctx context.Context,
	// The platform project
	source *dagger.Directory,
	// The platform's CLI package
	platformCli string,
	// The design tool's package
	drawPackage string,
	// Registry host, e.g. registry.example.com
	registry string,
	// Image tag
	tag string,
	// The platform's webhook
	webhookUrl string,
	// Its bearer token
	webhookToken *dagger.Secret,
	// Registry user
	// +optional
	registryUsername string,
	// Registry password
	// +optional
	registryPassword *dagger.Secret,
	// A registry run as a service of this session (tests, local runs)
	// +optional
	registryService *dagger.Service,
	// Allow a plain-http webhook (local receivers only)
	// +optional
	allowHttp bool,
) (*Delivery, error) {
	release := dag.LowcodePipeline(dagger.LowcodePipelineOpts{
		Source:      source,
		PlatformCli: platformCli,
		DrawPackage: drawPackage,
	}).
		Build().
		Publish(registry, "lowcode/frontend", "lowcode/backend", []string{tag}, dagger.LowcodePipelineBuildPublishOpts{
			RegistryUsername: registryUsername,
			RegistryPassword: registryPassword,
			RegistryService:  registryService,
		})

	// A release is an object: its references are typed values.
	frontend, err := release.Frontend(ctx)
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
	if digest == "" {
		return nil, fmt.Errorf("the frontend image was not pinned by digest")
	}

	receipt := release.Payload().Deploy(webhookUrl, webhookToken, dagger.LowcodePipelinePayloadDeployOpts{AllowHTTP: allowHttp})
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
	backendImage []string,
	// Deploy rules, "<image pattern> -> <backend pattern>"
	deployRule []string,
	// The platform's backends
	backend []string,
) (string, error) {
	return dag.LowcodePipeline().
		Payload(dagger.LowcodePipelinePayloadOpts{BackendImage: backendImage}).
		WithDeployRules(deployRule).
		Plan(backend).
		Summary(ctx)
}
