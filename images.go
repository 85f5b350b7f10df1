package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
)

// The frontend image: docker/frontend.Dockerfile over dist/web (SOURCES_PATH=dist/web), labelled draw_version
func (m *LowcodePipeline) FrontendImage(
	ctx context.Context,
	// Base image: the vendor's frontend base image at tag stable (default: a public web server)
	// +optional
	baseImage string,
	// Platform to build for (default: the engine's)
	// +optional
	platform dagger.Platform,
) (*dagger.Container, error) {
	return m.localImage(ctx, images.Frontend, m.Frontend, platform, baseImageArg(baseImage))
}

// The backend image: docker/backend.Dockerfile over dist/node (SOURCES_PATH=dist/node), labelled draw_version
func (m *LowcodePipeline) BackendImage(
	ctx context.Context,
	// Platform to build for (default: the engine's)
	// +optional
	platform dagger.Platform,
) (*dagger.Container, error) {
	return m.localImage(ctx, images.Backend, m.Backend, platform, nil)
}

// The code-as-data image: docker/codeasdata.Dockerfile over dist/codeAsData (SOURCES_PATH=dist/codeAsData), labelled draw_version
func (m *LowcodePipeline) CodeAsDataImage(
	ctx context.Context,
	// Build the code as data as a library of bricks
	// +optional
	bricks bool,
	// Platform to build for (default: the engine's)
	// +optional
	platform dagger.Platform,
) (*dagger.Container, error) {
	build := func(ctx context.Context) (*dagger.Directory, error) { return m.CodeAsData(ctx, bricks, nil) }
	return m.localImage(ctx, images.CodeAsData, build, platform, nil)
}

// Build and push the images; prints the references pinned by digest (registry/repo:tag@sha256:…), which are what the payload carries
//
// Names, tags and platforms are checked before anything is built. The
// code-as-data image is built and pushed only with --code-as-data.
//
// +cache="never"
func (m *LowcodePipeline) Publish(
	ctx context.Context,
	// Registry host[:port], e.g. registry.example.com
	registry string,
	// Repository of the frontend image within the registry, e.g. team/app-frontend
	frontendRepository string,
	// Repository of the backend image within the registry
	backendRepository string,
	// Tags to push each image under (the first one goes into the payload)
	tags []string,
	// Registry user name
	// +optional
	username string,
	// Registry password or token
	// +optional
	password *dagger.Secret,
	// Also build and push the code-as-data image
	// +optional
	codeAsData bool,
	// Repository of the code-as-data image (required with --code-as-data)
	// +optional
	codeAsDataRepository string,
	// Build the code as data as a library of bricks
	// +optional
	bricks bool,
	// Platforms of a multi-platform image: linux/amd64, linux/arm64 (default: the engine's)
	// +optional
	platforms []string,
	// Frontend base image: the vendor's frontend base image at tag stable
	// +optional
	frontendBaseImage string,
) (string, error) {
	pub, targets, err := newPublish(registry, frontendRepository, backendRepository, tags, username, password,
		codeAsData, codeAsDataRepository, bricks, platforms, frontendBaseImage)
	if err != nil {
		return "", err
	}
	published, err := m.publish(ctx, pub, targets)
	if err != nil {
		return "", err
	}
	out, err := json.MarshalIndent(published, "", "  ")
	return string(out) + "\n", err
}

// publishArgs is what publish and ship pass to the image pushes.
type publishArgs struct {
	req                images.PublishRequest
	password           *dagger.Secret
	codeAsData, bricks bool
	frontendBase       string
}

// newPublish gathers the flags publish and ship share, and checks them before
// anything is built; the code-as-data image is a target only when asked for.
func newPublish(registry, frontendRepository, backendRepository string, tags []string, username string, password *dagger.Secret,
	codeAsData bool, codeAsDataRepository string, bricks bool, platforms []string, frontendBase string) (publishArgs, []images.Target, error) {
	pub := publishArgs{
		req: images.PublishRequest{
			Registry:     registry,
			Repositories: map[images.Kind]string{images.Frontend: frontendRepository, images.Backend: backendRepository},
			Tags:         tags, Platforms: platforms, Username: username, HasPassword: password != nil,
		},
		password: password, codeAsData: codeAsData, bricks: bricks, frontendBase: frontendBase,
	}
	if codeAsData {
		pub.req.Repositories[images.CodeAsData] = codeAsDataRepository
	}
	targets, err := pub.req.Targets()
	return pub, targets, err
}

// publish builds once and pushes every target concurrently.
func (m *LowcodePipeline) publish(ctx context.Context, a publishArgs, targets []images.Target) (images.Published, error) {
	dist, err := m.Build(ctx, a.codeAsData, a.bricks)
	if err != nil {
		return images.Published{}, err
	}
	labels, err := m.imageLabels(ctx, time.Now().UTC().Truncate(time.Second))
	if err != nil {
		return images.Published{}, err
	}
	pinned := make(map[images.Kind][]string)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, target := range targets {
		g.Go(func() error {
			refs, err := m.publishImage(gctx, target, dist.Directory(target.Kind.SourcesPath()), a, labels)
			mu.Lock()
			pinned[target.Kind] = refs
			mu.Unlock()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return images.Published{}, err
	}
	return images.PublishedRefs(pinned), nil
}

func (m *LowcodePipeline) publishImage(ctx context.Context, target images.Target, dist *dagger.Directory, a publishArgs, labels [][2]string) ([]string, error) {
	var extra map[string]string
	if target.Kind == images.Frontend {
		extra = baseImageArg(a.frontendBase)
	}
	platforms := a.req.Platforms
	if len(platforms) == 0 {
		platforms = []string{""}
	}
	var variants []*dagger.Container
	for _, p := range platforms {
		ctr, err := m.image(ctx, target.Kind, dist, dagger.Platform(p), extra, labels)
		if err != nil {
			return nil, err
		}
		if a.password != nil {
			ctr = ctr.WithRegistryAuth(a.req.Registry, a.req.Username, a.password)
		}
		variants = append(variants, ctr)
	}
	var refs []string
	for _, ref := range target.Refs() {
		pinned, err := variants[0].Publish(ctx, ref, dagger.ContainerPublishOpts{PlatformVariants: variants[1:]})
		if err != nil {
			return nil, fmt.Errorf("push %s: %w", ref, err)
		}
		if err := images.CheckPinned(pinned); err != nil {
			return nil, err
		}
		refs = append(refs, pinned)
	}
	return refs, nil
}

// localImage builds one image of this run's build output without pushing
// it; it carries no created label, so an unchanged project stays cached.
func (m *LowcodePipeline) localImage(ctx context.Context, kind images.Kind, build func(context.Context) (*dagger.Directory, error),
	platform dagger.Platform, extra map[string]string) (*dagger.Container, error) {
	dist, err := build(ctx)
	if err != nil {
		return nil, err
	}
	labels, err := m.imageLabels(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	return m.image(ctx, kind, dist, platform, extra, labels)
}

// imageLabels computes the labels once per run: draw_version from the
// installed design-tool package, and the OCI ones.
func (m *LowcodePipeline) imageLabels(ctx context.Context, created time.Time) ([][2]string, error) {
	drawVersion, err := m.DrawVersion(ctx)
	if err != nil {
		return nil, err
	}
	return images.Labels(images.Meta{
		DrawVersion: drawVersion, SourceURL: m.SourceUrl, Revision: m.Revision, Created: created, Version: m.ImageVersion,
	})
}

// image builds one image from the project's docker/<kind>.Dockerfile (or
// this module's copy) over a context that holds only its build output.
func (m *LowcodePipeline) image(ctx context.Context, kind images.Kind, dist *dagger.Directory, platform dagger.Platform,
	extra map[string]string, labels [][2]string) (*dagger.Container, error) {
	args, err := kind.BuildArgs(extra)
	if err != nil {
		return nil, err
	}
	dockerfile := m.Source.File(kind.Dockerfile())
	if ok, err := m.Source.Exists(ctx, kind.Dockerfile()); err != nil || !ok {
		dockerfile = dag.CurrentModule().Source().File(kind.Dockerfile())
	}
	buildArgs := make([]dagger.BuildArg, len(args))
	for i, a := range args {
		buildArgs[i] = dagger.BuildArg{Name: a[0], Value: a[1]}
	}
	ctr := dag.Directory().
		WithDirectory(kind.SourcesPath(), dist).
		WithFile(kind.Dockerfile(), dockerfile).
		DockerBuild(dagger.DirectoryDockerBuildOpts{Dockerfile: kind.Dockerfile(), BuildArgs: buildArgs, Platform: platform})
	for _, l := range labels {
		ctr = ctr.WithLabel(l[0], l[1])
	}
	return ctr, nil
}

func baseImageArg(image string) map[string]string {
	if image == "" {
		return nil
	}
	return map[string]string{"BASE_IMAGE": image}
}
