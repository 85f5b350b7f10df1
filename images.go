package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/ocipublish"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/supplychain"
)

// Release is the images pushed to a registry, each named by digest
type Release struct {
	// Each image's references, one a line, for a person
	Summary string
	// The whole release as JSON, for a script
	Json string
	// The frontend image, one reference per tag
	Frontend []*Reference
	// The backend image, one reference per tag
	Backend []*Reference
	// The code-as-data image, one reference per tag; empty when the build has no code as data
	CodeAsData []*Reference
	// SPDX JSON SBOM of each image (frontend.spdx.json, backend.spdx.json, codeasdata.spdx.json) with --sbom; empty otherwise
	Sboms *dagger.Directory
	// Whether each pushed digest was signed with --cosign-key (and its SBOM attested, with --sbom)
	Signed bool
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
	// Write an SPDX JSON SBOM of each image (syft), returned in sboms and, with --cosign-key, attested on the pushed digest
	// +optional
	sbom bool,
	// Cosign private key (cosign generate-key-pair) to sign each pushed digest with; verify with cosign verify --key cosign.pub
	// +optional
	cosignKey *dagger.Secret,
	// Password of --cosign-key
	// +optional
	cosignPassword *dagger.Secret,
) (*Release, error) {
	platforms := make([]string, len(platform))
	for i, p := range platform {
		platforms[i] = string(p)
	}
	req := images.PublishRequest{
		Registry:     registry,
		Repositories: map[images.Kind]string{images.Frontend: frontendRepository, images.Backend: backendRepository},
		Tags:         tag, Platforms: platforms, Username: registryUsername, HasPassword: registryPassword != nil,
		HasCosignKey: cosignKey != nil, HasCosignPassword: cosignPassword != nil,
		HasCodeAsData: b.HasCodeAsData, CodeAsDataRepository: codeAsDataRepository,
	}
	targets, err := req.Targets()
	if err != nil {
		return nil, err
	}
	if err := b.checkAddons(ctx, platforms); err != nil {
		return nil, err
	}
	labels, err := b.labels()
	if err != nil {
		return nil, err
	}
	recipes := make(map[images.Kind]*recipe, len(targets))
	for _, target := range targets {
		if recipes[target.Kind], err = b.recipe(ctx, target.Kind, labels); err != nil {
			return nil, err
		}
	}
	created, err := images.ParseCreated(b.Pipeline.Created)
	if err != nil {
		return nil, err
	}
	push := &pushOptions{epoch: ocipublish.Epoch(created), registry: registry, username: registryUsername, password: registryPassword, service: registryService,
		sbom: sbom, cosignKey: cosignKey, cosignPassword: cosignPassword}
	pushed := make(map[images.Kind][]*Reference)
	sboms := dag.Directory()
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, target := range targets {
		g.Go(func() error {
			refs, sbomFile, err := push.push(gctx, target, recipes[target.Kind], platforms)
			mu.Lock()
			defer mu.Unlock()
			pushed[target.Kind] = refs
			if sbomFile != nil {
				sboms = sboms.WithFile(supplychain.SBOMName(string(target.Kind)), sbomFile)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return newRelease(pushed, sboms, cosignKey != nil, sbom), nil
}

func newRelease(pushed map[images.Kind][]*Reference, sboms *dagger.Directory, signed, sbom bool) *Release {
	doc := results.Release{Signed: signed, Frontend: refDocs(pushed[images.Frontend]), Backend: refDocs(pushed[images.Backend]),
		CodeAsData: refDocs(pushed[images.CodeAsData])}
	for _, k := range images.Kinds {
		if sbom && len(pushed[k]) > 0 {
			doc.Sboms = append(doc.Sboms, supplychain.SBOMName(string(k)))
		}
	}
	return &Release{Summary: doc.Text(), Json: results.JSON(doc),
		Frontend: pushed[images.Frontend], Backend: pushed[images.Backend], CodeAsData: pushed[images.CodeAsData], Sboms: sboms, Signed: signed}
}

func refDocs(refs []*Reference) []results.Reference {
	out := make([]results.Reference, len(refs))
	for i, r := range refs {
		out[i] = results.Reference{Ref: r.Ref, Repository: r.Repository, Tag: r.Tag, Digest: r.Digest}
	}
	return out
}

// publishTimeout bounds the push of one image, all its tags.
const publishTimeout = "15m"

type pushOptions struct {
	epoch                     time.Time // every time in the images is clamped to it
	registry, username        string
	password                  *dagger.Secret
	service                   *dagger.Service
	sbom                      bool
	cosignKey, cosignPassword *dagger.Secret
}

// push builds one image for every platform and publishes it under every
// tag with cmd/oci-publish: every time in it clamped to --created, the
// platforms checked before anything is pushed. With the supply-chain
// options it writes its SBOM and signs its digest.
func (o *pushOptions) push(ctx context.Context, target images.Target, r *recipe, platforms []string) ([]*Reference, *dagger.File, error) {
	each := platforms
	if len(each) == 0 {
		each = []string{""} // the engine's platform
	}
	var variants []*dagger.Container
	for _, p := range each {
		variants = append(variants, r.build(dagger.Platform(p)))
	}
	req := ocipublish.Request{Kind: string(target.Kind), Tarball: "/run/lowcode-pipeline/image.tar", Created: o.epoch,
		Platforms: platforms, Refs: target.Refs(), Username: o.username, Timeout: publishTimeout}
	tool := dag.Container().From(runtimeImage).
		WithFile("/usr/local/bin/oci-publish", toolBinary("oci-publish")).
		WithMountedFile(req.Tarball, variants[0].AsTarball(dagger.ContainerAsTarballOpts{PlatformVariants: variants[1:]}))
	if o.password != nil {
		tool = tool.WithSecretVariable("REGISTRY_PASSWORD", o.password)
	}
	if o.service != nil {
		req.Connect, req.Insecure = ocipublish.ConnectAddress(o.registry, "registry"), true
		tool = tool.WithServiceBinding("registry", o.service)
	}
	request, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	// publish is never cached: push anew
	out, err := rerun(tool.WithNewFile("/run/lowcode-pipeline/request.json", string(request))).
		WithExec([]string{"oci-publish", "-request", "/run/lowcode-pipeline/request.json"}).
		Stdout(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("publish the %s image: %w", target.Kind, err)
	}
	var result ocipublish.Result
	if err := json.Unmarshal([]byte(out), &result); err != nil {
		return nil, nil, fmt.Errorf("publish the %s image: unreadable result: %w", target.Kind, err)
	}
	var refs []*Reference
	for _, p := range result.Pushed {
		pinned, err := images.ParsePinned(p.Ref)
		if err != nil {
			return nil, nil, err
		}
		refs = append(refs, &Reference{Ref: pinned.Ref, Repository: pinned.Repository, Tag: pinned.Tag, Digest: pinned.Digest})
	}
	var sbomFile *dagger.File
	if o.sbom {
		sbomFile = sbomOf(variants[0])
	}
	if o.cosignKey != nil {
		if err := sign(ctx, refs[0].Repository+"@"+refs[0].Digest, sbomFile, o); err != nil {
			return nil, nil, err
		}
	}
	return refs, sbomFile, nil
}

// sbomOf is the SPDX JSON SBOM of one image, by syft.
func sbomOf(image *dagger.Container) *dagger.File {
	return dag.Container().From(runtimeImage).
		WithFile("/usr/local/bin/syft", goTool(supplychain.Syft)).
		WithMountedFile("/image.tar", image.AsTarball()).
		WithExec(supplychain.SBOMCommand("/image.tar", "/sbom.spdx.json")).
		File("/sbom.spdx.json")
}

// sign signs a pushed digest with cosign, and attests its SBOM when given.
func sign(ctx context.Context, ref string, sbomFile *dagger.File, o *pushOptions) error {
	s := supplychain.Signing{Ref: ref, Registry: o.registry}
	ctr := dag.Container().From(runtimeImage).
		WithExec([]string{"apk", "add", "--no-cache", "socat", "ca-certificates"}).
		WithFile("/usr/local/bin/cosign", goTool(supplychain.Cosign)).
		WithMountedSecret(supplychain.KeyPath, o.cosignKey)
	if o.cosignPassword != nil {
		ctr = ctr.WithSecretVariable(supplychain.PasswordEnv, o.cosignPassword)
	} else {
		ctr = ctr.WithEnvVariable(supplychain.PasswordEnv, "")
	}
	if o.password != nil {
		s.Username = o.username
		ctr = ctr.WithSecretVariable(supplychain.RegistryPWEnv, o.password)
	}
	if sbomFile != nil {
		s.SBOM = "/sbom.spdx.json"
		ctr = ctr.WithMountedFile(s.SBOM, sbomFile)
	}
	if o.service != nil {
		s.ServiceHost = "registry"
		ctr = ctr.WithServiceBinding(s.ServiceHost, o.service)
	}
	script, err := s.Script()
	if err != nil {
		return err
	}
	// publish is never cached: sign anew
	_, err = rerun(ctr).WithExec([]string{"sh", "-c", script}).Sync(ctx)
	if err != nil {
		return fmt.Errorf("sign %s: %w", ref, err)
	}
	return nil
}

// goTool builds a Go command from its public module at the pinned version.
func goTool(pkg string) *dagger.File {
	path, _, _ := strings.Cut(pkg, "@")
	name := path[strings.LastIndex(path, "/")+1:]
	return goBuilder().
		WithEnvVariable("GOBIN", "/out").
		WithExec(supplychain.BuildCommand(pkg)).
		File("/out/" + name)
}

// goBuilder is the container the module's Go tools are built in: static
// binaries, with the module and build caches shared between builds.
func goBuilder() *dagger.Container {
	return dag.Container().From(goImage).
		WithMountedCache("/go/pkg/mod", dag.CacheVolume("lowcode-pipeline-gomod")).
		WithMountedCache("/root/.cache/go-build", dag.CacheVolume("lowcode-pipeline-gobuild")).
		WithEnvVariable("CGO_ENABLED", "0")
}

// image builds one image of the build for one platform.
func (b *Build) image(ctx context.Context, kind images.Kind, platform dagger.Platform) (*dagger.Container, error) {
	labels, err := b.labels()
	if err != nil {
		return nil, err
	}
	r, err := b.recipe(ctx, kind, labels)
	if err != nil {
		return nil, err
	}
	return r.build(platform), nil
}

// labels are the images' labels, computed once per call; a warning about
// them goes to the log once.
func (b *Build) labels() ([][2]string, error) {
	m := b.Pipeline
	created, err := images.ParseCreated(m.Created)
	if err != nil {
		return nil, err
	}
	labels, warnings, err := images.Labels(images.Meta{
		DrawVersion: b.DrawVersion, SourceURL: m.VcsUrl, Revision: m.VcsRevision, Version: m.ImageVersion, Created: created,
	})
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, "warning:", w)
	}
	return labels, err
}

// recipe is how one kind of image is built, whatever the platform: the
// project's docker/<kind>.Dockerfile (or this module's copy) over a context
// that holds only its build output, with its build arguments and labels.
type recipe struct {
	kind       images.Kind
	dist       *dagger.Directory
	dockerfile *dagger.File
	args       []dagger.BuildArg
	labels     [][2]string
}

// recipe checks the image's settings and finds its Dockerfile, once.
func (b *Build) recipe(ctx context.Context, kind images.Kind, labels [][2]string) (*recipe, error) {
	m := b.Pipeline
	if kind == images.CodeAsData && !b.HasCodeAsData {
		return nil, fmt.Errorf("the build has no code as data: call build with --code-as-data")
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
	r := &recipe{kind: kind, labels: labels, dockerfile: m.Source.File(kind.Dockerfile()),
		dist: map[images.Kind]*dagger.Directory{images.Frontend: b.Web, images.Backend: b.Node, images.CodeAsData: b.CodeAsData}[kind]}
	if ok, err := m.Source.Exists(ctx, kind.Dockerfile()); err != nil || !ok {
		r.dockerfile = dag.CurrentModule().Source().File(kind.Dockerfile())
	}
	for _, a := range args {
		r.args = append(r.args, dagger.BuildArg{Name: a[0], Value: a[1]})
	}
	return r, nil
}

// build is the image for one platform ("" for the engine's).
func (r *recipe) build(platform dagger.Platform) *dagger.Container {
	ctr := dag.Directory().
		WithDirectory(r.kind.SourcesPath(), r.dist).
		WithFile(r.kind.Dockerfile(), r.dockerfile).
		DockerBuild(dagger.DirectoryDockerBuildOpts{Dockerfile: r.kind.Dockerfile(), BuildArgs: r.args, Platform: platform})
	for _, l := range r.labels {
		ctr = ctr.WithLabel(l[0], l[1])
	}
	return ctr
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
