package main

import (
	"context"
	"fmt"
	"strings"

	"dagger/lowcode-pipeline/internal/dagger"
)

// The reference pipeline in one call: build, publish the images pinned by digest, build the payload from them, deploy once
//
// Everything that can be checked is checked before anything is built or
// pushed: registry names and tags, deploy rules and modes, the starting
// payload, the webhook address and token. Prints the published references,
// the payload and the receipt.
//
// +cache="never"
func (m *LowcodePipeline) Ship(
	ctx context.Context,
	// Registry host[:port], e.g. registry.example.com
	registry string,
	// Repository of the frontend image within the registry
	frontendRepository string,
	// Repository of the backend image within the registry
	backendRepository string,
	// Tags to push each image under (the first one goes into the payload)
	tags []string,
	// Webhook address from the vendor
	webhookUrl string,
	// Webhook token, e.g. env:WEBHOOK_TOKEN
	webhookToken *dagger.Secret,
	// Registry user name
	// +optional
	username string,
	// Registry password or token
	// +optional
	password *dagger.Secret,
	// Also build, push and deploy the code-as-data image
	// +optional
	codeAsData bool,
	// Repository of the code-as-data image (required with --code-as-data)
	// +optional
	codeAsDataRepository string,
	// Build the code as data as a library of bricks
	// +optional
	bricks bool,
	// Platforms of a multi-platform image: linux/amd64, linux/arm64
	// +optional
	platforms []string,
	// Frontend base image: the vendor's frontend base image at tag stable
	// +optional
	frontendBaseImage string,
	// Deploy rule "SOURCE -> TARGET" (repeatable; replaces the starting rules)
	// +optional
	deployRule []string,
	// codeAsData.updateMode
	// +optional
	updateMode ApprovalMode,
	// noDowntime.promotionMode
	// +optional
	promotionMode ApprovalMode,
	// Set skipUpdateVersions
	// +optional
	skipUpdateVersions bool,
	// Add --force-sync to extraArgs
	// +optional
	forceSync bool,
	// Payload JSON file to start from instead of the reference default
	// +optional
	from *dagger.File,
	// Allow an http:// webhook address (a local receiver)
	// +optional
	allowHttp bool,
	// Time limit for connecting to the webhook
	// +optional
	// +default="10s"
	connectTimeout string,
	// Time limit for the whole webhook call
	// +optional
	// +default="60s"
	timeout string,
	// How many more times a failure to connect at all is tried
	// +optional
	// +default=3
	connectRetries int,
) (string, error) {
	pub, targets, err := newPublish(registry, frontendRepository, backendRepository, tags, username, password,
		codeAsData, codeAsDataRepository, bricks, platforms, frontendBaseImage)
	if err != nil {
		return "", err
	}
	var base []byte
	if from != nil {
		if base, err = readInput(ctx, "--from", from, ""); err != nil {
			return "", err
		}
	}
	start, opts, err := payloadOptions(base, payloadFlags{
		deployRules: deployRule, updateMode: string(updateMode), promotionMode: string(promotionMode),
		skipUpdateVersions: skipUpdateVersions, forceSync: forceSync,
	})
	if err != nil {
		return "", err
	}
	token, err := webhookToken.Plaintext(ctx)
	if err != nil {
		return "", fmt.Errorf("read --webhook-token: %w", err)
	}
	call, err := prepareWebhook(deployRequest{
		url: webhookUrl, token: token, allowHTTP: allowHttp,
		connectTimeout: connectTimeout, timeout: timeout, connectRetries: connectRetries,
	})
	if err != nil {
		return "", err
	}

	published, err := m.publish(ctx, pub, targets)
	if err != nil {
		return "", err
	}
	opts.FrontendImage, opts.BackendImages = published.Frontend[0], []string{published.Backend[0]}
	if codeAsData {
		opts.CodeAsDataImage = published.CodeAsData[0]
	}
	p, err := finishPayload(start, opts)
	if err != nil {
		return "", err
	}
	body, err := p.Marshal()
	if err != nil {
		return "", err
	}
	receipt, err := sendPayload(ctx, call, body)
	if err != nil {
		return "", fmt.Errorf("images published (%s), but %w", strings.Join(published.All(), ", "), err)
	}
	return fmt.Sprintf("published:\n%s\n\npayload:\n%s\nreceipt:\n%s", strings.Join(published.All(), "\n"), body, receipt), nil
}
