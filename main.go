// A low-code platform's whole delivery as container-native steps
//
// Snapshot code as data into git, build the project in node:24 containers,
// package the frontend, backend and code-as-data images, and deploy them with
// one webhook call: the same pipeline from any CI and from a laptop. A CI run
// is one call, deliver; the same steps chain one by one, each returning an
// object whose fields are its result and whose functions are the next steps:
// build → publish → payload → deploy, and snapshot → push.
package main

import (
	"context"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/payload"
)

// LowcodePipeline is the module: it holds nothing, so that a call costs one module function call and no constructor
//
// Every step takes what it uses (the project is --source, the current
// directory by default).
type LowcodePipeline struct{}

// CodeAsDataKind says whether and how build makes dist/codeAsData
type CodeAsDataKind string

const (
	// No code as data (the default)
	CodeAsDataKindNone CodeAsDataKind = "none"
	// The code as data as a final project, with its dependencies': buildCodeAsData --codeAsData.mode all
	CodeAsDataKindProject CodeAsDataKind = "project"
	// The code as data as a library of bricks, the project's own only: buildCodeAsData --codeAsData.mode project
	CodeAsDataKindBricks CodeAsDataKind = "bricks"
)

// ApprovalMode gates a code-as-data deployment or a promotion behind an approval step
type ApprovalMode string

const (
	// Deploy or promote automatically
	ApprovalModeAuto ApprovalMode = "auto"
	// Wait for an approval step
	ApprovalModeManual ApprovalMode = "manual"
)

// Build, publish and deploy in one call: the platform's reference pipeline as one module call, for CI
//
// The flags are those of build, publish and deploy, all checked before
// anything is built. One POST, never sent twice. The summary gives the
// images, the receipt and each step's time.
//
// +cache="session"
func (m *LowcodePipeline) Deliver(
	ctx context.Context,
	// Project to build: a package.json with build:draw and build:node scripts (from another directory or module: pass it, e.g. --source .)
	// +defaultPath="/"
	// +ignore=["**/node_modules", "dist", ".git"]
	source *dagger.Directory,
	// The platform toolkit's npm package (with optional @version) that npx runs for buildCodeAsData (default: @olympeio/toolkit when package.json depends on it)
	// +optional
	toolkit string,
	// Design-tool package whose installed version labels the images, draw_version (default: @olympeio/draw when package.json depends on it)
	// +optional
	drawPackage string,
	// Build the code as data too: project, or bricks (a library of bricks); none by default
	// +optional
	codeAsData CodeAsDataKind,
	// Further argument for buildCodeAsData, passed as it is (repeatable; needs --code-as-data)
	// +optional
	codeAsDataArg []string,
	// Build argument of the images' Dockerfiles, NAME=VALUE (repeatable): FRONTEND_BASE_IMAGE, WEB_USER, DOCUMENT_ROOT, BACKEND_BASE_IMAGE, CODE_AS_DATA_BASE_IMAGE, or one of your Dockerfiles' own
	// +optional
	buildArg []string,
	// Node.js image the builds run in (Node.js 20 or above)
	// +optional
	// +default="node:24"
	nodeImage string,
	// .npmrc for private registries (the platform's packages usually come from one); mounted as a secret, never in a layer
	// +optional
	npmrc *dagger.Secret,
	// Where the images go, {kind} standing for frontend, backend and codeasdata, e.g. registry.example.com/team/app-{kind}
	repository string,
	// Tag to push each image under (repeatable; the first is the one the payload carries)
	tag []string,
	// Platform of a multi-platform image (repeatable): linux/amd64, linux/arm64 (default: the engine's)
	// +optional
	platform []dagger.Platform,
	// Registry user name
	// +optional
	registryUsername string,
	// Registry password or token
	// +optional
	registryPassword *dagger.Secret,
	// A registry running as a Dagger service (tests, demos; what a repository on localhost needs): the repository's registry is reached there, over plain http
	// +optional
	registryService *dagger.Service,
	// Creation time of the images, which every time in them is clamped to: the commit time, RFC 3339 or Unix seconds ($SOURCE_DATE_EPOCH); default the Unix epoch, never the clock
	// +optional
	created string,
	// Image label KEY=VALUE (repeatable), e.g. org.opencontainers.image.revision=$GIT_SHA; a URL is shown without credentials or query
	// +optional
	label []string,
	// Payload JSON file to start from instead of the reference default; it names no image: the run's are the only ones sent
	// +optional
	payload *dagger.File,
	// Webhook address from the vendor, e.g. https://<client_host>/<project>/<instance>
	webhookUrl string,
	// Webhook token, e.g. env://WEBHOOK_TOKEN
	webhookToken *dagger.Secret,
	// CA certificate (PEM) that signs a self-hosted webhook's certificate; trusted by this call only, instead of the system's
	// +optional
	webhookCaCert *dagger.File,
	// Allow an http:// address (a local receiver); the token would travel unencrypted
	// +optional
	allowHttp bool,
) (_ *Delivery, err error) {
	defer userErr(&err)
	spec, err := newDeliverySpec(ctx, deliveryFlags{
		build: buildFlags{source: source, toolkit: toolkit, drawPackage: drawPackage, codeAsData: codeAsData, codeAsDataArg: codeAsDataArg,
			buildArg: buildArg, nodeImage: nodeImage, npmrc: npmrc},
		publish: publishFlags{repository: repository, tag: tag, platform: platform, registryUsername: registryUsername,
			registryPassword: registryPassword, registryService: registryService, created: created, label: label},
		deploy:  deployFlags{url: webhookUrl, token: webhookToken, allowHTTP: allowHttp, connectAttempts: defaultConnectAttempts, caCert: webhookCaCert},
		payload: payload,
	})
	if err != nil {
		return nil, err
	}
	return spec.run(ctx)
}

// Build the project: dist/web, dist/node and, when asked, dist/codeAsData, off one install, each built when first used
//
// A change to the sources alone does not re-run the install. The design-tool
// version is read from the installed dependencies.
func (m *LowcodePipeline) Build(
	ctx context.Context,
	// Project to build: a package.json with build:draw and build:node scripts (from another directory or module: pass it, e.g. --source .)
	// +defaultPath="/"
	// +ignore=["**/node_modules", "dist", ".git"]
	source *dagger.Directory,
	// The platform toolkit's npm package (with optional @version) that npx runs for buildCodeAsData (default: @olympeio/toolkit when package.json depends on it)
	// +optional
	toolkit string,
	// Design-tool package whose installed version labels the images, draw_version (default: @olympeio/draw when package.json depends on it)
	// +optional
	drawPackage string,
	// Build the code as data too: project, or bricks (a library of bricks); none by default
	// +optional
	codeAsData CodeAsDataKind,
	// Further argument for buildCodeAsData, passed as it is (repeatable; needs --code-as-data)
	// +optional
	codeAsDataArg []string,
	// Build argument of the images' Dockerfiles, NAME=VALUE (repeatable): FRONTEND_BASE_IMAGE, WEB_USER, DOCUMENT_ROOT, BACKEND_BASE_IMAGE, CODE_AS_DATA_BASE_IMAGE, or one of your Dockerfiles' own
	// +optional
	buildArg []string,
	// Node.js image the builds run in (Node.js 20 or above)
	// +optional
	// +default="node:24"
	nodeImage string,
	// .npmrc for private registries (the platform's packages usually come from one); mounted as a secret, never in a layer
	// +optional
	npmrc *dagger.Secret,
) (_ *Build, err error) {
	defer userErr(&err)
	f := buildFlags{source: source, toolkit: toolkit, drawPackage: drawPackage, codeAsData: codeAsData,
		codeAsDataArg: codeAsDataArg, buildArg: buildArg, nodeImage: nodeImage, npmrc: npmrc}
	p, err := readProject(ctx, f)
	if err != nil {
		return nil, err
	}
	spec, err := newBuildSpec(f, p)
	if err != nil {
		return nil, err
	}
	return spec.run(ctx)
}

// The project with its dependencies installed, ready to build: a container to explore with terminal
func (m *LowcodePipeline) Install(
	ctx context.Context,
	// Project to install
	// +defaultPath="/"
	// +ignore=["**/node_modules", "dist", ".git"]
	source *dagger.Directory,
	// Node.js image (Node.js 20 or above)
	// +optional
	// +default="node:24"
	nodeImage string,
	// .npmrc for private registries; mounted as a secret, never in a layer
	// +optional
	npmrc *dagger.Secret,
) (_ *dagger.Container, err error) {
	defer userErr(&err)
	manifest, image, err := readManifest(ctx, source, nodeImage)
	if err != nil {
		return nil, err
	}
	in, err := install(ctx, source, manifest, image, npmrc, "")
	if err != nil {
		return nil, err
	}
	return in.project, nil
}

// A deployment payload: the reference default, or one you give, with this run's images
//
// Sets the frontend image, appends the backend images and sets the
// code-as-data image only when given; checked against every rule of the
// interface, with every problem at once.
func (m *LowcodePipeline) Payload(
	ctx context.Context,
	// Payload JSON file to start from instead of the reference default
	// +optional
	from *dagger.File,
	// Frontend image reference
	// +optional
	frontendRef string,
	// Backend image reference (repeatable)
	// +optional
	backendRef []string,
	// Code-as-data image reference: only when this run built one
	// +optional
	codeAsDataRef string,
) (_ *Payload, err error) {
	defer userErr(&err)
	return composePayload(ctx, from, payload.Options{FrontendImage: frontendRef, BackendImages: backendRef, CodeAsDataImage: codeAsDataRef})
}

// Save code as data: run the toolkit's snapshot into the project's outputDirs; push commits them to git
//
// The toolkit runs without the configuration's git sections, into emptied
// outputDirs. `changes export --path .` applies the snapshot to your
// checkout; `push` commits each entry that has a git section.
//
// +cache="session"
func (m *LowcodePipeline) Snapshot(
	ctx context.Context,
	// The project: a package.json, and the snapshot configuration
	// +defaultPath="/"
	// +ignore=["**/node_modules", "dist", ".git"]
	source *dagger.Directory,
	// Snapshot configuration file, relative to the project
	// +optional
	// +default="res/snapshot-config.json"
	config string,
	// The platform toolkit's npm package (with optional @version) that npx runs for snapshot (default: @olympeio/toolkit when package.json depends on it)
	// +optional
	toolkit string,
	// The platform's orchestrator the toolkit connects to, [user@]host[:port] (443 is TLS), e.g. ci@draw.example.com:443
	// +optional
	orchestrator string,
	// Password of the orchestrator's user
	// +optional
	orchestratorPassword *dagger.Secret,
	// Accept an outputDir the toolkit leaves empty (push then commits the deletion of the folder)
	// +optional
	allowEmpty bool,
	// Node.js image the toolkit runs in (Node.js 20 or above)
	// +optional
	// +default="node:24"
	nodeImage string,
	// .npmrc for private registries; mounted as a secret, never in a layer
	// +optional
	npmrc *dagger.Secret,
) (_ *Snapshot, err error) {
	defer userErr(&err)
	run, err := newSnapshotRun(snapshotFlags{source: source, config: config, toolkit: toolkit, orchestrator: orchestrator,
		password: orchestratorPassword, nodeImage: nodeImage, npmrc: npmrc}, allowEmpty)
	if err != nil {
		return nil, err
	}
	return run.snapshotOnly(ctx)
}

// Run the toolkit's snapshot with its own git, as the interface describes: the toolkit clones, commits and pushes; the module does no git work and none of push's checks
//
// A --git-token goes into each git.repo's user-info for the toolkit. The
// report says `left to the toolkit` for each entry.
//
// +cache="session"
func (m *LowcodePipeline) ToolkitSnapshot(
	ctx context.Context,
	// The project: a package.json, and the snapshot configuration
	// +defaultPath="/"
	// +ignore=["**/node_modules", "dist", ".git"]
	source *dagger.Directory,
	// Snapshot configuration file, relative to the project
	// +optional
	// +default="res/snapshot-config.json"
	config string,
	// The platform toolkit's npm package (with optional @version) that npx runs for snapshot (default: @olympeio/toolkit when package.json depends on it)
	// +optional
	toolkit string,
	// The platform's orchestrator the toolkit connects to, [user@]host[:port] (443 is TLS), e.g. ci@draw.example.com:443
	// +optional
	orchestrator string,
	// Password of the orchestrator's user
	// +optional
	orchestratorPassword *dagger.Secret,
	// Git access token, put in each git.repo for the toolkit; without it, git.repo's own
	// +optional
	gitToken *dagger.Secret,
	// Node.js image the toolkit runs in (Node.js 20 or above)
	// +optional
	// +default="node:24"
	nodeImage string,
	// .npmrc for private registries; mounted as a secret, never in a layer
	// +optional
	npmrc *dagger.Secret,
) (_ *SnapshotReport, err error) {
	defer userErr(&err)
	// the toolkit has pushed already: an empty folder is its business
	run, err := newSnapshotRun(snapshotFlags{source: source, config: config, toolkit: toolkit, orchestrator: orchestrator,
		password: orchestratorPassword, nodeImage: nodeImage, npmrc: npmrc}, true)
	if err != nil {
		return nil, err
	}
	return run.withToolkitGit(ctx, gitToken)
}

// A stand-in for the platform's webhook, for local runs and tests
//
// Checks method, content type and bearer token (401/403), validates the
// payload (422 with the problems), records what it accepts (GET /_deliveries,
// same token) and answers 200 {"message":"success"}. Plain http: deploy to it
// with --allow-http.
func (m *LowcodePipeline) WebhookReceiver(
	// Bearer token the receiver demands
	webhookToken *dagger.Secret,
	// Port to listen on
	// +optional
	// +default=8080
	port int,
	// Certificate (PEM) to serve https with, e.g. one a private CA signed; plain http without it
	// +optional
	tlsCert *dagger.File,
	// Private key (PEM) of --tls-cert
	// +optional
	tlsKey *dagger.Secret,
) (_ *dagger.Service, err error) {
	defer userErr(&err)
	return webhookReceiver(webhookToken, port, tlsCert, tlsKey)
}

// Run the whole pipeline on the embedded example project: build, publish to a local registry, one deploy to a local webhook receiver
//
// Uses examples/app with its stand-ins for the vendor's tools, registry:3
// and a webhook-receiver as services: no vendor account, no registry of
// yours. Prints the images and the receipt.
//
// +cache="session"
func (m *LowcodePipeline) Demo(ctx context.Context) (_ string, err error) {
	defer userErr(&err)
	return demo(ctx)
}
