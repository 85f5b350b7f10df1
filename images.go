package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
)

// Release is the images pushed to a registry, each named by digest
type Release struct {
	// The frontend image, one reference per tag
	Frontend []*Reference
	// The backend image, one reference per tag
	Backend []*Reference
	// The code-as-data image, one reference per tag; empty when the build has no code as data
	CodeAsData []*Reference
}

// Reference is one pushed image under one tag
type Reference struct {
	// registry/repository:tag@sha256:…, the reference a payload carries
	Ref string
	// registry/repository
	Repository string
	// The tag it was pushed under
	Tag string
	// The image's digest, sha256:…
	Digest string
}

// The frontend image: docker/frontend.Dockerfile over dist/web (SOURCES_PATH=dist/web), labelled draw_version
func (b *Build) FrontendImage(
	ctx context.Context,
	// Platform to build for (default: the engine's)
	// +optional
	platform dagger.Platform,
) (*dagger.Container, error) {
	return b.image(ctx, images.Frontend, platform)
}

// The backend image: docker/backend.Dockerfile over dist/node (SOURCES_PATH=dist/node), labelled draw_version
func (b *Build) BackendImage(
	ctx context.Context,
	// Platform to build for (default: the engine's)
	// +optional
	platform dagger.Platform,
) (*dagger.Container, error) {
	return b.image(ctx, images.Backend, platform)
}

// The code-as-data image: docker/codeasdata.Dockerfile over dist/codeAsData (SOURCES_PATH=dist/codeAsData), labelled draw_version
func (b *Build) CodeAsDataImage(
	ctx context.Context,
	// Platform to build for (default: the engine's)
	// +optional
	platform dagger.Platform,
) (*dagger.Container, error) {
	return b.image(ctx, images.CodeAsData, platform)
}

// Build the images and push them; the release names each by digest, as the payload carries them
//
// The registry, repositories, tags and platforms are checked before anything
// is pushed. The code-as-data image is published exactly when the build has
// code as data.
//
// +cache="never"
func (b *Build) Publish(
	ctx context.Context,
	// Registry host[:port], e.g. registry.example.com
	registry string,
	// Repository of the frontend image within the registry, e.g. team/app-frontend
	frontendRepository string,
	// Repository of the backend image within the registry, e.g. team/app-backend
	backendRepository string,
	// Tag to push each image under (repeatable; the first is the one the payload carries)
	tag []string,
	// Repository of the code-as-data image (required when the build has code as data; unused otherwise)
	// +optional
	codeAsDataRepository string,
	// Platform of a multi-platform image (repeatable): linux/amd64, linux/arm64 (default: the engine's)
	// +optional
	platform []dagger.Platform,
	// Registry user name
	// +optional
	registryUsername string,
	// Registry password or token
	// +optional
	registryPassword *dagger.Secret,
	// A registry running as a Dagger service (tests, demos): the registry host is routed to it; localhost:PORT speaks plain http
	// +optional
	registryService *dagger.Service,
) (*Release, error) {
	platforms := make([]string, len(platform))
	for i, p := range platform {
		platforms[i] = string(p)
	}
	req := images.PublishRequest{
		Registry:     registry,
		Repositories: map[images.Kind]string{images.Frontend: frontendRepository, images.Backend: backendRepository},
		Tags:         tag, Platforms: platforms, Username: registryUsername, HasPassword: registryPassword != nil,
	}
	if err := images.CodeAsDataRepository(b.HasCodeAsData, codeAsDataRepository); err != nil {
		return nil, err
	}
	if b.HasCodeAsData {
		req.Repositories[images.CodeAsData] = codeAsDataRepository
	}
	targets, err := req.Targets()
	if err != nil {
		return nil, err
	}
	if err := b.checkAddons(ctx, platforms); err != nil {
		return nil, err
	}
	push := pushOptions{registry: registry, username: registryUsername, password: registryPassword, service: registryService}
	pushed := make(map[images.Kind][]*Reference)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, target := range targets {
		g.Go(func() error {
			refs, err := b.push(gctx, target, platform, push)
			mu.Lock()
			pushed[target.Kind] = refs
			mu.Unlock()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return &Release{Frontend: pushed[images.Frontend], Backend: pushed[images.Backend], CodeAsData: pushed[images.CodeAsData]}, nil
}

type pushOptions struct {
	registry, username string
	password           *dagger.Secret
	service            *dagger.Service
}

// push builds one image for every platform and pushes it under every tag.
func (b *Build) push(ctx context.Context, target images.Target, platforms []dagger.Platform, o pushOptions) ([]*Reference, error) {
	if len(platforms) == 0 {
		platforms = []dagger.Platform{""}
	}
	var variants []*dagger.Container
	for _, p := range platforms {
		ctr, err := b.image(ctx, target.Kind, p)
		if err != nil {
			return nil, err
		}
		if o.password != nil {
			ctr = ctr.WithRegistryAuth(o.registry, o.username, o.password)
		}
		variants = append(variants, ctr)
	}
	var refs []*Reference
	for _, ref := range target.Refs() {
		out, err := variants[0].Publish(ctx, ref, dagger.ContainerPublishOpts{PlatformVariants: variants[1:], RegistryService: o.service})
		if err != nil {
			return nil, fmt.Errorf("push %s: %w", ref, err)
		}
		pinned, err := images.ParsePinned(out)
		if err != nil {
			return nil, err
		}
		if len(platforms) > 1 || platforms[0] != "" {
			asked := make([]string, len(platforms))
			for i, p := range platforms {
				asked[i] = string(p)
			}
			if err := checkPushed(ctx, pinned.Ref, asked, o.service); err != nil {
				return nil, err
			}
		}
		refs = append(refs, &Reference{Ref: pinned.Ref, Repository: pinned.Repository, Tag: pinned.Tag, Digest: pinned.Digest})
	}
	return refs, nil
}

// image builds one image from the project's docker/<kind>.Dockerfile (or
// this module's copy) over a context that holds only its build output.
func (b *Build) image(ctx context.Context, kind images.Kind, platform dagger.Platform) (*dagger.Container, error) {
	m := b.Pipeline
	if kind == images.CodeAsData && !b.HasCodeAsData {
		return nil, fmt.Errorf("the build has no code as data: call build with --code-as-data")
	}
	created, err := images.ParseCreated(m.Created)
	if err != nil {
		return nil, err
	}
	labels, warnings, err := images.Labels(images.Meta{
		DrawVersion: b.DrawVersion, SourceURL: m.VcsUrl, Revision: m.VcsRevision, Version: m.ImageVersion, Created: created,
	})
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, "warning:", w)
	}
	settings := images.Settings{FrontendBaseImage: m.FrontendBaseImage, WebUser: m.WebUser, DocumentRoot: m.DocumentRoot,
		NodeImage: m.NodeImage, BackendBaseImage: m.BackendBaseImage}
	extra, err := settings.BuildArgs(kind)
	if err != nil {
		return nil, err
	}
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
	dist := map[images.Kind]*dagger.Directory{images.Frontend: b.Web, images.Backend: b.Node, images.CodeAsData: b.CodeAsData}[kind]
	ctr := dag.Directory().
		WithDirectory(kind.SourcesPath(), dist).
		WithFile(kind.Dockerfile(), dockerfile).
		DockerBuild(dagger.DirectoryDockerBuildOpts{Dockerfile: kind.Dockerfile(), BuildArgs: buildArgs, Platform: platform})
	for _, l := range labels {
		ctr = ctr.WithLabel(l[0], l[1])
	}
	return ctr, nil
}

// checkAddons refuses a multi-platform backend that carries native addons
// built for the engine's platform only.
func (b *Build) checkAddons(ctx context.Context, platforms []string) error {
	if len(platforms) == 0 {
		return nil
	}
	engine, err := dag.DefaultPlatform(ctx)
	if err != nil {
		return err
	}
	addons, err := b.Node.Glob(ctx, "**/*.node")
	if err != nil {
		return err
	}
	return images.CheckNativeAddons(addons, string(engine), platforms)
}

// checkPushed reads a pushed image back for every platform asked for, and
// fails naming those the registry does not have.
func checkPushed(ctx context.Context, ref string, platforms []string, service *dagger.Service) error {
	got := map[string]string{}
	for _, p := range platforms {
		pulled, err := dag.Container(dagger.ContainerOpts{Platform: dagger.Platform(p)}).
			From(ref, dagger.ContainerFromOpts{RegistryService: service}).
			Platform(ctx)
		if err == nil {
			got[p] = string(pulled)
		}
	}
	return images.CheckPlatforms(ref, platforms, got)
}
