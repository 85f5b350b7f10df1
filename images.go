package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
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
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/steplimit"
	"dagger/lowcode-pipeline/internal/supplychain"
)

// Release is the images pushed to a registry, each named by digest
type Release struct {
	// Each image's references, one a line, for a person
	Summary string
	// The whole release as JSON, for a script
	Json string
	// The frontend image, one reference per tag
	Frontend []*PushedImage
	// The backend image, one reference per tag
	Backend []*PushedImage
	// The code-as-data image, one reference per tag; empty when the build has no code as data
	CodeAsData []*PushedImage
	// Whether each pushed digest was signed with cosign (sign)
	Signed bool

	// +private
	Images []*dagger.Container // the pushed images (the first platform's), in images.Kinds order, nil when not pushed

	// +private
	Registry string
	// +private
	RegistryUsername string
	// +private
	RegistryPassword *dagger.Secret
	// +private
	RegistryService *dagger.Service

	early map[images.Kind]<-chan tagsRead // tags' checks started before publish, by kind (not part of the object)
}

// PushedImage is one image pushed under one tag
type PushedImage struct {
	// registry/repository:tag@sha256:…, the reference a payload carries
	Ref string
	// registry/repository
	Repository string
	// The tag it was pushed under
	Tag string
	// The image's digest, sha256:…
	Digest string
	// How this run left the tag: pushed, tagged (pointed at the image, which the registry held already under another tag) or unchanged (it held the image already)
	Outcome string
}

// The frontend image: docker/frontend.Dockerfile over dist/web (SOURCES_PATH=dist/web), labelled draw_version
func (b *Build) FrontendImage(
	ctx context.Context,
	// Platform to build for (default: the engine's)
	// +optional
	platform dagger.Platform,
) (_ *dagger.Container, err error) {
	defer userErr(&err)
	return b.image(ctx, images.Frontend, platform)
}

// The backend image: docker/backend.Dockerfile over dist/node (SOURCES_PATH=dist/node), labelled draw_version
func (b *Build) BackendImage(
	ctx context.Context,
	// Platform to build for (default: the engine's)
	// +optional
	platform dagger.Platform,
) (_ *dagger.Container, err error) {
	defer userErr(&err)
	return b.image(ctx, images.Backend, platform)
}

// The code-as-data image: docker/codeasdata.Dockerfile over dist/codeAsData (SOURCES_PATH=dist/codeAsData), labelled draw_version
func (b *Build) CodeAsDataImage(
	ctx context.Context,
	// Platform to build for (default: the engine's)
	// +optional
	platform dagger.Platform,
) (_ *dagger.Container, err error) {
	defer userErr(&err)
	return b.image(ctx, images.CodeAsData, platform)
}

// Build the images and push them, every time in them clamped to --created; the release names each by digest, as the payload carries it
//
// The repository, tags and platforms are checked before anything is built,
// and the built platforms before anything is pushed. The three images are
// built and pushed concurrently; the code-as-data image exactly when the
// build has code as data. Same commit, same --created: same digests, on
// any runner. An image the registry already holds under one of its tags is
// not pushed again: its other tags are pointed at it (a registry service is
// always pushed to).
//
// +cache="session"
func (b *Build) Publish(
	ctx context.Context,
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
) (_ *Release, err error) {
	defer userErr(&err)
	return b.publish(ctx, repository, tag, platform, registryUsername, registryPassword, registryService, created, label, nil)
}

// publish is Publish, with the tags' checks (tagCheck) already started by
// the caller for some kinds of image (deliver starts them before the build);
// the others start here.
func (b *Build) publish(ctx context.Context, repository string, tag []string, platform []dagger.Platform, registryUsername string,
	registryPassword *dagger.Secret, registryService *dagger.Service, created string, label []string, early map[images.Kind]<-chan tagsRead) (*Release, error) {
	platforms := platformNames(platform)
	targets, err := images.PublishRequest{Repository: repository, HasCodeAsData: b.HasCodeAsData, Tags: tag, Platforms: platforms,
		Username: registryUsername, HasPassword: registryPassword != nil, HasService: registryService != nil}.Targets()
	if err != nil {
		return nil, err
	}
	epoch, err := images.ParseCreated(created)
	if err != nil {
		return nil, err
	}
	labels, err := images.Labels(images.Meta{DrawVersion: b.DrawVersion, Created: epoch, Labels: label})
	if err != nil {
		return nil, err
	}
	if err := b.checkAddons(ctx, platforms); err != nil {
		return nil, err
	}
	// each recipe reads its Dockerfile (engine round trips): all at once,
	// and all before anything is pushed
	recipes := make([]*recipe, len(targets))
	rg, rctx := errgroup.WithContext(ctx)
	for i, target := range targets {
		rg.Go(func() (err error) { recipes[i], err = b.recipe(rctx, target.Kind, labels); return err })
	}
	if err := rg.Wait(); err != nil {
		return nil, err
	}
	rel := &Release{Registry: targets[0].Registry(), RegistryUsername: registryUsername, RegistryPassword: registryPassword,
		RegistryService: registryService, Images: make([]*dagger.Container, len(images.Kinds)), early: early}
	pushed := map[images.Kind][]*PushedImage{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for i, target := range targets {
		variants := recipes[i].variants(platforms)
		rel.Images[slices.Index(images.Kinds, target.Kind)] = variants[0]
		g.Go(func() error {
			// the image's output is built here too, when first used
			refs, err := inSpan(gctx, "push the "+string(target.Kind)+" image", func(ctx context.Context) ([]*PushedImage, error) {
				if err := recipes[i].checkOutput(ctx, variants[0]); err != nil {
					return nil, err
				}
				return rel.push(ctx, target, variants, baseTarball(recipes[i].base, platforms), ocipublish.Epoch(epoch), platforms)
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
	rel.Frontend, rel.Backend, rel.CodeAsData = pushed[images.Frontend], pushed[images.Backend], pushed[images.CodeAsData]
	rel.render()
	return rel, nil
}

// The SPDX JSON SBOM of each pushed image (frontend.spdx.json, backend.spdx.json, codeasdata.spdx.json), by syft
func (r *Release) Sboms(
	// syft's published image, whose /syft is used (pin it by digest: name:tag@sha256:…)
	// +optional
	// +default="docker.io/anchore/syft:v1.51.0@sha256:678bfa565b60f747aac0f8e964fe5588a24445b8d0a480e91f6efd70020dfbb0"
	syftImage string,
	// Build syft from its Go module at the same version instead (slow on an empty engine cache)
	// +optional
	toolsFromSource bool,
) (_ *dagger.Directory, err error) {
	defer userErr(&err)
	syft, err := tool("--syft-image", syftImage, supplychain.SyftBinary, supplychain.Syft, toolsFromSource)
	if err != nil {
		return nil, err
	}
	out := dag.Directory()
	for i, kind := range images.Kinds {
		if r.Images[i] != nil {
			out = out.WithFile(supplychain.SBOMName(string(kind)), sbomOf(syft, r.Images[i]))
		}
	}
	return out, nil
}

// Sign each pushed digest with cosign, and attest its SBOM with --attest-sbom; verify with cosign verify --key cosign.pub
//
// +cache="session"
func (r *Release) Sign(
	ctx context.Context,
	// Cosign private key (cosign generate-key-pair)
	cosignKey *dagger.Secret,
	// Password of --cosign-key
	// +optional
	cosignPassword *dagger.Secret,
	// Attest each image's SPDX SBOM (syft) on its digest too
	// +optional
	attestSbom bool,
	// cosign's published image, whose /ko-app/cosign is used (pin it by digest: name:tag@sha256:…)
	// +optional
	// +default="gcr.io/projectsigstore/cosign:v2.6.5@sha256:ad281047f85c5e1fc6ffbc30c2b55be3b07b4032bef715a12122ce5829619aca"
	cosignImage string,
	// syft's published image, for --attest-sbom (default: docker.io/anchore/syft:v1.51.0@sha256:678bfa565b60f747aac0f8e964fe5588a24445b8d0a480e91f6efd70020dfbb0)
	// +optional
	syftImage string,
	// Build cosign (and syft) from their Go modules at the same versions instead (slow on an empty engine cache)
	// +optional
	toolsFromSource bool,
) (_ *Release, err error) {
	defer userErr(&err)
	cosign, err := tool("--cosign-image", cosignImage, supplychain.CosignBinary, supplychain.Cosign, toolsFromSource)
	if err != nil {
		return nil, err
	}
	var sboms *dagger.Directory
	switch {
	case attestSbom:
		if syftImage == "" {
			syftImage = supplychain.SyftImage
		}
		if sboms, err = r.Sboms(syftImage, toolsFromSource); err != nil {
			return nil, err
		}
	case syftImage != "":
		return nil, errors.New("--syft-image needs --attest-sbom: syft runs only to attest the SBOMs")
	}
	signed := *r
	g, gctx := errgroup.WithContext(ctx)
	for kind, refs := range map[images.Kind][]*PushedImage{images.Frontend: r.Frontend, images.Backend: r.Backend, images.CodeAsData: r.CodeAsData} {
		if len(refs) == 0 {
			continue
		}
		var sbom *dagger.File
		if sboms != nil {
			sbom = sboms.File(supplychain.SBOMName(string(kind)))
		}
		g.Go(func() error {
			return r.sign(gctx, cosign, refs[0].Repository+"@"+refs[0].Digest, sbom, cosignKey, cosignPassword)
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	signed.Signed = true
	signed.render()
	return &signed, nil
}

// tool is a supply-chain tool's binary: copied out of its published image
// (a download), or built from its Go module.
func tool(flag, image, binary, pkg string, fromSource bool) (*dagger.File, error) {
	if fromSource {
		return goTool(pkg), nil
	}
	if err := imageref.ValidateDeployable(image); err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, fielderr.Quote(image), err)
	}
	return dag.Container().From(image).File(binary), nil
}

// render sets the release's summary and JSON from its fields.
func (r *Release) render() {
	doc := r.document()
	r.Summary, r.Json = doc.Text(), results.JSON(doc)
}

// document is the release as results renders it.
func (r *Release) document() results.Release {
	return results.Release{Signed: r.Signed, Frontend: imageDocs(r.Frontend), Backend: imageDocs(r.Backend), CodeAsData: imageDocs(r.CodeAsData)}
}

func imageDocs(refs []*PushedImage) []results.PushedImage {
	out := make([]results.PushedImage, len(refs))
	for i, r := range refs {
		out[i] = results.PushedImage{Ref: r.Ref, Repository: r.Repository, Tag: r.Tag, Digest: r.Digest, Outcome: r.Outcome}
	}
	return out
}

// publishTool is the container oci-publish runs in.
func publishTool() (*dagger.Container, error) {
	return withTool(dag.Container().From(runtimeImage), "oci-publish")
}

// publishTimeout bounds the push of one image, all its tags.
const publishTimeout = "15m"

// Whether a layer holds a time after --created depends on its digest and
// that time only: normalize remembers it in a cache volume, so a publish
// whose build changed does not read the base image's layers again.
const (
	verdictsDir   = "/var/cache/lowcode-pipeline/layer-verdicts"
	verdictsCache = "lowcode-pipeline-layer-verdicts"
)

// push publishes one image (its platform variants) under every tag with
// oci-publish (the module's binary, internal/commands), in two steps:
// normalize (every time in the image clamped to epoch, the platforms checked
// before anything is pushed) is an exec the engine caches, since its output
// depends on its inputs only; push, which reads every tag back at the
// digest, runs on every call unless the registry already holds the
// normalized digest under one of the tags (tagCheck, read while the image
// builds; the others are then pointed at it from here: pushedAlready). So a
// run where nothing changed starts no container to push, new tags or not.
func (r *Release) push(ctx context.Context, target images.Target, variants []*dagger.Container, base *dagger.File, epoch time.Time, platforms []string) ([]*PushedImage, error) {
	const tarball, baseAt, normalizedAt = "/run/lowcode-pipeline/image.tar", "/run/lowcode-pipeline/base.tar", "/run/lowcode-pipeline/normalized"
	check := r.early[target.Kind]
	if check == nil {
		check = tagCheck(ctx, target, r.RegistryUsername, r.RegistryPassword, r.RegistryService)
	}
	prep := ocipublish.Prepare{Kind: string(target.Kind), Tarball: tarball, Created: epoch, Platforms: platforms, Verdicts: verdictsDir}
	tool, err := publishTool()
	if err != nil {
		return nil, err
	}
	normalizer := tool
	if base != nil {
		prep.BaseTarball, normalizer = baseAt, tool.WithMountedFile(baseAt, base)
	}
	prepare, err := json.Marshal(prep)
	if err != nil {
		return nil, err
	}
	normalized := normalizer.
		WithMountedCache(verdictsDir, dag.CacheVolume(verdictsCache)).
		WithMountedFile(tarball, variants[0].AsTarball(dagger.ContainerAsTarballOpts{PlatformVariants: variants[1:]})).
		WithNewFile("/run/lowcode-pipeline/prepare.json", string(prepare)).
		WithExec([]string{"oci-publish", "normalize", "-request", "/run/lowcode-pipeline/prepare.json", "-out", "/out"}).
		Directory("/out")
	if check != nil {
		if refs, err := r.pushedAlready(ctx, target, normalized, check); err != nil || refs != nil {
			return refs, err
		}
	}
	req := ocipublish.Request{Kind: string(target.Kind), Refs: target.Refs(), Username: r.RegistryUsername, Timeout: publishTimeout}
	pusher := tool.WithMountedDirectory(normalizedAt, normalized)
	if r.RegistryPassword != nil {
		pusher = pusher.WithSecretVariable("REGISTRY_PASSWORD", r.RegistryPassword)
	}
	if r.RegistryService != nil {
		req.Connect, req.Insecure = ocipublish.ConnectAddress(r.Registry, "registry"), true
		pusher = pusher.WithServiceBinding("registry", r.RegistryService)
	}
	request, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	// publish is never cached: push anew
	out, err := rerun(pusher.WithNewFile("/run/lowcode-pipeline/request.json", string(request))).
		WithExec([]string{"oci-publish", "push", "-request", "/run/lowcode-pipeline/request.json", "-layout", normalizedAt}).
		Stdout(ctx)
	if err != nil {
		return nil, fmt.Errorf("publish the %s image: %w", target.Kind, explain(err))
	}
	var result ocipublish.Result
	if err := json.Unmarshal([]byte(out), &result); err != nil {
		return nil, fmt.Errorf("publish the %s image: unreadable result: %w", target.Kind, err)
	}
	return pushedImages(result.Pushed)
}

// pushedImages are the references oci-publish reports, as the release's.
func pushedImages(pushed []ocipublish.Pushed) ([]*PushedImage, error) {
	var refs []*PushedImage
	for _, p := range pushed {
		pinned, err := images.ParsePinned(p.Ref)
		if err != nil {
			return nil, err
		}
		refs = append(refs, &PushedImage{Ref: pinned.Ref, Repository: pinned.Repository, Tag: pinned.Tag, Digest: pinned.Digest, Outcome: p.Outcome})
	}
	return refs, nil
}

// tagCheckTimeout bounds the reading of an image's tags in the registry
// before its push (tagCheck), and their retag (pushedAlready).
const tagCheckTimeout = 10 * time.Second

// tagsRead is what tagCheck read: the digest each tag holds, or why not,
// and the login it read them with.
type tagsRead struct {
	target ocipublish.Target
	held   []v1.Hash
	err    error
}

// tagCheck reads, from the module's own process and starting at once, so
// while the image builds, the digest the registry holds under each of the
// target's tags (ocipublish.Tagged, with the push's login). None for a
// registry run as a Dagger service: only the pushing container reaches it,
// by the name it is bound under there.
func tagCheck(ctx context.Context, target images.Target, username string, password *dagger.Secret, service *dagger.Service) <-chan tagsRead {
	if service != nil {
		return nil
	}
	read := make(chan tagsRead, 1)
	go func() {
		t := ocipublish.Target{Refs: target.Refs(), Username: username, Timeout: tagCheckTimeout}
		if password != nil {
			pctx, cancel := context.WithTimeout(ctx, tagCheckTimeout)
			plain, err := password.Plaintext(pctx)
			cancel()
			if err != nil {
				read <- tagsRead{err: fmt.Errorf("the registry password could not be read within %s", tagCheckTimeout)}
				return
			}
			t.Password = secret.New(plain)
		}
		held, err := ocipublish.Tagged(ctx, t)
		read <- tagsRead{target: t, held: held, err: err}
	}()
	return read
}

// pushedAlready is the target's references when the registry already holds
// the normalized image under one of its tags (what check read): under every
// tag, nothing is done; under some, the others are pointed at it from here
// (ocipublish.Retag), no container started. nil when it must be pushed, the
// retag failing included. Either way it says which in the log.
func (r *Release) pushedAlready(ctx context.Context, target images.Target, normalized *dagger.Directory, check <-chan tagsRead) ([]*PushedImage, error) {
	index, err := normalized.File("index.json").Contents(ctx)
	if err != nil {
		return nil, fmt.Errorf("publish the %s image: %w", target.Kind, explain(err))
	}
	digest, err := ocipublish.LayoutDigest([]byte(index))
	if err != nil {
		return nil, fmt.Errorf("publish the %s image: %w", target.Kind, err)
	}
	var read tagsRead
	select {
	case read = <-check:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return withoutPush(ctx, target.Kind, digest, read, os.Stderr)
}

// withoutPush is pushedAlready's decision once the digest is known: what
// ocipublish.PlanPush says, the retag done, each step's line in log.
func withoutPush(ctx context.Context, kind images.Kind, digest v1.Hash, read tagsRead, log io.Writer) ([]*PushedImage, error) {
	plan := ocipublish.PlanPush(string(kind), digest, read.target.Refs, read.held, read.err)
	fmt.Fprintln(log, plan.Why)
	switch {
	case plan.Push:
		return nil, nil
	case len(plan.Retag) > 0:
		pushed, err := ocipublish.Retag(ctx, read.target, digest, plan.Retag)
		if err != nil {
			fmt.Fprintf(log, "the %s image: pushing (the retag failed: %v)\n", kind, err)
			return nil, nil
		}
		return pushedImages(pushed)
	}
	return pushedImages(ocipublish.AlreadyPushed(read.target.Refs, digest))
}

// sign signs a pushed digest with cosign, and attests its SBOM when given.
func (r *Release) sign(ctx context.Context, cosign *dagger.File, ref string, sbomFile *dagger.File, key, password *dagger.Secret) error {
	s := supplychain.Signing{Ref: ref, Registry: r.Registry}
	ctr := limited(dag.Container().From(runtimeImage)).
		WithExec(steplimit.Within(steplimit.Tool, []string{"apk", "add", "--no-cache", "socat", "ca-certificates"})).
		WithFile("/usr/local/bin/cosign", cosign).
		WithMountedSecret(supplychain.KeyPath, key)
	if password != nil {
		ctr = ctr.WithSecretVariable(supplychain.PasswordEnv, password)
	} else {
		ctr = ctr.WithEnvVariable(supplychain.PasswordEnv, "")
	}
	if r.RegistryPassword != nil {
		s.Username = r.RegistryUsername
		ctr = ctr.WithSecretVariable(supplychain.RegistryPWEnv, r.RegistryPassword)
	}
	if sbomFile != nil {
		s.SBOM = "/sbom.spdx.json"
		ctr = ctr.WithMountedFile(s.SBOM, sbomFile)
	}
	if r.RegistryService != nil {
		s.ServiceHost = "registry"
		ctr = ctr.WithServiceBinding(s.ServiceHost, r.RegistryService)
	}
	script, err := s.Script()
	if err != nil {
		return err
	}
	// signing is never cached: sign anew; the script is a file, so the
	// engine's progress shows its name, not its text
	const signScript = "/run/lowcode-pipeline/sign.sh"
	if _, err := rerun(ctr.WithNewFile(signScript, script)).WithExec(steplimit.Within(steplimit.Tool, []string{"sh", signScript})).Sync(ctx); err != nil {
		return fmt.Errorf("sign %s: %w", ref, explain(err))
	}
	return nil
}

// sbomOf is the SPDX JSON SBOM of one image, by syft; lazy.
func sbomOf(syft *dagger.File, image *dagger.Container) *dagger.File {
	return limited(dag.Container().From(runtimeImage)).
		WithFile("/usr/local/bin/syft", syft).
		WithMountedFile("/image.tar", image.AsTarball()).
		WithExec(steplimit.Within(steplimit.Tool, supplychain.SBOMCommand("/image.tar", "/sbom.spdx.json"))).
		File("/sbom.spdx.json")
}

// image builds one image of the build for one platform.
func (b *Build) image(ctx context.Context, kind images.Kind, platform dagger.Platform) (*dagger.Container, error) {
	labels, err := images.Labels(images.Meta{DrawVersion: b.DrawVersion})
	if err != nil {
		return nil, err
	}
	r, err := b.recipe(ctx, kind, labels)
	if err != nil {
		return nil, err
	}
	img := r.build(platform)
	return img, r.checkOutput(ctx, img)
}

// recipe is how one kind of image is built, whatever the platform: the
// project's docker/<kind>.Dockerfile (or this module's copy) over the project
// with its build output at SOURCES_PATH, with its build arguments and labels.
type recipe struct {
	kind       images.Kind
	project    *dagger.Directory // the context, without any build output
	dist       *dagger.Directory
	dockerfile *dagger.File
	args       []dagger.BuildArg
	labels     [][2]string
	base       string               // the image the Dockerfile's last stage starts from; "" for none known
	copies     []images.SourcesCopy // where its final stage copies $SOURCES_PATH
}

// recipe checks the image's settings and finds its Dockerfile, once.
func (b *Build) recipe(ctx context.Context, kind images.Kind, labels [][2]string) (*recipe, error) {
	if kind == images.CodeAsData && !b.HasCodeAsData {
		return nil, errors.New("the build has no code as data: call build with --code-as-data project or bricks")
	}
	args, err := images.BuildArgs(kind, b.NodeImage, b.BuildArg)
	if err != nil {
		return nil, err
	}
	// b.Source is the project as every container sees it (scrubbed): no
	// snapshot token in a Dockerfile's COPY either
	r := &recipe{kind: kind, labels: labels, dockerfile: dockerfileOf(ctx, b.Source, kind),
		project: b.Source, // without nodebuild.ProjectExcludes, as install left it
		dist:    map[images.Kind]*dagger.Directory{images.Frontend: b.Frontend, images.Backend: b.Backend, images.CodeAsData: b.CodeAsData}[kind]}
	for _, a := range args {
		r.args = append(r.args, dagger.BuildArg{Name: a[0], Value: a[1]})
	}
	// A Dockerfile that does not read is the image build's to report.
	if text, err := r.dockerfile.Contents(ctx); err == nil {
		r.base, _ = images.FinalBase([]byte(text), args)
		r.copies, _ = images.SourcesCopies([]byte(text), args)
	}
	return r, nil
}

// checkOutput refuses an image whose copy of $SOURCES_PATH does not hold the
// build output (images.CheckSourcesCopy): the vendor's template declares no
// ARG SOURCES_PATH, and then copies the whole project without a word.
func (r *recipe) checkOutput(ctx context.Context, img *dagger.Container) error {
	if len(r.copies) == 0 {
		return nil
	}
	want, err := r.dist.Entries(ctx)
	if err != nil {
		return explain(err)
	}
	for _, c := range r.copies {
		if c.Dest == "" {
			continue
		}
		got, err := img.Directory(c.Dest).Entries(ctx)
		if err != nil {
			return err
		}
		if err := images.CheckSourcesCopy(r.kind.Dockerfile(), r.kind.SourcesPath(), c, got, want); err != nil {
			return err
		}
	}
	return nil
}

// platformNames are the platforms as strings.
func platformNames(platform []dagger.Platform) []string {
	out := make([]string, len(platform))
	for i, p := range platform {
		out[i] = string(p)
	}
	return out
}

// baseTarball is the image ref for each platform ("" the engine's), as
// normalize reads what a built image has of it (ocipublish.Base); nil
// without a ref.
func baseTarball(ref string, platforms []string) *dagger.File {
	if ref == "" {
		return nil
	}
	if len(platforms) == 0 {
		platforms = []string{""}
	}
	ctrs := make([]*dagger.Container, len(platforms))
	for i, p := range platforms {
		ctrs[i] = dag.Container(dagger.ContainerOpts{Platform: dagger.Platform(p)}).From(ref)
	}
	return ctrs[0].AsTarball(dagger.ContainerAsTarballOpts{PlatformVariants: ctrs[1:]})
}

// dockerfileOf is the project's docker/<kind>.Dockerfile, or this module's
// copy when the project has none.
func dockerfileOf(ctx context.Context, source *dagger.Directory, kind images.Kind) *dagger.File {
	if ok, err := source.Exists(ctx, kind.Dockerfile()); err == nil && ok {
		return source.File(kind.Dockerfile())
	}
	return dag.CurrentModule().Source().File(kind.Dockerfile())
}

// build is the image for one platform ("" for the engine's). The context is
// the project, as for `docker build` in it, so a Dockerfile can copy its
// own files (docker/nginx.conf); BuildKit keys each COPY on what it copies.
func (r *recipe) build(platform dagger.Platform) *dagger.Container {
	ctr := r.project.
		WithDirectory(r.kind.SourcesPath(), r.dist).
		WithFile(r.kind.Dockerfile(), r.dockerfile).
		DockerBuild(dagger.DirectoryDockerBuildOpts{Dockerfile: r.kind.Dockerfile(), BuildArgs: r.args, Platform: platform})
	for _, l := range r.labels {
		ctr = ctr.WithLabel(l[0], l[1])
	}
	return ctr
}

// variants is the image for each platform asked ("" the engine's).
func (r *recipe) variants(platforms []string) []*dagger.Container {
	if len(platforms) == 0 {
		return []*dagger.Container{r.build("")}
	}
	out := make([]*dagger.Container, len(platforms))
	for i, p := range platforms {
		out[i] = r.build(dagger.Platform(p))
	}
	return out
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
	addons, err := b.Backend.Glob(ctx, "**/*.node")
	if err != nil {
		return err
	}
	return images.CheckNativeAddons(addons, string(engine), platforms)
}
