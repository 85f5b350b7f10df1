package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/nodebuild"
)

const (
	appDir       = "/app"
	npmCacheDir  = "/var/cache/npm"
	npmrcPath    = "/run/secrets/npmrc"
	defaultImage = "node:24"
	defaultCache = "lowcode-pipeline-npm" // as the constructor's +default says
)

// The project with its dependencies installed, ready to build
//
// `npm ci` when a lock file exists, else `npm install`, with the npm cache in
// a cache volume. Only package.json, the lock file and local file:
// dependencies are copied before the install, so a change to the sources
// does not re-run it; the sources are added afterwards.
func (m *LowcodePipeline) Install(ctx context.Context) (*dagger.Container, error) {
	manifest, err := m.manifest(ctx)
	if err != nil {
		return nil, err
	}
	return m.install(ctx, manifest)
}

func (m *LowcodePipeline) install(ctx context.Context, manifest *nodebuild.Manifest) (*dagger.Container, error) {
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
		WithExec(nodebuild.InstallCommand(root)).
		WithDirectory(appDir, m.Source), nil
}

// The frontend: `npm run build:draw`, the contents of dist/web
func (m *LowcodePipeline) Frontend(ctx context.Context) (*dagger.Directory, error) {
	return m.buildStep(ctx, nil, nodebuild.RunScript(nodebuild.DrawScript), nodebuild.WebDir)
}

// The backend: `npm run build:node`, the contents of dist/node
func (m *LowcodePipeline) Backend(ctx context.Context) (*dagger.Directory, error) {
	return m.buildStep(ctx, nil, nodebuild.RunScript(nodebuild.NodeScript), nodebuild.NodeDir)
}

// The code as data: `npx <platform cli> buildCodeAsData`, the contents of dist/codeAsData
func (m *LowcodePipeline) CodeAsData(
	ctx context.Context,
	// Build a library of bricks (reusable components) instead of a final project (adds --bricks)
	// +optional
	bricks bool,
	// Further arguments for buildCodeAsData, passed as they are
	// +optional
	args []string,
) (*dagger.Directory, error) {
	return m.codeAsData(ctx, nil, bricks, args)
}

func (m *LowcodePipeline) codeAsData(ctx context.Context, installed *dagger.Container, bricks bool, args []string) (*dagger.Directory, error) {
	cmd, err := nodebuild.CodeAsDataCommand(m.PlatformCli, bricks, args)
	if err != nil {
		return nil, err
	}
	return m.buildStep(ctx, installed, cmd, nodebuild.CodeAsDataDir)
}

// dist/web, dist/node and, when asked, dist/codeAsData, built concurrently off one install
func (m *LowcodePipeline) Build(
	ctx context.Context,
	// Also build the code as data into dist/codeAsData
	// +optional
	codeAsData bool,
	// Build the code as data as a library of bricks
	// +optional
	bricks bool,
) (*dagger.Directory, error) {
	if codeAsData {
		if err := nodebuild.CheckCLI(m.PlatformCli); err != nil {
			return nil, err
		}
	}
	installed, err := m.installChecked(ctx)
	if err != nil {
		return nil, err
	}
	var web, node, cad *dagger.Directory
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		web, err = m.buildStep(gctx, installed, nodebuild.RunScript(nodebuild.DrawScript), nodebuild.WebDir)
		return err
	})
	g.Go(func() (err error) {
		node, err = m.buildStep(gctx, installed, nodebuild.RunScript(nodebuild.NodeScript), nodebuild.NodeDir)
		return err
	})
	if codeAsData {
		g.Go(func() (err error) { cad, err = m.codeAsData(gctx, installed, bricks, nil); return err })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := dag.Directory().WithDirectory(nodebuild.WebDir, web).WithDirectory(nodebuild.NodeDir, node)
	if cad != nil {
		out = out.WithDirectory(nodebuild.CodeAsDataDir, cad)
	}
	return out, nil
}

// The installed version of the design-tool package (--draw-package), which labels the images as draw_version
func (m *LowcodePipeline) DrawVersion(ctx context.Context) (string, error) {
	if m.DrawPackage == "" {
		return "", nodebuild.ErrNoDrawPackage
	}
	if err := nodebuild.CheckPackageName("--draw-package", m.DrawPackage); err != nil {
		return "", err
	}
	installed, err := m.Install(ctx)
	if err != nil {
		return "", err
	}
	out, err := installed.
		WithExec(nodebuild.ListCommand(m.DrawPackage), dagger.ContainerWithExecOpts{Expect: dagger.ReturnTypeAny}).
		Stdout(ctx)
	if err != nil {
		return "", err
	}
	return nodebuild.InstalledVersion(m.DrawPackage, []byte(out))
}

// buildStep runs cmd in the installed project (installing it when nil) and
// returns dir, refusing a step that succeeded without writing it.
func (m *LowcodePipeline) buildStep(ctx context.Context, installed *dagger.Container, cmd []string, dir string) (*dagger.Directory, error) {
	if installed == nil {
		var err error
		if installed, err = m.installChecked(ctx); err != nil {
			return nil, err
		}
	}
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

// installChecked installs the project after checking it has the build scripts.
func (m *LowcodePipeline) installChecked(ctx context.Context) (*dagger.Container, error) {
	manifest, err := m.manifest(ctx)
	if err != nil {
		return nil, err
	}
	if err := manifest.RequireScripts(nodebuild.DrawScript, nodebuild.NodeScript); err != nil {
		return nil, err
	}
	return m.install(ctx, manifest)
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
