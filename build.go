package main

import (
	"context"
	"errors"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/drawversion"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
	"dagger/lowcode-pipeline/internal/steplimit"
)

// Build is the project built: its three outputs, each built when first used, and the design-tool version that labels its images
type Build struct {
	// What the build makes, for a person
	Summary string
	// What the build makes as JSON, for a script
	Json string
	// dist/web, the frontend: npm run build:draw
	Frontend *dagger.Directory
	// dist/node, the backend: npm run build:node
	Backend *dagger.Directory
	// dist/codeAsData: npx <toolkit> buildCodeAsData; empty unless built with --code-as-data
	CodeAsData *dagger.Directory
	// The whole dist directory: web, node and, when built, codeAsData
	Dist *dagger.Directory
	// Whether the code as data is built (--code-as-data project or bricks)
	HasCodeAsData bool
	// Installed version of the design-tool package (--draw-package, else @olympeio/draw): the images' draw_version label; empty for a project without one
	DrawVersion string
	// What the project may want to change, e.g. no lock file to pin its dependencies
	Warnings []string

	// +private
	Source *dagger.Directory // the project as every container sees it (scrubbed)
	// +private
	BackendBase string // the backend's base unless --build-arg gives one: --node-image's (nodebuild.Image.Slim)
	// +private
	BuildArg []string // --build-arg, checked (images.Args)
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
// Everything is checked before anything is built; the three images are built
// and pushed concurrently. Same commit, same --created: same digests. An
// image a tag already holds is not pushed again.
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
	spec, err := newPublishSpec(publishFlags{repository: repository, tag: tag, platform: platform, registryUsername: registryUsername,
		registryPassword: registryPassword, registryService: registryService, created: created, label: label}, b.HasCodeAsData, b.DrawVersion != "")
	if err != nil {
		return nil, err
	}
	return spec.run(ctx, b)
}

// image builds one image of the build for one platform.
func (b *Build) image(ctx context.Context, kind images.Kind, platform dagger.Platform) (*dagger.Container, error) {
	if b.DrawVersion == "" {
		return nil, images.ErrNoDrawVersion
	}
	r, err := newRecipe(ctx, b, kind, images.LabelSet{}.With(b.DrawVersion), nil)
	if err != nil {
		return nil, err
	}
	img := r.build(platform)
	return img, r.built(ctx, []*dagger.Container{img})
}

// buildFlags are build's flags as given.
type buildFlags struct {
	source        *dagger.Directory
	toolkit       string
	drawPackage   string
	codeAsData    CodeAsDataKind
	codeAsDataArg []string
	buildArg      []string
	nodeImage     string
	npmrc         *dagger.Secret
}

// buildSpec is build's flags, checked once (newBuildSpec), with the
// project's package.json they are read with.
type buildSpec struct {
	source      *dagger.Directory
	manifest    *nodebuild.Manifest
	drawPackage string   // --draw-package, else the project's design tool; "" for none
	codeAsData  []string // buildCodeAsData's command; nil without code as data
	args        images.Args
	image       nodebuild.Image // --node-image
	npmrc       *dagger.Secret
}

// projectFacts is what build reads of the project before anything runs:
// its package.json and, for a code-as-data build, what it holds of the
// folders its code as data may be read from.
type projectFacts struct {
	manifest *nodebuild.Manifest
	image    nodebuild.Image // --node-image, parsed before package.json is read
	// the snapshot configuration's entries (nil without one) and how many
	// entries each of their outputDirs holds (missing: absent); nil when no
	// folder is looked for (no code as data, or --snapshot.dir given)
	entries []snapshotconfig.Entry
	folders map[string]int
}

// readProject reads package.json and, when the code as data is built from
// the folder the snapshot configuration names, that configuration and what
// the project holds of each folder it names (engine round trips, at once).
func readProject(ctx context.Context, f buildFlags) (*projectFacts, error) {
	p := &projectFacts{}
	var err error
	if p.manifest, p.image, err = readManifest(ctx, f.source, f.nodeImage); err != nil {
		return nil, err
	}
	if f.codeAsData == "" || f.codeAsData == CodeAsDataKindNone || nodebuild.GivesSnapshotDir(f.codeAsDataArg) {
		return p, nil
	}
	if ok, err := f.source.Exists(ctx, snapshotconfig.DefaultPath); err != nil {
		return nil, err
	} else if ok {
		if p.entries, _, err = readConfig(ctx, f.source, snapshotconfig.DefaultPath); err != nil {
			return nil, err
		}
	}
	dirs := snapshotconfig.CodeAsDataFolders(p.entries, nodebuild.DefaultSnapshotDir)
	counts := make([]int, len(dirs))
	g, gctx := errgroup.WithContext(ctx)
	for i, dir := range dirs {
		g.Go(func() error {
			counts[i] = -1
			if ok, err := f.source.Exists(gctx, dir, dagger.DirectoryExistsOpts{ExpectedType: dagger.ExistsTypeDirectoryType}); err != nil || !ok {
				return err
			}
			entries, err := f.source.Directory(dir).Entries(gctx)
			counts[i] = len(entries)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	p.folders = map[string]int{}
	for i, dir := range dirs {
		if counts[i] >= 0 {
			p.folders[dir] = counts[i]
		}
	}
	return p, nil
}

// newBuildSpec checks build's flags against the project, every problem at
// once: the toolkit and the design tool are the flags', else the project's
// own (nodebuild.Manifest.Tool). The Node.js image is readProject's to check.
func newBuildSpec(f buildFlags, p *projectFacts) (*buildSpec, error) {
	s := &buildSpec{source: f.source, manifest: p.manifest, drawPackage: p.manifest.Tool(f.drawPackage, nodebuild.DrawPackage),
		image: p.image, npmrc: f.npmrc}
	var errs [4]error
	snapshotDir := ""
	if p.folders != nil {
		var found snapshotconfig.CodeAsData
		found, errs[3] = snapshotconfig.FindCodeAsData(snapshotconfig.DefaultPath, p.entries, nodebuild.DefaultSnapshotDir, p.folders)
		snapshotDir = found.Dir
	}
	s.codeAsData, errs[0] = nodebuild.CodeAsDataStep(string(f.codeAsData), p.manifest.Tool(f.toolkit, nodebuild.ToolkitPackage), snapshotDir, f.codeAsDataArg)
	if f.drawPackage != "" {
		errs[1] = drawversion.CheckPackageName("--draw-package", f.drawPackage)
	}
	s.args, errs[2] = images.ParseBuildArgs(f.buildArg)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return s, nil
}

// run installs the project (the install runs here, so that its failure is
// build's) and makes each output lazily, off the install: whoever first uses
// one builds it.
func (s *buildSpec) run(ctx context.Context) (*Build, error) {
	in, err := install(ctx, s.source, s.manifest, s.image, s.npmrc, "", nodebuild.DrawScript, nodebuild.NodeScript)
	if err != nil {
		return nil, err
	}
	b := &Build{Source: in.source, BackendBase: s.image.Slim, BuildArg: s.args, HasCodeAsData: s.codeAsData != nil, CodeAsData: dag.Directory(),
		Frontend: output(in.forStep(nodebuild.DrawScript), nodebuild.CheckedBuild(nodebuild.RunScript(nodebuild.DrawScript), nodebuild.WebDir), nodebuild.WebDir),
		Backend:  output(in.forStep(nodebuild.NodeScript), nodebuild.CheckedBuild(nodebuild.RunScript(nodebuild.NodeScript), nodebuild.NodeDir), nodebuild.NodeDir)}
	doc := results.Build{Outputs: []string{in.inputs.Described(nodebuild.WebDir, "npm run build:draw", nodebuild.DrawScript, in.tookWholeProject()),
		in.inputs.Described(nodebuild.NodeDir, "npm run build:node", nodebuild.NodeScript, in.tookWholeProject())}}
	b.Dist = dag.Directory().WithDirectory("web", b.Frontend).WithDirectory("node", b.Backend)
	if s.codeAsData != nil {
		checked := nodebuild.CheckedBuildHolding(s.codeAsData, nodebuild.CodeAsDataDir, s.manifest.OwnCodeAsData())
		b.CodeAsData = output(in.forStep(nodebuild.CodeAsDataVerb), checked, nodebuild.CodeAsDataDir)
		b.Dist = b.Dist.WithDirectory("codeAsData", b.CodeAsData)
		doc.Outputs = append(doc.Outputs, in.inputs.Described(nodebuild.CodeAsDataDir, "buildCodeAsData", nodebuild.CodeAsDataVerb, in.tookWholeProject()))
	}
	// the install's exec keeps its own limit once it runs; the pull of its
	// image before it has none but this one's (steplimit.Pull)
	err = steplimit.Wait(ctx, steplimit.Sum(steplimit.Pull, steplimit.Project), "the install (the pull of "+s.image.Name+", then the project's install)", func(ctx context.Context) error {
		_, err := in.deps.Sync(ctx)
		return err
	})
	if err != nil {
		return nil, explain(err)
	}
	if s.drawPackage != "" {
		if b.DrawVersion, err = drawVersion(ctx, in, s.drawPackage); err != nil {
			return nil, err
		}
	}
	if !in.locked {
		b.Warnings = []string{nodebuild.NoLockFile}
	}
	doc.HasCodeAsData, doc.DrawVersion, doc.Warnings = b.HasCodeAsData, b.DrawVersion, b.Warnings
	b.Summary, b.Json = doc.Text(), results.JSON(doc)
	return b, nil
}
