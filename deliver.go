package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/prefetch"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/webhook"
)

// Delivery is one run of the pipeline: the build, the images pushed, the payload sent and the webhook's receipt
type Delivery struct {
	// The images pushed and the deployment's receipt, for a person
	Summary string
	// The release and the receipt as JSON, for a script
	Json string
	// The build
	Build *Build
	// The images pushed, pinned by digest
	Release *Release
	// The payload sent
	Payload *Payload
	// The webhook's answer
	Receipt *Receipt
	// Where the call's time went, step by step
	Steps []*StepTime
}

// How long one of a delivery's steps took in its call
type StepTime struct {
	// build (the install, and the design-tool version), publish (the builds, which run when first used, the images and their pushes), payload or deploy
	Step string
	// Its time in milliseconds
	Ms int
}

// Build, publish and deploy in one call: the platform's reference pipeline as one module call, for CI
//
// The same steps as `build … publish … payload … deploy`, composed inside
// the module: every module call costs about 1.5 s before it does anything,
// and this is one. Its flags are those steps' flags (see each step's help);
// it is the one function that takes more than eight, because Dagger has no
// argument objects and a CI run should pay for one call. The payload starts
// from --payload (deploy rules and modes kept in the repository) or the
// reference default, with this run's images pinned by digest. One POST;
// never sent twice. Every flag is checked before anything is built: a bad
// tag, label, payload or token fails at once, all of them together. Its
// summary gives the images, the receipt and each step's time.
//
// +cache="session"
func (m *LowcodePipeline) Deliver(
	ctx context.Context,
	// Project to build: a package.json with build:draw and build:node scripts (from another directory or module: pass it, e.g. --source .)
	// +defaultPath="/"
	// +ignore=["**/node_modules", "dist", ".git"]
	source *dagger.Directory,
	// The platform toolkit's npm package (with optional @version) that npx runs for buildCodeAsData; needed with --code-as-data
	// +optional
	toolkit string,
	// Design-tool package whose installed version labels the images (draw_version); needed to make images
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
	// Everything that can be checked without building is checked first.
	checks := deliveryCheck{codeAsData: codeAsData, toolkit: toolkit, codeAsDataArg: codeAsDataArg, drawPackage: drawPackage,
		repository: repository, tag: tag, platform: platform, registryUsername: registryUsername, hasPassword: registryPassword != nil,
		hasService: registryService != nil, created: created, label: label, webhookUrl: webhookUrl, allowHTTP: allowHttp}
	in, err := checks.run(ctx, payload, webhookToken, webhookCaCert)
	if err != nil {
		return nil, err
	}
	// What publish needs beside the build does not depend on the install:
	// fetch it while the install runs.
	early := readyPublish(ctx, source, buildArg, nodeImage, platform)
	defer func() { early.Done(err != nil) }()
	tags := readTags(ctx, in.targets, registryUsername, registryPassword, registryService)
	// Each step in a span of its own, and timed; the builds run lazily, in
	// publish's.
	var steps []results.StepTime
	b, err := inStep(ctx, &steps, "build", func(ctx context.Context) (*Build, error) {
		return m.Build(ctx, source, toolkit, drawPackage, codeAsData, codeAsDataArg, buildArg, nodeImage, npmrc)
	})
	if err != nil {
		return nil, err
	}
	rel, err := inStep(ctx, &steps, "publish", func(ctx context.Context) (*Release, error) {
		return b.publish(ctx, repository, tag, platform, registryUsername, registryPassword, registryService, created, label, tags)
	})
	if err != nil {
		return nil, err
	}
	// The payload and the deployment use what the check read: the file and
	// the token checked are the ones sent, read once.
	p, err := inStep(ctx, &steps, "payload", func(context.Context) (*Payload, error) {
		return newPayload(in.payloadBase, rel.payloadOptions())
	})
	if err != nil {
		return nil, err
	}
	rec, err := inStep(ctx, &steps, "deploy", func(ctx context.Context) (*Receipt, error) {
		return deployPayload(ctx, []byte(p.Json), deployRequest{url: webhookUrl, token: in.token, allowHTTP: allowHttp,
			connectAttempts: defaultConnectAttempts, caPEM: in.caPEM})
	})
	if err != nil {
		return nil, err
	}
	doc := results.Delivery{Release: rel.document(), Receipt: rec.document(), Steps: steps}
	d := &Delivery{Summary: doc.Text(), Json: results.JSON(doc), Build: b, Release: rel, Payload: p, Receipt: rec}
	for _, st := range steps {
		d.Steps = append(d.Steps, &StepTime{Step: st.Step, Ms: int(st.Ms)})
	}
	return d, nil
}

// inStep runs one of deliver's steps in its span (inSpan) and adds how long
// it took to steps.
func inStep[T any](ctx context.Context, steps *[]results.StepTime, name string, f func(context.Context) (T, error)) (T, error) {
	start := time.Now()
	defer func() { *steps = append(*steps, results.StepTime{Step: name, Ms: time.Since(start).Milliseconds()}) }()
	return inSpan(ctx, name, f)
}

// deliveryCheck is what deliver's later steps (publish, payload, deploy)
// check of their flags, which needs no build.
type deliveryCheck struct {
	codeAsData       CodeAsDataKind
	toolkit          string
	codeAsDataArg    []string
	drawPackage      string
	repository       string
	tag              []string
	platform         []dagger.Platform
	registryUsername string
	hasPassword      bool
	hasService       bool
	created          string
	label            []string
	webhookUrl       string
	allowHTTP        bool
}

// deliveryInputs is what deliver reads of its files and its secret, once:
// checked first, then used by the steps.
type deliveryInputs struct {
	token       secret.Text     // --webhook-token
	caPEM       []byte          // --webhook-ca-cert
	payloadBase []byte          // --payload; nil: the reference default
	targets     []images.Target // where publish will push: each image's references
}

// run reads the files and the secret the checks need, concurrently (each an
// engine round trip), then checks.
func (c deliveryCheck) run(ctx context.Context, payloadFile *dagger.File, webhookToken *dagger.Secret, webhookCaCert *dagger.File) (deliveryInputs, error) {
	var in deliveryInputs
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		token, err := webhookToken.Plaintext(gctx)
		if err != nil {
			return fmt.Errorf("read --webhook-token: %w", err)
		}
		in.token = secret.New(token)
		return nil
	})
	readFile := func(f *dagger.File, flag string, into *[]byte) {
		if f == nil {
			return
		}
		g.Go(func() error {
			text, err := f.Contents(gctx)
			if err != nil {
				return fmt.Errorf("read %s: %w", flag, err)
			}
			*into = []byte(text)
			return nil
		})
	}
	readFile(webhookCaCert, "--webhook-ca-cert", &in.caPEM)
	readFile(payloadFile, "--payload", &in.payloadBase)
	if err := g.Wait(); err != nil {
		return deliveryInputs{}, err
	}
	targets, err := c.check(in.token, in.caPEM, in.payloadBase)
	if err != nil {
		return deliveryInputs{}, err
	}
	in.targets = targets
	return in, nil
}

// check runs, all at once, the checks publish, payload and deploy make of
// their flags before they do anything, so that a bad flag fails in a second
// rather than after the install and the pushes. The payload is composed
// with the references it will carry, digests unknown yet. Build's own
// checks run first thing in build. It returns where publish will push.
func (c deliveryCheck) check(token secret.Text, caPEM, payloadBase []byte) ([]images.Target, error) {
	var errs []error
	// build reports a bad --code-as-data itself
	cad, _ := nodebuild.CodeAsDataStep(string(c.codeAsData), c.toolkit, c.codeAsDataArg)
	targets, err := images.PublishRequest{Repository: c.repository, HasCodeAsData: cad != nil, Tags: c.tag, Platforms: platformNames(c.platform),
		Username: c.registryUsername, HasPassword: c.hasPassword, HasService: c.hasService}.Targets()
	errs = append(errs, err)
	epoch, err := images.ParseCreated(c.created)
	errs = append(errs, err)
	drawVersion := "" // known after the install; without --draw-package, never
	if c.drawPackage != "" {
		drawVersion = "0.0.0"
	}
	_, err = images.Labels(images.Meta{DrawVersion: drawVersion, Created: epoch, Labels: c.label})
	errs = append(errs, err)
	if err == nil && len(targets) > 0 {
		if _, err := newPayload(payloadBase, payloadOptionsOf(images.Placeholders(targets))); err != nil {
			errs = append(errs, fmt.Errorf("--payload: %w", err))
		}
	}
	_, err = prepareWebhook(deployRequest{url: c.webhookUrl, token: token, allowHTTP: c.allowHTTP, caPEM: caPEM})
	errs = append(errs, err, webhook.CheckNotLoopback(c.webhookUrl))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return targets, nil
}

// readTags starts the check of each target's tags in the registry
// (tagCheck) at once: it runs during the build, and a run where nothing
// changed does not wait for the registry after it.
func readTags(ctx context.Context, targets []images.Target, username string, password *dagger.Secret, service *dagger.Service) map[images.Kind]<-chan tagsRead {
	checks := map[images.Kind]<-chan tagsRead{}
	for _, target := range targets {
		if check := tagCheck(ctx, target, username, password, service); check != nil {
			checks[target.Kind] = check
		}
	}
	return checks
}

// readyPublish starts fetching the images the three Dockerfiles start from,
// the base image of each as normalize reads it (for the platforms asked),
// and publish's tool container (its image and the module's binary). What
// fails is left to the step that uses it to report. Finding them (reading
// the Dockerfiles: engine round trips; copying the module's binary) is
// fetched too, so the install starts at once.
func readyPublish(ctx context.Context, source *dagger.Directory, buildArg []string, nodeImage string, platform []dagger.Platform) *prefetch.Group {
	return prefetch.Start(ctx, prefetchTimeout, func(ctx context.Context) error {
		var wg sync.WaitGroup
		for _, fetch := range publishFetches(ctx, source, buildArg, nodeImage, platform) {
			wg.Go(func() { _ = fetch(ctx) })
		}
		wg.Wait()
		return nil
	})
}

// publishFetches are the fetches readyPublish makes.
func publishFetches(ctx context.Context, source *dagger.Directory, buildArg []string, nodeImage string, platform []dagger.Platform) []func(context.Context) error {
	nodeImage, platforms := nodebuild.ImageOrDefault(nodeImage), platformNames(platform)
	dockerfiles := map[images.Kind][]byte{}
	var fetches []func(context.Context) error
	for _, kind := range images.Kinds {
		text, err := dockerfileOf(ctx, source, kind).Contents(ctx)
		if err != nil {
			continue
		}
		dockerfiles[kind] = []byte(text)
		// what normalize reads of the image's base
		if args, err := images.BuildArgs(kind, nodeImage, buildArg); err == nil {
			if ref, err := images.FinalBase([]byte(text), args); err == nil && ref != "" {
				fetches = append(fetches, func(ctx context.Context) error { _, err := baseTarball(ref, platforms).Sync(ctx); return err })
			}
		}
	}
	ctrs := []*dagger.Container{}
	for _, ref := range images.BaseImagesOf(dockerfiles, nodeImage, buildArg) {
		ctrs = append(ctrs, dag.Container().From(ref))
	}
	if tool, err := publishTool(); err == nil {
		ctrs = append(ctrs, tool)
	}
	for _, ctr := range ctrs {
		fetches = append(fetches, func(ctx context.Context) error { _, err := ctr.Sync(ctx); return err })
	}
	return fetches
}

// prefetchTimeout bounds the early fetches: one that hangs must not hold
// deliver, as the step that needs it fetches again.
const prefetchTimeout = 5 * time.Minute
