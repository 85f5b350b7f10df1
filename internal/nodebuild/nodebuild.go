// Package nodebuild holds the decisions of the project build: what to copy
// before installing (install-time scripts, npm workspaces, the project's
// .npmrc), which install command, which scripts must exist, which Node.js is
// new enough, the command lines of the three builds, and the helper commands
// the install and the builds run as. The design-tool version is
// drawversion's.
package nodebuild

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/imageref"
)

// MinNodeMajor is the oldest Node.js the platform builds with.
const MinNodeMajor = 20

// The platform's build scripts and their output directories.
const (
	DrawScript    = "build:draw"
	NodeScript    = "build:node"
	WebDir        = "dist/web"
	NodeDir       = "dist/node"
	CodeAsDataDir = "dist/codeAsData"
	ManifestFile  = "package.json"
	// the toolkit's option that chooses what buildCodeAsData builds, and its
	// values for a final project (all: with every dependency's code as data)
	// and for a library of bricks (project: only the project's own)
	CodeAsDataModeOption = "--codeAsData.mode"
	ProjectMode          = "all"
	BricksMode           = "project"
	// the toolkit's option that names the snapshot configuration (its own
	// default, ./snapshot/snapshot-config.json, is not the interface's)
	SnapshotConfigOption = "--snapshot.config"
	CodeAsDataVerb       = "buildCodeAsData"
	SnapshotVerb         = "snapshot"
	// the toolkit's option that names the folder buildCodeAsData reads the
	// project's own code as data from, with its short alias and its default
	SnapshotDirOption      = "--snapshot.dir"
	SnapshotDirShortOption = "-sd"
	DefaultSnapshotDir     = "snapshot"
)

// The platform's packages, as the vendor's template names them in its
// devDependencies: the design tool, whose installed version labels the
// images (draw_version), and the toolkit, which builds the code as data and
// takes snapshots. A flag names another package.
const (
	DrawPackage    = "@olympeio/draw"
	ToolkitPackage = "@olympeio/toolkit"
)

// LockFiles are the files that make `npm ci` possible, in npm's order of preference.
var LockFiles = []string{"npm-shrinkwrap.json", "package-lock.json"}

// ProjectConfig is the project's own npm configuration (a registry for a
// scope, legacy-peer-deps…), which npm reads from the project's root.
const ProjectConfig = ".npmrc"

// ProjectExcludes are what no container ever gets of a project: the
// node_modules of the host at any depth (laid over the install they would
// replace what npm installed for Linux), the build output (the build's own
// replaces it) and git's data. They are every project argument's +ignore
// too, but the engine applies those to an upload from the CLI only, not to a
// directory another module passes (tests/engine-facts.md, fact 19).
var ProjectExcludes = []string{"**/node_modules", "dist", ".git"}

// Manifest is what the build needs of package.json.
type Manifest struct {
	Name                 string            `json:"name"`
	Scripts              map[string]string `json:"scripts"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	Workspaces           json.RawMessage   `json:"workspaces"`
	Bin                  json.RawMessage   `json:"bin"`
	Directories          struct {
		Bin string `json:"bin"`
	} `json:"directories"`
	Pipeline json.RawMessage `json:"lowcodePipeline"` // this module's settings (StepInputs)
}

// ParseManifest reads package.json.
func ParseManifest(data []byte) (*Manifest, error) {
	return ParseManifestAt(ManifestFile, data)
}

// ParseManifestAt reads the package.json at file (a workspace's), naming it
// in its error.
func ParseManifestAt(file string, data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: not valid JSON: %w", file, err)
	}
	return &m, nil
}

// DependsOn says whether the project lists pkg as its own dependency (of
// any kind but peer), which npm installs at the top of node_modules.
func (m *Manifest) DependsOn(pkg string) bool {
	for _, deps := range []map[string]string{m.Dependencies, m.DevDependencies, m.OptionalDependencies} {
		if _, ok := deps[pkg]; ok {
			return true
		}
	}
	return false
}

// Tool is the package a step runs or reads: flag when given, else pkg when
// the project depends on it (npx then runs the version the install put in
// node_modules), else "".
func (m *Manifest) Tool(flag, pkg string) string {
	switch {
	case flag != "":
		return flag
	case m.DependsOn(pkg):
		return pkg
	}
	return ""
}

// OwnCodeAsData is the folder of dist/codeAsData where buildCodeAsData puts
// the project's own code as data: its package name made a folder name, as
// the toolkit makes it (@acme/app → acme.app); "" for a project without a
// name.
func (m *Manifest) OwnCodeAsData() string {
	return strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(m.Name, "/", "."), "@", ""))
}

// RequireScripts fails naming every build script package.json lacks.
func (m *Manifest) RequireScripts(names ...string) error {
	var missing []error
	for _, n := range names {
		if strings.TrimSpace(m.Scripts[n]) == "" {
			missing = append(missing, fmt.Errorf("%s: no %q script in \"scripts\": the platform builds with `npm run %s`, which must write %s", ManifestFile, n, n, outputOf(n)))
		}
	}
	return errors.Join(missing...)
}

func outputOf(script string) string {
	switch script {
	case DrawScript:
		return "the frontend into " + WebDir
	case NodeScript:
		return "the backend into " + NodeDir
	}
	return "its output"
}

// Locked says whether a lock file among the project's root files pins its
// dependency tree.
func Locked(files []string) bool {
	return slices.ContainsFunc(LockFiles, func(lock string) bool { return slices.Contains(files, lock) })
}

// NoLockFile is what a build without a lock file tells its user: the
// vendor's template ignores package-lock.json in git, so npm resolves its
// version ranges at every build.
const NoLockFile = "no package-lock.json: npm install resolved the dependencies' version ranges afresh, so two runs of one commit may install other versions; " +
	"to pin them, run `npm install --package-lock-only`, take package-lock.json out of .gitignore and commit it"

// InstallCommand is `npm ci` when a lock file pins the tree, else `npm install`.
func InstallCommand(files []string) []string {
	if Locked(files) {
		return []string{"npm", "ci", "--no-audit", "--no-fund"}
	}
	return []string{"npm", "install", "--no-audit", "--no-fund"}
}

// Input is one path the install step needs.
type Input struct {
	Path string
	Dir  bool
}

// InstallInputs are the paths the install step needs, and nothing else, so
// that a change to the sources does not invalidate the installed layer:
// package.json, the lock file, the project's .npmrc, local (file:)
// dependencies, folders or tarballs, and what the project's install-time
// scripts read: a known tool's folder, or the whole project (".") for a
// script not known to need less, and for npm workspaces. rootFiles are the
// names at the project root.
func (m *Manifest) InstallInputs(rootFiles []string) ([]Input, error) {
	return m.InstallInputsWith(rootFiles, Workspaces{})
}

// InstallInputsWith is InstallInputs for a project whose npm workspaces
// were listed (ListWorkspaces): each workspace's package.json instead of the
// whole project, unless one of them needs more of its files at install time
// (WorkspaceNeedsFiles).
func (m *Manifest) InstallInputsWith(rootFiles []string, workspaces Workspaces) ([]Input, error) {
	if err := checkLockFiles(rootFiles); err != nil {
		return nil, err
	}
	inputs := []string{ManifestFile}
	for _, name := range append(slices.Clone(LockFiles), ProjectConfig) {
		if slices.Contains(rootFiles, name) {
			inputs = append(inputs, name)
		}
	}
	local, err := m.localDependencies(".")
	if err != nil {
		return nil, err
	}
	dirs, whole := m.scriptNeeds(rootFiles)
	if m.hasWorkspaces() {
		// npm links every workspace and runs its install-time scripts, with
		// its files: without a listing, or for a workspace that needs more
		// than its package.json, the whole project
		if !workspaces.Listed {
			whole = true
		}
		for _, w := range workspaces.Each {
			if w.Manifest.needsFiles() {
				whole = true
				break
			}
			wsLocal, err := w.Manifest.localDependencies(w.Dir)
			if err != nil {
				return nil, err
			}
			local = append(local, wsLocal...)
			inputs = append(inputs, path.Join(w.Dir, ManifestFile))
		}
	}
	if whole {
		return []Input{{Path: ".", Dir: true}}, nil
	}
	local = append(local, dirs...)
	slices.Sort(local)
	out := make([]Input, 0, len(inputs)+len(local))
	for _, p := range inputs {
		out = append(out, Input{Path: p})
	}
	for _, p := range slices.Compact(local) {
		out = append(out, Input{Path: p, Dir: !strings.HasSuffix(p, ".tgz") && !strings.HasSuffix(p, ".tar.gz")})
	}
	return out, nil
}

// localDependencies are the local (file:) dependencies of the package in
// dir, as paths from the project's root; one outside the project is refused.
func (m *Manifest) localDependencies(dir string) ([]string, error) {
	file := path.Join(dir, ManifestFile)
	var local []string
	for _, deps := range []map[string]string{m.Dependencies, m.DevDependencies, m.OptionalDependencies} {
		for name, spec := range deps {
			p, ok := strings.CutPrefix(spec, "file:")
			if !ok {
				continue
			}
			clean := path.Join(dir, p)
			if path.IsAbs(p) || clean == ".." || strings.HasPrefix(clean, "../") {
				return nil, fmt.Errorf("%s: dependency %q is %q, outside the project: the build only sees the project directory", file, name, spec)
			}
			local = append(local, clean)
		}
	}
	slices.Sort(local)
	return local, nil
}

// otherLockFiles are other package managers' lock files, which npm does not read.
var otherLockFiles = []string{"yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock"}

// checkLockFiles refuses a project locked by another package manager only:
// npm would resolve its tree afresh, not the versions the project tested.
func checkLockFiles(rootFiles []string) error {
	if Locked(rootFiles) {
		return nil
	}
	for _, other := range otherLockFiles {
		if slices.Contains(rootFiles, other) {
			return fmt.Errorf("%s locks the project's dependencies, but the platform installs with npm, which does not read it and would resolve other versions: commit a package-lock.json (npm install --package-lock-only)", other)
		}
	}
	return nil
}

// hasWorkspaces says whether package.json declares npm workspaces.
func (m *Manifest) hasWorkspaces() bool {
	w := strings.TrimSpace(string(m.Workspaces))
	return w != "" && w != "null" && w != "[]" && w != "{}"
}

// RunScript is the command line of `npm run <script>`.
func RunScript(script string) []string { return []string{"npm", "run", script} }

// CodeAsDataCommand is `npx <cli> buildCodeAsData --codeAsData.mode all`,
// or `project` for a library of bricks, reading the project's code as data
// from snapshotDir (--snapshot.dir, unless extra gives it), with the user's
// extra arguments last.
func CodeAsDataCommand(cli string, bricks bool, snapshotDir string, extra []string) ([]string, error) {
	if err := CheckCLI(cli); err != nil {
		return nil, err
	}
	mode := ProjectMode
	if bricks {
		mode = BricksMode
	}
	cmd := []string{"npx", "--yes", cli, CodeAsDataVerb, CodeAsDataModeOption, mode}
	if snapshotDir != "" && !GivesSnapshotDir(extra) {
		cmd = append(cmd, SnapshotDirOption, snapshotDir)
	}
	return append(cmd, extra...), nil
}

// GivesSnapshotDir says whether the user's arguments for buildCodeAsData
// name the snapshot folder themselves, in any spelling commander reads.
func GivesSnapshotDir(extra []string) bool {
	return slices.ContainsFunc(extra, func(a string) bool {
		name, _, _ := strings.Cut(a, "=")
		return name == SnapshotDirOption || name == SnapshotDirShortOption
	})
}

// CheckCLI refuses a missing platform CLI with the way to set it.
func CheckCLI(cli string) error {
	if strings.TrimSpace(cli) == "" {
		return fmt.Errorf("--toolkit: required: package.json does not depend on %s, the platform toolkit that npx runs for buildCodeAsData and snapshot: add it to devDependencies, as the vendor's template does, or pass --toolkit <package>[@version]", ToolkitPackage)
	}
	// npx takes any package spec (a name, name@version, a tarball's URL), so
	// only what cannot be one word of it, or would be read as an option, is refused.
	if strings.IndexFunc(cli, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError }) >= 0 ||
		strings.HasPrefix(cli, "-") {
		return fmt.Errorf("--toolkit %s: want one npm package name, optionally with @version (no spaces or control characters, not starting with -)", fielderr.Quote(cli))
	}
	// a login would stand in the command line every log shows; git over
	// ssh logs in as git, with a key (git+ssh://git@…)
	rest := cli
	for _, sshUser := range []string{"git+ssh://git@", "ssh://git@"} {
		rest = strings.TrimPrefix(rest, sshUser)
	}
	if fielderr.HoldsLogin(rest) {
		return fmt.Errorf("--toolkit %s holds a login (user:password@): give a private registry's credentials in --npmrc (a secret), and the package by its name", fielderr.Quote(cli))
	}
	return nil
}

// SnapshotCommand is `npx <cli> snapshot --snapshot.config <config>`: the
// configuration is always named, the toolkit's default location being
// another than the interface's.
func SnapshotCommand(cli, config string) ([]string, error) {
	if err := CheckCLI(cli); err != nil {
		return nil, err
	}
	return []string{"npx", "--yes", cli, SnapshotVerb, SnapshotConfigOption, config}, nil
}

// CodeAsDataStep is the build step of --code-as-data: none (or empty)
// builds none, project and bricks are CodeAsDataCommand's; the user's
// arguments come last. Arguments without a code-as-data
// build are refused rather than ignored. A nil command means no step.
func CodeAsDataStep(kind, toolkit, snapshotDir string, args []string) ([]string, error) {
	switch kind {
	case "", "none":
		if len(args) > 0 {
			return nil, fmt.Errorf("--code-as-data-arg %s needs --code-as-data project or bricks: it is passed to buildCodeAsData", fielderr.Quote(args[0]))
		}
		return nil, nil
	case "project", "bricks":
		return CodeAsDataCommand(toolkit, kind == "bricks", snapshotDir, args)
	}
	return nil, fmt.Errorf("--code-as-data %s: choose none, project or bricks", fielderr.Quote(kind))
}

// DefaultImage is the Node.js image the builds run in unless told otherwise:
// the one the reference workflow uses.
const DefaultImage = "node:24"

// Image is --node-image, parsed once (ParseImage): the image the steps run
// in, and the base the backend image gets from it.
type Image struct {
	// Name is the image as given, or DefaultImage when none is.
	Name string
	// Slim is the backend image's base unless BACKEND_BASE_IMAGE says
	// otherwise: the official node image's Debian tags get their -slim
	// variant, the C library the build's native addons were compiled
	// against; Alpine and slim tags, digests and other images are Name.
	Slim string
}

// ParseImage reads --node-image, refusing one that names no image before
// anything is uploaded or pulled; a tag is not required (node means
// node:latest, as for docker pull).
func ParseImage(flag string) (Image, error) {
	name := flag
	if name == "" {
		name = DefaultImage
	}
	ref, err := imageref.Parse(name)
	if err != nil {
		return Image{}, fmt.Errorf("--node-image %s: not an image reference: want [registry/]repository[:tag][@sha256:<64 hex>], e.g. node:24 or node:24-alpine", fielderr.Quote(flag))
	}
	img := Image{Name: name, Slim: name}
	switch tag := ref.Tag(); {
	case !ref.IsDockerHubOfficial("node") || ref.Digest() != "" || strings.Contains(tag, "alpine") || strings.Contains(tag, "slim"):
	case tag == "":
		img.Slim = name + ":slim"
	default:
		img.Slim = strings.TrimSuffix(name, ":"+tag) + ":" + tag + "-slim"
	}
	return img, nil
}
