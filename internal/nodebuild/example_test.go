package nodebuild

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/drawversion"
	"dagger/lowcode-pipeline/internal/testsupport/stepinputs"
)

// TestExampleAppBuildsForReal runs the pipeline's own command lines on
// examples/app with this machine's Node.js and npm, and checks what the
// images will need.
func TestExampleAppBuildsForReal(t *testing.T) {
	for _, tool := range []string{"node", "npm"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the example build needs %s (Node.js >= %d)", tool, MinNodeMajor)
	}
	app := copyExample(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	manifestData, err := os.ReadFile(filepath.Join(app, ManifestFile))
	require.NoError(t, err)
	m, err := ParseManifest(manifestData)
	require.NoError(t, err)
	require.NoError(t, m.RequireScripts(DrawScript, NodeScript))
	entries := readDirNames(t, app)
	inputs, err := m.InstallInputs(entries)
	require.NoError(t, err)
	assert.Contains(t, inputs, Input{Path: "tools/platform-cli-standin", Dir: true})

	install := InstallCommand(entries)
	assert.Equal(t, "ci", install[1], "the example commits its lock file")
	// the command lines the containers run: the Node.js check, the checks of
	// each output, the time limits
	run(t, ctx, app, CheckedInstall("this machine", entries)...)
	run(t, ctx, app, CheckedBuild(RunScript(DrawScript), WebDir)...)
	run(t, ctx, app, CheckedBuild(RunScript(NodeScript), NodeDir)...)
	cad, err := CodeAsDataCommand("platform-cli-standin", false, "snapshot", nil)
	require.NoError(t, err)
	run(t, ctx, app, CheckedBuild(cad, CodeAsDataDir)...)

	// dist/web: an index.html that loads built JS and CSS that exist.
	index, err := os.ReadFile(filepath.Join(app, WebDir, "index.html"))
	require.NoError(t, err)
	assets := regexp.MustCompile(`(?:src|href)="(assets/[^"]+)"`).FindAllStringSubmatch(string(index), -1)
	require.Len(t, assets, 2, "index.html loads one script and one stylesheet")
	for _, a := range assets {
		assert.FileExists(t, filepath.Join(app, WebDir, a[1]))
	}
	// dist/codeAsData, a project to deploy: the dependencies' code as data
	// and the project's snapshot, the import order, the versions.
	assert.FileExists(t, filepath.Join(app, CodeAsDataDir, "draw-standin", "draw.patch.json"))
	assert.FileExists(t, filepath.Join(app, CodeAsDataDir, "lowcode-example-app", "project.patch.json"))
	assert.JSONEq(t, `{"drawVersion":"2.14.0","runtimeVersion":"N/A"}`, readFile(t, filepath.Join(app, CodeAsDataDir, "version.json")))

	// The installed design-tool version is what labels the images.
	lsOut := runAllowFailure(t, ctx, app, drawversion.ListCommand("draw-standin")...)
	version, err := drawversion.InstalledVersion("draw-standin", []byte(lsOut))
	require.NoError(t, err)
	assert.Equal(t, "2.14.0", version)
	installed, err := os.ReadFile(filepath.Join(app, drawversion.InstalledManifest("draw-standin")))
	require.NoError(t, err, "npm links a file: dependency at the top of node_modules")
	version, err = drawversion.ManifestVersion("draw-standin", installed)
	require.NoError(t, err)
	assert.Equal(t, "2.14.0", version, "the installed package.json gives the version npm ls reports")

	// Each step run over only what package.json declares it reads (and what
	// the install read), as its container holds it, writes the same output.
	declared, err := m.StepInputs()
	require.NoError(t, err)
	require.Len(t, declared, 3, "the example declares the inputs of its three steps")
	for step, command := range map[string][]string{DrawScript: RunScript(DrawScript), NodeScript: RunScript(NodeScript), CodeAsDataVerb: cad} {
		dir := map[string]string{DrawScript: WebDir, NodeScript: NodeDir, CodeAsDataVerb: CodeAsDataDir}[step]
		t.Run("declared inputs of "+step, func(t *testing.T) {
			reduced := stepinputs.Project(t, app, inputPaths(inputs), declared[step])
			run(t, ctx, reduced, CheckedBuild(command, dir)...)
			assert.Equal(t, stepinputs.Tree(t, filepath.Join(app, dir)), stepinputs.Tree(t, filepath.Join(reduced, dir)))
		})
	}

	// Bricks: a library instead of a final project.
	cad, err = CodeAsDataCommand("platform-cli-standin", true, "snapshot", nil)
	require.NoError(t, err)
	run(t, ctx, app, cad...)
	assert.FileExists(t, filepath.Join(app, CodeAsDataDir, "lowcode-example-app", "project.patch.json"))
	assert.NoDirExists(t, filepath.Join(app, CodeAsDataDir, "draw-standin"), "a library holds the project's own code as data only")
	assert.NoFileExists(t, filepath.Join(app, CodeAsDataDir, "version.json"))

	// dist/node: a backend that starts with node and answers its health check.
	assertBackendServes(t, filepath.Join(app, NodeDir))
}

// TestTheInstallHasWhatNpmReads installs, with this machine's npm, a folder
// holding only the install inputs of a project, as the install container
// does, and checks what npm did there as it would in a checkout.
func TestTheInstallHasWhatNpmReads(t *testing.T) {
	_, err := exec.LookPath("npm")
	require.NoError(t, err, "the install test needs npm")
	const lock = `{"name":"p","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"p","version":"1.0.0"}}}`
	sourcesLeftOut := func(t *testing.T, dir string) {
		assert.NoFileExists(t, filepath.Join(dir, "src/index.js"), "sources are not install inputs")
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		lock  bool // have npm write the project's package-lock.json first: npm ci
		check func(t *testing.T, installDir string)
		built func(t *testing.T, projectDir string) // after the project is laid over the install, as the builds see it
	}{
		{
			// husky is not installed: the install fails unless the project's
			// ignore-scripts is honoured (a setting left behind would, say,
			// fail a tree that needs legacy-peer-deps)
			name: "the project's .npmrc is honoured",
			files: map[string]string{
				ManifestFile:        `{"name":"p","version":"1.0.0","scripts":{"prepare":"husky"}}`,
				"package-lock.json": lock,
				ProjectConfig:       "ignore-scripts=true\n",
			},
			check: sourcesLeftOut,
		},
		{
			name: "npm workspaces install from their package.json alone",
			files: map[string]string{
				ManifestFile:                `{"name":"p","version":"1.0.0","workspaces":["packages/*", "./apps/web/"]}`,
				"packages/ui/package.json":  `{"name":"ui","version":"1.0.0","main":"index.js"}`,
				"packages/ui/index.js":      "module.exports = 'ui ' + require('tokens')\n",
				"libs/tokens/package.json":  `{"name":"tokens","version":"1.0.0","main":"index.js"}`,
				"libs/tokens/index.js":      "module.exports = 'tokens'\n",
				"packages/app/package.json": `{"name":"app","version":"1.0.0","dependencies":{"ui":"1.0.0","tokens":"file:../../libs/tokens"}}`,
				"apps/web/package.json":     `{"name":"web","version":"1.0.0"}`,
			},
			lock: true,
			check: func(t *testing.T, dir string) {
				assert.FileExists(t, filepath.Join(dir, "package-lock.json"), "npm ci installed from the lock file")
				assert.NoFileExists(t, filepath.Join(dir, "packages/ui/index.js"), "a workspace's sources are not install inputs")
				assert.FileExists(t, filepath.Join(dir, "node_modules/ui/package.json"), "the workspace is linked")
				assert.FileExists(t, filepath.Join(dir, "node_modules/web/package.json"), "the workspace is linked")
			},
			built: func(t *testing.T, dir string) {
				assert.Equal(t, "ui tokens\n", run(t, context.Background(), dir, "node", "-e", "console.log(require('ui'))"),
					"with the project laid over the install, a workspace and its local dependency resolve")
				version, err := drawversion.InstalledVersion("tokens", []byte(runAllowFailure(t, context.Background(), dir, drawversion.ListCommand("tokens")...)))
				require.NoError(t, err, "a workspace's dependency is found in npm ls's tree")
				assert.Equal(t, "1.0.0", version)
			},
		},
		{
			name: "a workspace's command is linked",
			files: map[string]string{
				ManifestFile:                `{"name":"p","version":"1.0.0","workspaces":["packages/*"]}`,
				"packages/cli/package.json": `{"name":"cli","version":"1.0.0","bin":{"lp-cli":"cli.js"}}`,
				"packages/cli/cli.js":       "#!/usr/bin/env node\nconsole.log('cli ran')\n",
			},
			check: func(t *testing.T, dir string) {
				assert.FileExists(t, filepath.Join(dir, "node_modules/.bin/lp-cli"), "npm links a command whose file it finds")
			},
			built: func(t *testing.T, dir string) {
				assert.Equal(t, "cli ran\n", run(t, context.Background(), dir, "npm", "exec", "--offline", "--", "lp-cli"))
			},
		},
		{
			name: "a postinstall that runs a project file finds it",
			files: map[string]string{
				ManifestFile:        `{"name":"p","version":"1.0.0","scripts":{"postinstall":"node scripts/setup.mjs"}}`,
				"package-lock.json": lock,
				"scripts/setup.mjs": "import { writeFileSync } from 'node:fs'\nwriteFileSync('postinstall-ran', '')\n",
			},
			check: func(t *testing.T, dir string) { assert.FileExists(t, filepath.Join(dir, "postinstall-ran")) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project := t.TempDir()
			tc.files["src/index.js"] = "export {}\n"
			for name, text := range tc.files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(project, name)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(project, name), []byte(text), 0o644))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if tc.lock {
				run(t, ctx, project, "npm", "install", "--package-lock-only", "--no-audit", "--no-fund")
			}
			m, err := ParseManifest([]byte(tc.files[ManifestFile]))
			require.NoError(t, err)
			entries := readDirNames(t, project)
			inputs, err := m.InstallInputsWith(entries, workspacesOnDisk(t, project, m))
			require.NoError(t, err)
			installDir := filepath.Join(t.TempDir(), "install")
			for _, in := range inputs {
				if in.Dir {
					require.NoError(t, os.CopyFS(filepath.Join(installDir, in.Path), os.DirFS(filepath.Join(project, in.Path))))
					continue
				}
				data, err := os.ReadFile(filepath.Join(project, in.Path))
				require.NoError(t, err)
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(installDir, in.Path)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(installDir, in.Path), data, 0o644))
			}
			if tc.lock {
				require.Equal(t, "ci", InstallCommand(entries)[1])
			}
			run(t, ctx, installDir, InstallCommand(entries)...)
			tc.check(t, installDir)
			if tc.built == nil {
				return
			}
			if len(inputs) > 1 || inputs[0].Path != "." { // as build.go's install: the whole project is there already
				require.NoError(t, copyTree(project, installDir))
			}
			tc.built(t, installDir)
		})
	}
}

// workspacesOnDisk lists a project's workspaces as build.go's
// listWorkspaces does: every package.json, then those the patterns match.
func workspacesOnDisk(t *testing.T, project string, m *Manifest) Workspaces {
	globs, ok := m.WorkspaceGlobs()
	if !ok {
		return Workspaces{}
	}
	var found []string
	require.NoError(t, filepath.WalkDir(project, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == ManifestFile {
			rel, _ := filepath.Rel(project, p)
			found = append(found, filepath.ToSlash(rel))
		}
		return err
	}))
	ws := Workspaces{Listed: true}
	for _, rel := range WorkspaceManifests(globs, found) {
		dir, ok := WorkspaceDir(rel)
		if !ok {
			continue
		}
		data, err := os.ReadFile(filepath.Join(project, rel))
		require.NoError(t, err)
		wm, err := ParseManifestAt(rel, data)
		require.NoError(t, err)
		ws.Each = append(ws.Each, Workspace{Dir: dir, Manifest: wm})
	}
	return ws
}

// copyTree copies every file of src onto dst, keeping what dst has beside
// them, as Container.withDirectory does, and leaving out the top folders
// named in skip.
func copyTree(src, dst string, skip ...string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && slices.Contains(skip, rel) {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode())
	})
}

func assertBackendServes(t *testing.T, dir string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("node", "server.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	url := fmt.Sprintf("http://127.0.0.1:%d/health", port)
	var resp *http.Response
	require.Eventually(t, func() bool {
		resp, err = http.Get(url)
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, 200, resp.StatusCode)
	var health struct{ Status string }
	require.NoError(t, json.Unmarshal(body, &health))
	assert.Equal(t, "ok", health.Status)
}

// copyExample copies examples/app without its build products.
func copyExample(t *testing.T) string {
	src, err := filepath.Abs("../../examples/app")
	require.NoError(t, err)
	dst := filepath.Join(t.TempDir(), "app")
	require.NoError(t, copyTree(src, dst, "node_modules", "dist"))
	return dst
}

func readDirNames(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

func run(t *testing.T, ctx context.Context, dir string, args ...string) string {
	t.Helper()
	cmd := command(ctx, t, args) // the module's helpers on the PATH, as in its containers
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "CI=true", "NPM_CONFIG_UPDATE_NOTIFIER=false")
	var stderr strings.Builder
	cmd.Stderr = &stderr // npm's warnings (a global config it does not know, say) are not the command's output
	out, err := cmd.Output()
	require.NoError(t, err, "%s:\n%s%s", strings.Join(args, " "), out, stderr.String())
	return string(out)
}

func runAllowFailure(t *testing.T, ctx context.Context, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	out, _ := cmd.Output()
	return string(out)
}

func inputPaths(inputs []Input) []string {
	paths := make([]string, len(inputs))
	for i, in := range inputs {
		paths[i] = in.Path
	}
	return paths
}
