package main

import (
	"context"
	"errors"
	"path"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/drawversion"
	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
	"dagger/lowcode-pipeline/internal/steplimit"
)

const (
	appDir      = "/app"
	npmCacheDir = "/var/cache/npm"
	npmrcPath   = "/run/secrets/npmrc"
	// npm's cache is content-addressed, so one volume serves every project.
	npmCache = "lowcode-pipeline-npm"
)

// output is dir after checked (nodebuild.CheckedBuild's) ran in the
// installed project: lazy, and checked in the same exec (a step that exits
// 0 without writing dir fails, naming it).
func output(installed *dagger.Container, checked []string, dir string) *dagger.Directory {
	return installed.WithExec(checked).Directory(dir)
}

// drawVersion is the version of pkg the dependencies hold. A dependency of
// the project's own is read from its installed package.json, which costs no
// exec; anything else (a workspace's dependency, none) is npm ls's to say.
func drawVersion(ctx context.Context, in *installation, pkg string) (string, error) {
	deps := in.deps
	if in.manifest.DependsOn(pkg) {
		if data, err := deps.File(path.Join(appDir, drawversion.InstalledManifest(pkg))).Contents(ctx); err == nil {
			return drawversion.ManifestVersion(pkg, []byte(data))
		}
	}
	listed := deps.WithExec(steplimit.Within(steplimit.Tool, drawversion.ListCommand(pkg)), dagger.ContainerWithExecOpts{Expect: dagger.ReturnTypeAny})
	out, err := listed.Stdout(ctx)
	if err != nil {
		return "", explain(err)
	}
	version, err := drawversion.InstalledVersion(pkg, []byte(out))
	if err != nil {
		// npm ls may fail for reasons of its own: say so when it was stopped
		if code, codeErr := listed.ExitCode(ctx); codeErr == nil {
			if stopped := steplimit.Stopped(code, "npm ls "+pkg, steplimit.Tool); stopped != nil {
				return "", stopped
			}
		}
	}
	return version, err
}

// installation is a project with its dependencies installed.
type installation struct {
	deps     *dagger.Container   // the dependencies alone: package.json, the lock file, node_modules
	project  *dagger.Container   // the whole project on them, ready to build
	source   *dagger.Directory   // the project as every container sees it (scrubbed)
	manifest *nodebuild.Manifest // its package.json
	inputs   nodebuild.StepInputs
	locked   bool // a lock file pins its dependencies (npm ci)
}

// forStep is the project as step's exec sees it: the paths package.json
// declares it reads (nodebuild.StepInputs) laid over the dependencies, else
// the whole project. The engine keys the filtered project on its content,
// so a step stays cached while its own paths do not change. When the
// install took the whole project (deps is project), that is what every
// step gets.
func (in *installation) forStep(step string) *dagger.Container {
	paths, ok := in.inputs[step]
	switch {
	case !ok || in.tookWholeProject():
		return in.project
	case len(paths) == 0:
		return in.deps // an empty include list is no filter at all: the whole project
	}
	return in.deps.WithDirectory(appDir, in.source.Filter(dagger.DirectoryFilterOpts{Include: paths}))
}

// tookWholeProject says whether the install ran over the whole project
// (nodebuild.InstallInputs), so that every step gets it.
func (in *installation) tookWholeProject() bool { return in.deps == in.project }

// checkInputs refuses every declared input the project does not have
// (nodebuild.MissingInput).
func checkInputs(ctx context.Context, source *dagger.Directory, inputs nodebuild.StepInputs) error {
	var (
		mu       sync.Mutex
		problems fielderr.List
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, step := range nodebuild.InputSteps {
		for i, p := range inputs[step] {
			g.Go(func() error {
				ok, err := source.Exists(gctx, p)
				if err != nil || ok {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				problems = append(problems, nodebuild.MissingInput(step, i, p))
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return problems.Err()
}

// readManifest reads the package.json of the project that nodeImage
// (--node-image) will install, once: what the steps need of it (its tools,
// its scripts, its dependencies) is taken from the one parse. The image is
// parsed first, before any engine call.
func readManifest(ctx context.Context, source *dagger.Directory, nodeImage string) (*nodebuild.Manifest, nodebuild.Image, error) {
	image, err := nodebuild.ParseImage(nodeImage)
	if err != nil {
		return nil, image, err
	}
	data, err := source.File(nodebuild.ManifestFile).Contents(ctx)
	if err != nil {
		return nil, image, errors.New("no package.json at the root of the source directory: pass the project with --source")
	}
	manifest, err := nodebuild.ParseManifest([]byte(data))
	return manifest, image, err
}

// install installs the project whose package.json is manifest in the
// image readManifest parsed, after checking its scripts when
// required is not empty.
//
// Every snapshot configuration is scrubbed in the project the containers
// see: the default one and config, when given (snapshot's --config).
func install(ctx context.Context, source *dagger.Directory, manifest *nodebuild.Manifest, image nodebuild.Image, npmrc *dagger.Secret, config string, required ...string) (*installation, error) {
	source = source.Filter(dagger.DirectoryFilterOpts{Exclude: nodebuild.ProjectExcludes})
	// two reads that need none of the other's answer: each an engine
	// round trip on the way to the install, so at once
	var (
		root    []string
		project *dagger.Directory // the inputs come from the scrubbed project: a script's whole project holds no snapshot token either
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { root, err = source.Entries(gctx); return err })
	g.Go(func() (err error) { project, err = scrubbed(gctx, source, config); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := manifest.RequireScripts(required...); err != nil {
		return nil, err
	}
	stepInputs, err := manifest.StepInputs()
	if err != nil {
		return nil, err
	}
	if err := checkInputs(ctx, source, stepInputs); err != nil {
		return nil, err
	}
	workspaces, err := listWorkspaces(ctx, source, manifest)
	if err != nil {
		return nil, err
	}
	inputs, err := manifest.InstallInputsWith(root, workspaces)
	if err != nil {
		return nil, err
	}
	if len(inputs) == 1 && inputs[0].Path == "." { // the whole project (nodebuild.InstallInputs)
		// the project as the install left it, as in a checkout: no copy
		// over it undoes what npm did to its files (a command's mode)
		deps := installed(image.Name, npmrc, project, root)
		return &installation{deps: deps, project: deps, source: project, manifest: manifest, inputs: stepInputs, locked: nodebuild.Locked(root)}, nil
	}
	manifestOnly := dag.Directory()
	for _, in := range inputs {
		if in.Dir {
			manifestOnly = manifestOnly.WithDirectory(in.Path, project.Directory(in.Path))
		} else {
			manifestOnly = manifestOnly.WithFile(in.Path, project.File(in.Path))
		}
	}
	deps := installed(image.Name, npmrc, manifestOnly, root)
	return &installation{deps: deps, project: deps.WithDirectory(appDir, project), source: project, manifest: manifest, inputs: stepInputs,
		locked: nodebuild.Locked(root)}, nil
}

// installed is the install run on inputs, the files it reads.
func installed(nodeImage string, npmrc *dagger.Secret, inputs *dagger.Directory, root []string) *dagger.Container {
	return node(nodeImage, npmrc).
		WithDirectory(appDir, inputs).
		WithWorkdir(appDir).
		WithExec(nodebuild.CheckedInstall(nodeImage, root))
}

// listWorkspaces finds the project's npm workspaces and reads each one's
// package.json, so that the install takes those instead of the whole
// project; not Listed when npm's patterns need npm's own matching.
func listWorkspaces(ctx context.Context, source *dagger.Directory, m *nodebuild.Manifest) (nodebuild.Workspaces, error) {
	globs, ok := m.WorkspaceGlobs()
	if !ok || len(globs) == 0 {
		return nodebuild.Workspaces{Listed: ok}, nil
	}
	found, err := source.Glob(ctx, nodebuild.AnyManifest)
	if err != nil {
		return nodebuild.Workspaces{}, err
	}
	files := nodebuild.WorkspaceManifests(globs, found)
	each := make([]nodebuild.Workspace, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, file := range files {
		g.Go(func() error {
			dir, ok := nodebuild.WorkspaceDir(file)
			if !ok {
				return nil
			}
			data, err := source.File(file).Contents(gctx)
			if err != nil {
				return err
			}
			m, err := nodebuild.ParseManifestAt(file, []byte(data))
			if err != nil {
				return err
			}
			each[i] = nodebuild.Workspace{Dir: dir, Manifest: m}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nodebuild.Workspaces{}, err
	}
	each = slices.DeleteFunc(each, func(w nodebuild.Workspace) bool { return w.Manifest == nil })
	return nodebuild.Workspaces{Listed: true, Each: each}, nil
}

// scrubbed is the source as every npm and toolkit container sees it: a token
// kept in a snapshot configuration's git.repo is removed (the file is
// otherwise the project's), so it reaches the git step only; the project's
// .npmrc keeps no setting that names an environment variable, which the
// containers never have (nodebuild.ProjectNpmrc), so --npmrc supplies it.
func scrubbed(ctx context.Context, source *dagger.Directory, config string) (*dagger.Directory, error) {
	patterns := []string{snapshotconfig.OtherConfigs}
	if config != "" {
		patterns = append(patterns, path.Join(config, "**", "*.json")) // a configuration folder's files
	}
	var others []string
	for _, pattern := range patterns {
		found, err := source.Glob(ctx, pattern)
		if err != nil {
			return nil, err
		}
		others = append(others, found...)
	}
	// in a fixed order: the same project gives the same directory, and cached steps stay cached
	rewrites := append([]snapshotconfig.Scrub{{Path: nodebuild.ProjectConfig, Clean: nodebuild.ProjectNpmrc}}, snapshotconfig.Scrubs(config, others)...)
	// read concurrently (engine round trips), applied in that order
	cleaned := make([]*string, len(rewrites))
	g, gctx := errgroup.WithContext(ctx)
	for i, r := range rewrites {
		g.Go(func() error {
			ok, err := source.Exists(gctx, r.Path, dagger.DirectoryExistsOpts{ExpectedType: dagger.ExistsTypeRegularType})
			if err != nil || !ok {
				return err
			}
			data, err := source.File(r.Path).Contents(gctx)
			if err != nil {
				return err
			}
			if clean := string(r.Clean([]byte(data))); clean != data {
				cleaned[i] = &clean
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, r := range rewrites {
		if cleaned[i] != nil {
			source = source.WithNewFile(r.Path, *cleaned[i])
		}
	}
	return source, nil
}

// node is the Node.js container every step runs in: the npm cache volume,
// and the .npmrc secret mounted outside the project. Its version is checked
// by the install's exec (nodebuild.CheckedInstall).
func node(image string, npmrc *dagger.Secret) *dagger.Container {
	ctr := withScripts(dag.Container().From(image), nodebuild.Helpers()).
		WithMountedCache(npmCacheDir, dag.CacheVolume(npmCache)).
		WithEnvVariable("NPM_CONFIG_CACHE", npmCacheDir).
		WithEnvVariable("NPM_CONFIG_UPDATE_NOTIFIER", "false").
		WithEnvVariable("CI", "true")
	if npmrc != nil {
		ctr = ctr.WithMountedSecret(npmrcPath, npmrc).WithEnvVariable("NPM_CONFIG_USERCONFIG", npmrcPath)
	}
	return ctr
}
