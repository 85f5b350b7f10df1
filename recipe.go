package main

import (
	"context"
	"errors"
	"fmt"
	"path"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/steplimit"
)

// imagePlan is what one kind of image's Dockerfile says, whatever the
// platform: read once (planImage).
type imagePlan struct {
	kind images.Kind
	read bool        // its text was read; else what follows is unknown
	own  bool        // the project has its own docker/<kind>.Dockerfile; else this module's copy
	args [][2]string // its build arguments
	base string      // the image its last stage starts from; "" for none known
	// where its final stage copies $SOURCES_PATH
	copies []images.SourcesCopy
	// the paths of the project it reads (images.ContextPaths), when known
	// for sure (narrow): its build is then given only those
	context []string
	narrow  bool
	// its copies of $SOURCES_PATH take the whole context, as the vendor's
	// template's do (images.OutputIsContext): the context is the build
	// output alone
	outputContext bool
	problem       error // why it cannot be built as it is, found before the build
}

// planImage reads the kind's Dockerfile in source (the project's, or this
// module's copy). A Dockerfile that does not read is the image build's to
// report: the plan then knows no base and no copy.
func planImage(ctx context.Context, source *dagger.Directory, kind images.Kind, backendBase string, args images.Args) *imagePlan {
	p := &imagePlan{kind: kind, args: args.For(kind, backendBase)}
	if ok, err := source.Exists(ctx, kind.Dockerfile()); err == nil && ok {
		p.own = true
	}
	if text, err := p.dockerfile(source).Contents(ctx); err == nil {
		p.read = true
		p.base, _ = images.FinalBase([]byte(text), p.args)
		p.copies, _ = images.SourcesCopies([]byte(text), p.args)
		p.context, p.narrow = images.ContextPaths([]byte(text), p.args)
		if p.outputContext = images.OutputIsContext(p.copies); p.outputContext {
			if read := images.ProjectRead([]byte(text), p.args); read != 0 {
				p.problem = images.OutputContextProblem(kind.Dockerfile(), read, p.copies[0])
			}
		}
	}
	return p
}

// dockerfile is the plan's Dockerfile in source.
func (p *imagePlan) dockerfile(source *dagger.Directory) *dagger.File {
	if p.own {
		return source.File(p.kind.Dockerfile())
	}
	return dag.CurrentModule().Source().File(p.kind.Dockerfile())
}

// dockerignore is what the engine's Dockerfile build reads of the context
// to leave out of it, as docker build does (tests/engine-facts.md, fact 30).
const dockerignore = ".dockerignore"

// recipe is how one kind of image of a build is made: the plan's Dockerfile
// over the project with its build output at SOURCES_PATH, with its labels.
type recipe struct {
	*imagePlan
	project *dagger.Directory // the context, without any build output
	dist    *dagger.Directory
	labels  [][2]string
}

// newRecipe is b's image of kind, from plan (nil or unread: read here).
func newRecipe(ctx context.Context, b *Build, kind images.Kind, labels [][2]string, plan *imagePlan) (*recipe, error) {
	if kind == images.CodeAsData && !b.HasCodeAsData {
		return nil, errors.New("the build has no code as data: call build with --code-as-data project or bricks")
	}
	if plan == nil || !plan.read {
		// b.Source is the project as every container sees it (scrubbed): no
		// snapshot token in a Dockerfile's COPY either
		plan = planImage(ctx, b.Source, kind, b.BackendBase, images.Args(b.BuildArg))
	}
	if plan.problem != nil {
		return nil, plan.problem
	}
	return &recipe{imagePlan: plan, labels: labels,
		project: b.Source, // without nodebuild.ProjectExcludes, as install left it
		dist:    map[images.Kind]*dagger.Directory{images.Frontend: b.Frontend, images.Backend: b.Backend, images.CodeAsData: b.CodeAsData}[kind]}, nil
}

// build is the image for one platform ("" for the engine's). The context is
// the project, as for `docker build` in it, so a Dockerfile can copy its
// own files (docker/nginx.conf); when the plan knows every path the
// Dockerfile reads, only those (and .dockerignore): the engine keys that
// context on its content, so an image whose output and files did not change
// is not built again when another file of the project did. A Dockerfile
// whose copies of $SOURCES_PATH take the whole context (outputContext,
// engine-facts 57) gets the build output as its context, the Dockerfile's
// folder beside it left out of the copy by a .dockerignore (engine-facts 30,
// 58); an output holding a folder of that name would lack it in the image,
// which built() refuses.
func (r *recipe) build(platform dagger.Platform) *dagger.Container {
	args := make([]dagger.BuildArg, len(r.args))
	for i, a := range r.args {
		args[i] = dagger.BuildArg{Name: a[0], Value: a[1]}
	}
	var buildContext *dagger.Directory
	switch {
	case r.outputContext:
		// the Dockerfile's folder whole: a file left out leaves its folder in the copy
		buildContext = r.dist.WithNewFile(dockerignore, path.Dir(r.kind.Dockerfile())+"\n"+dockerignore+"\n")
	case r.narrow:
		buildContext = r.project.Filter(dagger.DirectoryFilterOpts{Include: append([]string{dockerignore}, r.context...)}).
			WithDirectory(r.kind.SourcesPath(), r.dist)
	default:
		buildContext = r.project.WithDirectory(r.kind.SourcesPath(), r.dist)
	}
	ctr := buildContext.
		WithFile(r.kind.Dockerfile(), r.dockerfile(r.project)).
		DockerBuild(dagger.DirectoryDockerBuildOpts{Dockerfile: r.kind.Dockerfile(), BuildArgs: args, Platform: platform})
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

// built waits for the image of every platform asked (variants), then
// refuses one whose copy of $SOURCES_PATH does not hold the build output
// (images.CheckSourcesCopy): the vendor's template declares no ARG
// SOURCES_PATH, and then copies the whole project without a word. The
// output is built first, under its own command's time limit; the image's
// build from its Dockerfile (its FROM's pull, then its RUN steps, the
// project's commands) then under a pull's and a project command's
// (steplimit.Wait: no exec of the module's bounds them).
func (r *recipe) built(ctx context.Context, variants []*dagger.Container) error {
	want, err := r.dist.Entries(ctx)
	if err != nil {
		return explain(err)
	}
	what := fmt.Sprintf("the %s image's build (%s: its FROM's pull, then its RUN steps)", r.kind, r.kind.Dockerfile())
	return steplimit.Wait(ctx, steplimit.Sum(steplimit.Pull, steplimit.Project), what, func(ctx context.Context) error {
		g, gctx := errgroup.WithContext(ctx)
		for _, v := range variants[1:] {
			g.Go(func() error { _, err := v.Sync(gctx); return err })
		}
		// reading what the first copied builds it: no call more where
		// nothing changed
		g.Go(func() error { return r.checkCopies(gctx, variants[0], want) })
		return g.Wait()
	})
}

// checkCopies builds img and checks each copy of $SOURCES_PATH in it
// against the output's entries (want).
func (r *recipe) checkCopies(ctx context.Context, img *dagger.Container, want []string) error {
	checked := false
	for _, c := range r.copies {
		if c.Dest == "" {
			continue
		}
		checked = true
		got, err := img.Directory(c.Dest).Entries(ctx)
		if err != nil {
			return err
		}
		if err := images.CheckSourcesCopy(r.kind.Dockerfile(), r.kind.SourcesPath(), c, got, want); err != nil {
			return err
		}
	}
	if !checked {
		_, err := img.Sync(ctx)
		return err
	}
	return nil
}

// baseTarball is the image ref for each platform ("" the engine's), as
// normalize reads what a built image has of it (ocipublish.Base); nil
// without a ref. Its layers are in gzip, as the built image's tarball has
// them (push): a base layer the engine holds in zstd (the Go SDK image's,
// engine-facts 41) is converted once (engine-facts 47).
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
	return ctrs[0].AsTarball(dagger.ContainerAsTarballOpts{PlatformVariants: ctrs[1:], ForcedCompression: dagger.ImageLayerCompressionGzip})
}
