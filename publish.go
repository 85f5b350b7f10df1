package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/imageref"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/ocipublish"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/steplimit"
)

// registryAccess is how a registry is reached: its host, the login, and the
// Dagger service it runs as, if any.
type registryAccess struct {
	registry string
	username string
	password *dagger.Secret
	service  *dagger.Service
}

// publishFlags are publish's flags as given.
type publishFlags struct {
	repository       string
	tag              []string
	platform         []dagger.Platform
	registryUsername string
	registryPassword *dagger.Secret
	registryService  *dagger.Service
	created          string
	label            []string
}

// publishSpec is publish's flags, checked once (newPublishSpec).
type publishSpec struct {
	targets   []images.Target
	platforms []string
	epoch     time.Time
	labels    images.LabelSet
	access    registryAccess
}

// newPublishSpec checks publish's flags, every problem at once, for a build
// with code as data or not, whose design-tool version is known or not.
func newPublishSpec(f publishFlags, hasCodeAsData, drawVersionKnown bool) (*publishSpec, error) {
	s := &publishSpec{platforms: platformNames(f.platform),
		access: registryAccess{username: f.registryUsername, password: f.registryPassword, service: f.registryService}}
	var errs [4]error
	s.targets, errs[0] = images.PublishRequest{Repository: f.repository, HasCodeAsData: hasCodeAsData, Tags: f.tag, Platforms: s.platforms,
		Username: f.registryUsername, HasPassword: f.registryPassword != nil, HasService: f.registryService != nil}.Targets()
	s.epoch, errs[1] = images.ParseCreated(f.created)
	if !drawVersionKnown {
		errs[2] = images.ErrNoDrawVersion
	}
	s.labels, errs[3] = images.ParseLabels(s.epoch, f.label)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	s.access.registry = s.targets[0].Registry
	return s, nil
}

// pinnedBase is the base image ref, pinned by the digest the engine
// resolved it to (Container.imageRef of its first platform's): what
// normalize keeps the base's first export by (ocipublish.Prepare.BaseRef);
// "" for none, or when the engine does not say, and normalize then keeps
// nothing. The engine pulled the base for the build already; the base's
// tarball is exported from this ref, so both name one image. The ref keeps
// the registry the Dockerfile names: imageRef names the address the engine
// first pulled that digest from, which may be another (tests/engine-facts.md,
// fact 50).
func pinnedBase(ctx context.Context, ref string, platforms []string) string {
	if ref == "" {
		return ""
	}
	if strings.Contains(ref, "@") {
		return ref
	}
	platform := ""
	if len(platforms) > 0 {
		platform = platforms[0]
	}
	var pinned string
	// a failure or the limit only leaves the base's first export unkept
	_ = steplimit.Wait(ctx, steplimit.Pull, "resolve the base image "+ref, func(ctx context.Context) (err error) {
		pinned, err = dag.Container(dagger.ContainerOpts{Platform: dagger.Platform(platform)}).From(ref).ImageRef(ctx)
		return err
	})
	return imageref.PinnedAs(ref, pinned)
}

// baseAt is where the publish tool's container holds the base image's
// tarball (baseTarball), for normalize.
const baseAt = "/run/lowcode-pipeline/base.tar"

// run builds b's images and pushes them. The built platforms are checked
// before anything is pushed.
func (s *publishSpec) run(ctx context.Context, b *Build) (*Release, error) {
	labels := s.labels.With(b.DrawVersion)
	if err := checkAddons(ctx, b.Backend, s.platforms); err != nil {
		return nil, err
	}
	// each recipe reads its Dockerfile (engine round trips): all at once,
	// and all before anything is pushed
	recipes := make([]*recipe, len(s.targets))
	rg, rctx := errgroup.WithContext(ctx)
	for i, target := range s.targets {
		rg.Go(func() (err error) {
			recipes[i], err = newRecipe(rctx, b, target.Kind, labels, nil)
			return err
		})
	}
	if err := rg.Wait(); err != nil {
		return nil, err
	}
	private := Release{Registry: s.access.registry, RegistryUsername: s.access.username, RegistryPassword: s.access.password,
		RegistryService: s.access.service, Images: make([]*dagger.Container, len(images.Kinds))}
	pushed := map[images.Kind][]results.PushedImage{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for i, target := range s.targets {
		variants := recipes[i].variants(s.platforms)
		private.Images[slices.Index(images.Kinds, target.Kind)] = variants[0]
		g.Go(func() error {
			// the image's output is built here too, when first used
			refs, err := inSpan(gctx, "push the "+string(target.Kind)+" image", func(ctx context.Context) ([]results.PushedImage, error) {
				if err := recipes[i].built(ctx, variants); err != nil {
					return nil, err
				}
				pinned := pinnedBase(ctx, recipes[i].base, s.platforms)
				return s.push(ctx, target, variants, baseTarball(cmp.Or(pinned, recipes[i].base), s.platforms), pinned)
			})
			mu.Lock()
			defer mu.Unlock()
			pushed[target.Kind] = refs
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return newRelease(results.Release{Frontend: pushed[images.Frontend], Backend: pushed[images.Backend], CodeAsData: pushed[images.CodeAsData]}, private), nil
}

// byContent is f known to the engine by its bytes (Directory.file keys
// its result on them, tests/engine-facts.md): an image rebuilt the same,
// as an unchanged output's is whenever a build re-ran beside a changed one,
// finds its normalize cached.
func byContent(f *dagger.File) *dagger.File {
	return dag.Directory().WithFile("image.tar", f).File("image.tar")
}

// push publishes one image (its platform variants) under every tag with
// oci-publish (the module's binary, internal/commands), in two execs:
// normalize, which the engine caches (every time in the image clamped to
// the epoch, the platforms checked), then push, which runs on every call:
// it reads each tag, pushes or tags only where the registry lacks the image,
// and reads every tag back. It is the one place that reaches the registry,
// a Dagger service too.
func (s *publishSpec) push(ctx context.Context, target images.Target, variants []*dagger.Container, base *dagger.File, baseRef string) ([]results.PushedImage, error) {
	const tarball, normalizedAt = "/run/lowcode-pipeline/image.tar", "/run/lowcode-pipeline/normalized"
	prep := ocipublish.Prepare{Kind: string(target.Kind), Tarball: tarball, Created: ocipublish.Epoch(s.epoch), Platforms: s.platforms, Cache: cacheDir}
	a := s.access
	req := ocipublish.Request{Kind: string(target.Kind), Refs: target.Refs(), Username: a.username, Timeout: publishLimit.String()}
	tool, err := publishTool()
	if err != nil {
		return nil, err
	}
	normalizer := tool
	if base != nil {
		prep.BaseTarball, prep.BaseRef, normalizer = baseAt, baseRef, tool.WithMountedFile(baseAt, base)
	}
	pusher := tool
	if a.password != nil {
		pusher = pusher.WithSecretVariable("REGISTRY_PASSWORD", a.password)
	}
	if a.service != nil {
		req.Connect = ocipublish.ConnectAddress(a.registry, "registry")
		pusher = withServiceBinding(pusher, "registry", a.service)
	}
	prepare, err := json.Marshal(prep)
	if err != nil {
		return nil, err
	}
	request, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	normalized := normalizer.
		WithMountedCache(cacheDir, dag.CacheVolume(cacheVolume)).
		// gzip: normalize reads each layer it re-encodes or rewrites from it, and reads no zstd
		WithMountedFile(tarball, byContent(variants[0].AsTarball(dagger.ContainerAsTarballOpts{PlatformVariants: variants[1:], ForcedCompression: dagger.ImageLayerCompressionGzip}))).
		WithNewFile("/run/lowcode-pipeline/prepare.json", string(prepare)).
		WithExec(steplimit.Within(steplimit.Tool, []string{"oci-publish", "normalize", "-request", "/run/lowcode-pipeline/prepare.json", "-out", "/out"})).
		Directory("/out")
	// publish is never cached: push anew. The push keeps its own limit
	// (publishLimit, in the request); the pulls before it and the
	// normalize, this wait's.
	var out string
	err = steplimit.Wait(ctx, steplimit.Sum(steplimit.Pull, steplimit.Tool, publishLimit), pushWhat(target.Kind), func(ctx context.Context) (err error) {
		out, err = rerun(pusher.WithMountedDirectory(normalizedAt, normalized).WithNewFile("/run/lowcode-pipeline/request.json", string(request))).
			WithExec([]string{"oci-publish", "push", "-request", "/run/lowcode-pipeline/request.json", "-layout", normalizedAt}).
			Stdout(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("publish the %s image: %w", target.Kind, explain(err))
	}
	var result ocipublish.Result
	if err := json.Unmarshal([]byte(out), &result); err != nil {
		return nil, fmt.Errorf("publish the %s image: unreadable result: %w", target.Kind, err)
	}
	return pushedImages(target, result.Pushed)
}

// pushWhat names the wait for an image's push in the error of one stopped
// at its limit.
func pushWhat(kind images.Kind) string {
	return "the " + string(kind) + " image's push (the pull of its tool's image, its normalize, then oci-publish push)"
}

// pushedImages are the references oci-publish reports, as the release's:
// the target's refs, in its order, each pinned by the digest pushed.
func pushedImages(target images.Target, pushed []ocipublish.Pushed) ([]results.PushedImage, error) {
	refs := target.Refs()
	if len(pushed) != len(refs) {
		return nil, fmt.Errorf("publish the %s image: %d references pushed of %d", target.Kind, len(pushed), len(refs))
	}
	out := make([]results.PushedImage, len(pushed))
	for i, p := range pushed {
		if _, err := v1.NewHash(p.Digest); err != nil {
			return nil, fmt.Errorf("publish the %s image: the digest pushed: %w", target.Kind, err)
		}
		if p.Ref != refs[i]+"@"+p.Digest {
			return nil, fmt.Errorf("publish the %s image: pushed %s, not %s", target.Kind, fielderr.Quote(p.Ref), refs[i])
		}
		out[i] = results.PushedImage{Ref: p.Ref, Repository: target.Repository, Tag: target.Tags[i], Digest: p.Digest, Outcome: p.Outcome}
	}
	return out, nil
}

// publishTool is the container oci-publish runs in, with the command that
// bounds a step's time (normalize's; push bounds its own, Request.Timeout).
func publishTool() (*dagger.Container, error) {
	return withTool(limited(dag.Container().From(runtimeImage)), "oci-publish")
}

// checkAddons refuses a multi-platform backend that carries native addons
// built for the engine's platform only.
func checkAddons(ctx context.Context, backend *dagger.Directory, platforms []string) error {
	if len(platforms) == 0 {
		return nil
	}
	engine, err := dag.DefaultPlatform(ctx)
	if err != nil {
		return err
	}
	addons, err := backend.Glob(ctx, "**/*.node")
	if err != nil {
		return err
	}
	return images.CheckNativeAddons(addons, string(engine), platforms)
}
