package realtoolkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
)

// The toolkit the module is held to, pinned; the example's stand-in says
// which version it speaks.
const (
	toolkitName    = "@olympeio/toolkit"
	toolkitVersion = "1.2.3"
	toolkit        = toolkitName + "@" + toolkitVersion
	standin        = "platform-cli-standin"
)

var real, example string // a project with the real toolkit installed; examples/app installed

func TestMain(m *testing.M) {
	code, err := setUp()
	if err != nil {
		fmt.Fprintln(os.Stderr, "realtoolkit:", err)
		os.Exit(1)
	}
	os.Exit(code(m))
}

func setUp() (func(*testing.M) int, error) {
	dir, err := os.MkdirTemp("", "realtoolkit-")
	if err != nil {
		return nil, err
	}
	real, example = filepath.Join(dir, "real"), filepath.Join(dir, "app")
	files := map[string]string{
		"package.json": `{"name":"@acme/real-app","version":"1.0.0","private":true,"devDependencies":{"` + toolkitName + `":"` + toolkitVersion + `"}}`,
		// a project's code as data as the toolkit's snapshot writes it: <root tag>/<folder>/…
		"snapshot/018a88a4d5312b1501c6/Home/screen.newInst.json": `{"id":"018a88a4d5312b1501c7"}`,
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(real, name)), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(real, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	if out, err := exec.Command("cp", "-a", "../../../examples/app", example).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("copy examples/app: %v: %s", err, out)
	}
	for _, step := range []struct {
		dir  string
		args []string
	}{{real, []string{"npm", "install", "--no-audit", "--no-fund"}}, {example, []string{"npm", "ci", "--no-audit", "--no-fund"}}} {
		if _, stderr, err := run(step.dir, 5*time.Minute, nil, step.args...); err != nil {
			return nil, fmt.Errorf("%s in %s: %v: %s", strings.Join(step.args, " "), step.dir, err, stderr)
		}
	}
	return func(m *testing.M) int {
		defer os.RemoveAll(dir)
		return m.Run()
	}, nil
}

// toolkitEnv are the environment variables the toolkit reads its options'
// defaults from (and its snapshot process's): none of the machine's reaches it.
var toolkitEnv = regexp.MustCompile(`^(ORCHESTRATOR_|DRAW_|RABBITMQ_|SNAPSHOT|DUMP_BINARY_FILES|LOG_LEVEL|SAVE_LOGS|RUNNING_IN_DOCKER|DOWNLOAD_FOLDER|LOAD_PATCHES_DEBUG|IGNORE_RELATION_FAIL|BACKUP_|RESET_DB_TIMEOUT|UPDATE_|GRAPHDEF_)`)

// run runs args in dir with the machine's environment less what the toolkit
// reads (npm keeps its proxy and CA settings), plus env, within limit.
func run(dir string, limit time.Duration, env []string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !toolkitEnv.MatchString(kv) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "CI=true", "NO_COLOR=1", "NPM_CONFIG_UPDATE_NOTIFIER=false"), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s did not finish within %s", strings.Join(args, " "), limit)
	}
	return out.String(), errOut.String(), err
}

func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// helpOption is one option line of commander's help: its flags, then its
// description, which may end in its default.
var helpOption = regexp.MustCompile(`^\s+((?:-[\w]+, )?--[\w.]+(?: <\w+>)?)\s{2,}.*?(?:\(default: (.*)\))?$`)

// options are the options a command's --help lists, each with its default.
func options(t *testing.T, help string) map[string]string {
	t.Helper()
	opts := map[string]string{}
	for _, line := range strings.Split(help, "\n") {
		if m := helpOption.FindStringSubmatch(line); m != nil {
			opts[m[1]] = m[2]
		}
	}
	require.NotEmpty(t, opts, "no option in:\n%s", help)
	return opts
}

// The stand-in answers the commands the module runs with the real toolkit's
// options: the same flags, short aliases, value names and defaults.
func TestTheStandinHasTheRealToolkitsOptions(t *testing.T) {
	for _, command := range []string{nodebuild.CodeAsDataVerb, nodebuild.SnapshotVerb} {
		t.Run(command, func(t *testing.T) {
			realHelp, stderr, err := run(real, time.Minute, nil, "npx", "--yes", toolkit, command, "--help")
			require.NoError(t, err, stderr)
			standinHelp, stderr, err := run(example, time.Minute, nil, "npx", "--yes", standin, command, "--help")
			require.NoError(t, err, stderr)
			assert.Equal(t, options(t, realHelp), options(t, standinHelp))
		})
	}
}

// An option neither knows fails alike: commander's error, exit code 1.
func TestAnUnknownOptionFailsAlike(t *testing.T) {
	for _, dir := range []struct{ name, dir, cli string }{{"the real toolkit", real, toolkit}, {"the stand-in", example, standin}} {
		t.Run(dir.name, func(t *testing.T) {
			_, stderr, err := run(dir.dir, time.Minute, nil, "npx", "--yes", dir.cli, nodebuild.CodeAsDataVerb, "--bricks")
			assert.Equal(t, 1, exitCode(err))
			var own []string // what the command wrote, npm's own warnings aside
			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !strings.HasPrefix(line, "npm warn ") {
					own = append(own, line)
				}
			}
			assert.Equal(t, []string{"error: unknown option '--bricks'"}, own)
		})
	}
}

// buildCodeAsData, as the module runs it for a project and for bricks, runs
// for real: it needs no platform.
func TestTheModulesCodeAsDataCommandsRunForReal(t *testing.T) {
	for _, tc := range []struct {
		name        string
		bricks      bool
		versionFile bool
	}{
		{"a project to deploy", false, true},
		{"a library of bricks", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, err := nodebuild.CodeAsDataCommand(toolkit, tc.bricks, nodebuild.DefaultSnapshotDir, nil)
			require.NoError(t, err)
			_, stderr, err := run(real, 2*time.Minute, nil, cmd...)
			require.NoError(t, err, "%s: %s", strings.Join(cmd, " "), stderr)
			out := filepath.Join(real, nodebuild.CodeAsDataDir)
			assert.FileExists(t, filepath.Join(out, "import_order.json"))
			own := (&nodebuild.Manifest{Name: "@acme/real-app"}).OwnCodeAsData()
			assert.FileExists(t, filepath.Join(out, own, "screen.newInst.json"), "the project's own code as data, each root tag's Home merged, where the module looks for it")
			if tc.versionFile {
				assert.FileExists(t, filepath.Join(out, "version.json"))
			} else {
				assert.NoFileExists(t, filepath.Join(out, "version.json"), "a library carries no versions")
			}
		})
	}
}

// snapshot, as the module runs it (its configuration where the module
// mounts it, the orchestrator in the environment), gets past its options and
// its configuration and fails on the connection alone: no orchestrator
// listens there. The password never shows.
func TestTheModulesSnapshotCommandFailsOnTheConnectionOnly(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close()) // nothing listens there now
	const password = "orchestrator-password-4711"
	var env []string
	for _, kv := range (snapshotconfig.Orchestrator{User: "ci", Host: "127.0.0.1", Port: port}).Env() {
		env = append(env, kv[0]+"="+kv[1])
	}
	env = append(env, snapshotconfig.PasswordEnv+"="+password)

	// --config a file: the module's configuration over it; a folder: the
	// module's configuration as its only file (snapshotconfig.FolderFile)
	for _, tc := range []struct{ name, config, written, outputDir string }{
		{"a configuration file", snapshotconfig.DefaultPath, snapshotconfig.DefaultPath, "snapshot-out"},
		{"a configuration folder, which the toolkit reads recursively", "res/snapshots", "res/snapshots/" + snapshotconfig.FolderFile, "snapshot-folder-out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := `[{"snapshooter": {"name": "ci", "rootTags": ["018a88a4d5312b1501c6"], "outputDir": "` + tc.outputDir + `"}}]`
			entries, err := snapshotconfig.Parse([]byte(config))
			require.NoError(t, err, "a real configuration, hexadecimal root tags, validates")
			forCLI, err := snapshotconfig.ForCLI(entries, false, "", "")
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(real, tc.written)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(real, tc.written), forCLI, 0o644))

			cmd, err := nodebuild.SnapshotCommand(toolkit, tc.config)
			require.NoError(t, err)
			stdout, stderr, err := run(real, 2*time.Minute, env, cmd...)
			assert.Equal(t, 1, exitCode(err), "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stdout, "Failed connect to the server within 15000 ms", "it tried the orchestrator it was given")
			for _, never := range []string{"unknown option", "Cannot find the snapshot config", password} {
				assert.NotContains(t, stdout+stderr, never)
			}
			assert.DirExists(t, filepath.Join(real, tc.outputDir, "018a88a4d5312b1501c6"), "it read the configuration the module gave it")
		})
	}
}

// examples/olympe, a project of the vendor's packages laid out as the
// platform's template (no lock file, the toolkit and the design tool in its
// devDependencies, its code as data in the toolkit's default folder),
// builds its three outputs as the module's steps run them: the install the
// module picks, the template's script names, and buildCodeAsData run by the
// toolkit the module takes from package.json, under the module's own check
// that the project's code as data is in the output.
func TestTheTemplateShapedExampleBuildsItsThreeOutputs(t *testing.T) {
	app := filepath.Join(t.TempDir(), "olympe")
	out, err := exec.Command("cp", "-a", "../../../examples/olympe", app).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, os.RemoveAll(filepath.Join(app, "node_modules")))
	require.NoError(t, os.RemoveAll(filepath.Join(app, "dist")))
	data, err := os.ReadFile(filepath.Join(app, nodebuild.ManifestFile))
	require.NoError(t, err)
	manifest, err := nodebuild.ParseManifest(data)
	require.NoError(t, err)
	entries, err := os.ReadDir(app)
	require.NoError(t, err)
	var root []string
	for _, e := range entries {
		root = append(root, e.Name())
	}
	require.False(t, nodebuild.Locked(root), "the template commits no lock file")
	install := nodebuild.InstallCommand(root)
	require.Equal(t, []string{"npm", "install"}, install[:2])
	for _, step := range [][]string{install, nodebuild.RunScript(nodebuild.DrawScript), nodebuild.RunScript(nodebuild.NodeScript)} {
		_, stderr, err := run(app, 10*time.Minute, nil, step...)
		require.NoError(t, err, "%s: %s", strings.Join(step, " "), stderr)
	}
	assert.FileExists(t, filepath.Join(app, nodebuild.WebDir, "main.js"))
	assert.FileExists(t, filepath.Join(app, nodebuild.WebDir, "index.html"), "the frontend image's document root")
	assert.FileExists(t, filepath.Join(app, nodebuild.NodeDir, "main.js"), "the backend the platform runs: /home/node/app/main.js")

	bin := helpers(t)
	cad := filepath.Join(app, nodebuild.CodeAsDataDir)
	own := manifest.OwnCodeAsData()
	require.Equal(t, "olympe-example", own)
	for _, tc := range []struct {
		name        string
		bricks      bool
		snapshotDir string
		versions    string   // version.json, "" for none
		folders     []string // "" for a step the module fails
	}{
		{"a project to deploy", false, nodebuild.DefaultSnapshotDir, `{"drawVersion":"2.9.2","runtimeVersion":"9.10.7"}`, []string{"olympeio.core", "olympeio.draw", "olympeio.runtime", own}},
		{"a library of bricks", true, nodebuild.DefaultSnapshotDir, "", []string{own}},
		// the real toolkit exits 0 with the dependencies' code as data only: the module's check fails the step
		{"a folder that does not exist", false, "no-such-folder", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			toolkit := manifest.Tool("", nodebuild.ToolkitPackage)
			require.Equal(t, nodebuild.ToolkitPackage, toolkit, "the toolkit the project installed")
			cmd, err := nodebuild.CodeAsDataCommand(toolkit, tc.bricks, tc.snapshotDir, nil)
			require.NoError(t, err)
			checked := nodebuild.CheckedBuildHolding(cmd, nodebuild.CodeAsDataDir, own)
			checked[0] = filepath.Join(bin, checked[0]) // the helpers call each other through PATH
			require.NoError(t, os.RemoveAll(cad))
			_, stderr, err := run(app, 5*time.Minute, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, checked...)
			if tc.folders == nil {
				assert.Equal(t, 4, exitCode(err), stderr)
				assert.Contains(t, stderr, "left no dist/codeAsData/olympe-example: the project's own code as data, from its snapshot folder, would not be deployed")
				return
			}
			require.NoError(t, err, "%s: %s", strings.Join(checked, " "), stderr)
			entries, err := os.ReadDir(cad)
			require.NoError(t, err)
			var folders []string
			for _, e := range entries {
				if e.IsDir() {
					folders = append(folders, e.Name())
				}
			}
			assert.ElementsMatch(t, tc.folders, folders)
			assert.FileExists(t, filepath.Join(cad, own, "screen.newInst.json"), "the project's snapshot, its root tag's Home")
			if tc.versions == "" {
				assert.NoFileExists(t, filepath.Join(cad, "version.json"))
				return
			}
			data, err := os.ReadFile(filepath.Join(cad, "version.json"))
			require.NoError(t, err)
			assert.JSONEq(t, tc.versions, string(data), "the design tool's version, which labels the images")
		})
	}
}

// helpers installs the module's helper commands (nodebuild.Helpers) in a
// folder, as the module does in its Node.js containers, and returns it.
func helpers(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for name, text := range nodebuild.Helpers() {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755))
	}
	return bin
}
