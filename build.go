package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
)

const (
	appDir       = "/app"
	npmCacheDir  = "/var/cache/npm"
	npmrcPath    = "/run/secrets/npmrc"
	defaultImage = "node:24"
	defaultCache = "lowcode-pipeline-npm" // as the constructor's +default says
)

// Build is the project built: its three outputs and the design-tool version that labels its images
type Build struct {
	// What was built, for a person
	Summary string
	// What was built as JSON, for a script
	Json string
	// dist/web: the frontend (npm run build:draw)
	Web *dagger.Directory
	// dist/node: the backend (npm run build:node)
	Node *dagger.Directory
	// dist/codeAsData: the code as data (npx <platform cli> buildCodeAsData); empty unless built with --code-as-data
	CodeAsData *dagger.Directory
	// Whether the code as data was built (--code-as-data)
	HasCodeAsData bool
	// The whole dist directory: web, node and, when built, codeAsData
	Dist *dagger.Directory
	// Installed version of the design-tool package (--draw-package): the images' draw_version label; empty without --draw-package
	DrawVersion string

	// +private
	Pipeline *LowcodePipeline
}

// The project with its dependencies installed, ready to build
//
// `npm ci` when a lock file exists, else `npm install`, with the npm cache in
// a cache volume. Only package.json, the lock file and local file:
// dependencies are copied before the install, so a change to the sources
// does not re-run it; the sources are added afterwards.
func (m *LowcodePipeline) Install(ctx context.Context) (*dagger.Container, error) {
	_, installed, err := m.install(ctx)
	return installed, err
}

// install returns the dependencies alone and the installed project, after
// checking package.json's scripts when required is not empty.
func (m *LowcodePipeline) install(ctx context.Context, required ...string) (deps, installed *dagger.Container, err error) {
	manifest, err := m.manifest(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := manifest.RequireScripts(required...); err != nil {
		return nil, nil, err
	}
	if deps, err = m.dependencies(ctx, manifest); err != nil {
		return nil, nil, err
	}
	project, err := m.project(ctx)
	if err != nil {
		return nil, nil, err
	}
	return deps, deps.WithDirectory(appDir, project), nil
}

// Build the project: dist/web, dist/node and, when asked, dist/codeAsData, concurrently off one install
//
// The design-tool version is read from the installed dependencies at the
// same time, so it stays cached when only the sources change.
func (m *LowcodePipeline) Build(
	ctx context.Context,
	// Also build the code as data into dist/codeAsData
	// +optional
	codeAsData bool,
	// Build the code as data as a library of bricks (adds --bricks; needs --code-as-data)
	// +optional
	bricks bool,
	// Further argument for buildCodeAsData, passed as it is (repeatable; needs --code-as-data)
	// +optional
	codeAsDataArg []string,
) (*Build, error) {
	var cadCmd []string
	if err := nodebuild.CheckCodeAsDataFlags(codeAsData, bricks, codeAsDataArg); err != nil {
		return nil, err
	}
	if codeAsData {
		var err error
		if cadCmd, err = nodebuild.CodeAsDataCommand(m.PlatformCli, bricks, codeAsDataArg); err != nil {
			return nil, err
		}
	}
	if m.DrawPackage != "" {
		if err := nodebuild.CheckPackageName("--draw-package", m.DrawPackage); err != nil {
			return nil, err
		}
	}
	deps, installed, err := m.install(ctx, nodebuild.DrawScript, nodebuild.NodeScript)
	if err != nil {
		return nil, err
	}

	b := &Build{CodeAsData: dag.Directory(), HasCodeAsData: codeAsData, Pipeline: m}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		b.Web, err = buildStep(gctx, installed, nodebuild.RunScript(nodebuild.DrawScript), nodebuild.WebDir)
		return err
	})
	g.Go(func() (err error) {
		b.Node, err = buildStep(gctx, installed, nodebuild.RunScript(nodebuild.NodeScript), nodebuild.NodeDir)
		return err
	})
	if codeAsData {
		g.Go(func() (err error) {
			b.CodeAsData, err = buildStep(gctx, installed, cadCmd, nodebuild.CodeAsDataDir)
			return err
		})
	}
	if m.DrawPackage != "" {
		g.Go(func() (err error) { b.DrawVersion, err = drawVersion(gctx, deps, m.DrawPackage); return err })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	b.Dist = dag.Directory().WithDirectory("web", b.Web).WithDirectory("node", b.Node)
	doc := results.Build{Outputs: []string{nodebuild.WebDir, nodebuild.NodeDir}, HasCodeAsData: codeAsData, DrawVersion: b.DrawVersion}
	if codeAsData {
		b.Dist = b.Dist.WithDirectory("codeAsData", b.CodeAsData)
		doc.Outputs = append(doc.Outputs, nodebuild.CodeAsDataDir)
	}
	b.Summary, b.Json = doc.Text(), results.JSON(doc)
	return b, nil
}

// drawVersion asks npm which version of pkg the dependencies hold.
func drawVersion(ctx context.Context, deps *dagger.Container, pkg string) (string, error) {
	out, err := deps.
		WithExec(nodebuild.ListCommand(pkg), dagger.ContainerWithExecOpts{Expect: dagger.ReturnTypeAny}).
		Stdout(ctx)
	if err != nil {
		return "", err
	}
	return nodebuild.InstalledVersion(pkg, []byte(out))
}

// buildStep runs cmd in the installed project and returns dir, refusing a
// step that succeeded without writing it.
func buildStep(ctx context.Context, installed *dagger.Container, cmd []string, dir string) (*dagger.Directory, error) {
	step := strings.Join(cmd, " ")
	built, err := installed.WithExec(cmd).Sync(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s failed: %w", step, err)
	}
	out := built.Directory(dir)
	entries, listErr := out.Entries(ctx)
	if err := nodebuild.CheckOutput(step, dir, entries, listErr); err != nil {
		return nil, err
	}
	return out, nil
}

// dependencies is the Node.js container with the project's dependencies
// installed from its manifest and lock file only, without its sources.
func (m *LowcodePipeline) dependencies(ctx context.Context, manifest *nodebuild.Manifest) (*dagger.Container, error) {
	root, err := m.Source.Entries(ctx)
	if err != nil {
		return nil, err
	}
	inputs, err := manifest.InstallInputs(root)
	if err != nil {
		return nil, err
	}
	node, err := m.node(ctx)
	if err != nil {
		return nil, err
	}
	deps := dag.Directory()
	for _, in := range inputs {
		if in.Dir {
			deps = deps.WithDirectory(in.Path, m.Source.Directory(in.Path))
		} else {
			deps = deps.WithFile(in.Path, m.Source.File(in.Path))
		}
	}
	return node.
		WithDirectory(appDir, deps).
		WithWorkdir(appDir).
		WithExec(nodebuild.InstallCommand(root)), nil
}

// project is the source as every npm and platform CLI container sees it: a
// token kept in the snapshot configuration's git.repo is removed (the file
// is otherwise byte for byte the project's), so it reaches the git step only.
func (m *LowcodePipeline) project(ctx context.Context) (*dagger.Directory, error) {
	ok, err := m.Source.Exists(ctx, snapshotconfig.DefaultPath)
	if err != nil || !ok {
		return m.Source, err
	}
	data, err := m.Source.File(snapshotconfig.DefaultPath).Contents(ctx)
	if err != nil {
		return nil, err
	}
	if clean := snapshotconfig.ScrubCredentials([]byte(data)); string(clean) != data {
		return m.Source.WithNewFile(snapshotconfig.DefaultPath, string(clean)), nil
	}
	return m.Source, nil
}

func (m *LowcodePipeline) manifest(ctx context.Context) (*nodebuild.Manifest, error) {
	data, err := m.Source.File(nodebuild.ManifestFile).Contents(ctx)
	if err != nil {
		return nil, errors.New("no package.json at the root of the source directory: pass the project with --source")
	}
	return nodebuild.ParseManifest([]byte(data))
}

// node is the Node.js container every step runs in: a checked version, the
// npm cache volume, and the .npmrc secret mounted outside the project.
func (m *LowcodePipeline) node(ctx context.Context) (*dagger.Container, error) {
	image := m.NodeImage
	if image == "" {
		image = defaultImage
	}
	cache := m.NpmCache
	if cache == "" {
		cache = defaultCache
	}
	ctr := dag.Container().From(image).
		WithMountedCache(npmCacheDir, dag.CacheVolume(cache)).
		WithEnvVariable("NPM_CONFIG_CACHE", npmCacheDir).
		WithEnvVariable("NPM_CONFIG_UPDATE_NOTIFIER", "false").
		WithEnvVariable("CI", "true")
	if m.Npmrc != nil {
		ctr = ctr.WithMountedSecret(npmrcPath, m.Npmrc).WithEnvVariable("NPM_CONFIG_USERCONFIG", npmrcPath)
	}
	version, err := ctr.WithExec([]string{"node", "--version"}).Stdout(ctx)
	if err != nil {
		return nil, fmt.Errorf("node image %q: %w", image, err)
	}
	if err := nodebuild.CheckNodeVersion(image, version); err != nil {
		return nil, err
	}
	return ctr, nil
}
