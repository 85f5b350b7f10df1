package nodebuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/steplimit"
)

// helpersBin installs Helpers in a folder, as the module does in the Node.js
// containers (steplimit.Dir), and returns it.
func helpersBin(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for name, text := range Helpers() {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755))
	}
	return bin
}

// command is cmd, as the engine's init starts it, with the helpers and the
// folders in path first on the PATH.
func command(ctx context.Context, t *testing.T, cmd []string, path ...string) *exec.Cmd {
	t.Helper()
	path = append(path, helpersBin(t), os.Getenv("PATH"))
	run := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	if full, err := lookIn(cmd[0], path); err == nil {
		run.Path, run.Err = full, nil
	}
	run.Env = append(os.Environ(), "PATH="+strings.Join(path, string(os.PathListSeparator)))
	return run
}

func lookIn(name string, path []string) (string, error) {
	for _, dir := range path {
		if dir == "" {
			continue
		}
		full := filepath.Join(dir, name)
		if info, err := os.Stat(full); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return full, nil
		}
	}
	return "", exec.ErrNotFound
}

// fakeNode puts a `node` that reports version on PATH, and an `npm` that
// records it ran.
func fakeNode(t *testing.T, version string) (dir, ran string) {
	t.Helper()
	dir = t.TempDir()
	ran = filepath.Join(dir, "npm-ran")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "node"), []byte("#!/bin/sh\necho "+version+"\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "npm"), []byte("#!/bin/sh\necho \"$@\" > "+ran+"\n"), 0o755))
	return dir, ran
}

func TestCheckedInstallChecksNodeThenInstallsInOneExec(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		wantCode      int
		wantErr       string
	}{
		{"Node.js 24 installs", "24.1.0", 0, ""},
		{"Node.js 20 is the oldest allowed", "20.0.0", 0, ""},
		{"Node.js 18 is refused before npm runs", "18.20.4", 3, "lowcode-pipeline: node image node:18 has Node.js v18.20.4: the platform needs 20 or above"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, ran := fakeNode(t, tc.version)
			cmd := CheckedInstall("node:18", []string{"package.json", "package-lock.json"})
			assert.Equal(t, InstallHelper, cmd[0], "the engine's progress names the module's command, not a script")
			out, err := command(context.Background(), t, cmd, bin).CombinedOutput()
			if tc.wantCode == 0 {
				require.NoError(t, err, string(out))
				got, err := os.ReadFile(ran)
				require.NoError(t, err)
				assert.Equal(t, "ci --no-audit --no-fund\n", string(got), "npm ci with the lock file")
				return
			}
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit)
			assert.Equal(t, tc.wantCode, exit.ExitCode())
			assert.Contains(t, string(out), tc.wantErr)
			assert.NoFileExists(t, ran, "npm never ran")
		})
	}
}

func TestCheckedBuildFailsAStepThatWroteNothing(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		wantCode     int
		wantErr      string
	}{
		{"a step that writes its output", "mkdir -p dist/web && echo x > dist/web/index.html", 0, ""},
		{"a step that writes nothing", "true", 4, "lowcode-pipeline: sh -c true exited 0 but left dist/web missing or empty"},
		{"a step named as it is, backslashes and all", `true \c`, 4, `lowcode-pipeline: sh -c true \c exited 0 but left dist/web missing or empty`},
		{"a step that leaves the folder empty", "mkdir -p dist/web", 4, "left dist/web missing or empty"},
		{"a failing step keeps its own exit code", "echo broken >&2; exit 2", 2, "broken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := CheckedBuild([]string{"sh", "-c", tc.script}, WebDir)
			assert.Equal(t, []string{BuildHelper, WebDir, "sh", "-c", tc.script}, cmd, "the engine's progress shows the step itself")
			exits(t, cmd, tc.wantCode, tc.wantErr)
		})
	}
}

func TestTheCodeAsDataStepFailsWithoutTheProjectsOwnFolder(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		wantCode     int
		wantErr      string
	}{
		{"the project's own code as data beside its dependencies'", "mkdir -p dist/codeAsData/acme.app dist/codeAsData/olympeio.draw && echo x > dist/codeAsData/acme.app/p.json && echo y > dist/codeAsData/olympeio.draw/d.json", 0, ""},
		{"the dependencies' only, as the toolkit writes it from a missing snapshot folder", "mkdir -p dist/codeAsData/olympeio.draw && echo y > dist/codeAsData/olympeio.draw/d.json", 4,
			"exited 0 but left no dist/codeAsData/acme.app: the project's own code as data, from its snapshot folder, would not be deployed"},
		{"the project's folder left empty", "mkdir -p dist/codeAsData/acme.app && echo y > dist/codeAsData/import_order.json", 4, "left no dist/codeAsData/acme.app"},
		{"nothing at all is the plain check's", "true", 4, "left dist/codeAsData missing or empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exits(t, CheckedBuildHolding([]string{"sh", "-c", tc.script}, CodeAsDataDir, "acme.app"), tc.wantCode, tc.wantErr)
		})
	}
	assert.Equal(t, CheckedBuild([]string{"x"}, CodeAsDataDir), CheckedBuildHolding([]string{"x"}, CodeAsDataDir, ""), "a project without a name has no folder to look for")
}

// exits runs cmd in an empty folder and checks its exit code and, when it
// fails, that its output holds wantErr.
func exits(t *testing.T, cmd []string, wantCode int, wantErr string) {
	t.Helper()
	run := command(context.Background(), t, cmd)
	run.Dir = t.TempDir()
	out, err := run.CombinedOutput()
	if wantCode == 0 {
		assert.NoError(t, err, string(out))
		return
	}
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, wantCode, exit.ExitCode())
	assert.Contains(t, string(out), wantErr)
}

func TestCheckedBuildLeavesItsOutputReadableByAll(t *testing.T) {
	dir := t.TempDir()
	// a tool run with umask 077: private files and folders, one command
	step := `umask 077 && mkdir -p dist/web/assets && echo x > dist/web/index.html && echo y > dist/web/assets/app.js &&
printf '#!/bin/sh\n' > dist/web/run.sh && chmod 700 dist/web/run.sh && chmod 666 dist/web/assets/app.js`
	run := command(context.Background(), t, CheckedBuild([]string{"sh", "-c", step}, WebDir))
	run.Dir = dir
	out, err := run.CombinedOutput()
	require.NoError(t, err, string(out))
	for path, want := range map[string]os.FileMode{
		"dist/web":               os.ModeDir | 0o755,
		"dist/web/assets":        os.ModeDir | 0o755,
		"dist/web/index.html":    0o644,
		"dist/web/assets/app.js": 0o644, // writable by its owner only
		"dist/web/run.sh":        0o755, // a command stays one
	} {
		info, err := os.Stat(filepath.Join(dir, path))
		require.NoError(t, err)
		assert.Equal(t, want.String(), info.Mode().String(), path)
	}
}

// The install and the builds run their command under the project's time
// limit: a stand-in for it records what it was given.
func TestProjectCommandsRunWithinTheProjectTimeLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  []string
		want string
	}{
		{"the install", CheckedInstall("node:24", []string{"package.json", "package-lock.json"}), "npm ci --no-audit --no-fund"},
		{"a build", CheckedBuild(RunScript(DrawScript), WebDir), "npm run build:draw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, _ := fakeNode(t, "24.1.0")
			got := filepath.Join(t.TempDir(), "limited")
			// first on the PATH: it stands in for the installed limit
			require.NoError(t, os.WriteFile(filepath.Join(bin, steplimit.Name(steplimit.Project)),
				[]byte("#!/bin/sh\necho \"$*\" > "+got+"\nexit 9\n"), 0o755))
			run := command(context.Background(), t, tc.cmd, bin)
			run.Dir = t.TempDir()
			_ = run.Run()
			said, err := os.ReadFile(got)
			require.NoError(t, err, "the command ran under %s", steplimit.Name(steplimit.Project))
			assert.Equal(t, tc.want+"\n", string(said))
		})
	}
}

func TestHelpersAreScriptsNamedAsTheirCommands(t *testing.T) {
	helpers := Helpers()
	assert.Equal(t, []string{BuildHelper, InstallHelper, steplimit.Name(steplimit.Tool), steplimit.Name(steplimit.Project)}, steplimit.Names(helpers))
	for name, text := range helpers {
		assert.True(t, strings.HasPrefix(text, "#!/bin/sh\n# "+name+" "), "%s starts with #!/bin/sh and says what it does", name)
	}
}

func TestTheHelpersHandNodeTheSystemsCABundle(t *testing.T) {
	_, statErr := os.Stat(SystemCABundle)
	bundleHere := statErr == nil
	for _, tc := range []struct {
		name, preset string
		want         string
	}{
		// the engine installs its custom CAs in the system's bundle; Node.js
		// reads it only when told to
		{"no value: the system's bundle, where this machine has one", "", map[bool]string{true: SystemCABundle, false: ""}[bundleHere]},
		{"the image's or user's own value is kept", "/opt/corp/ca.pem", "/opt/corp/ca.pem"},
	} {
		for _, helper := range []string{InstallHelper, BuildHelper} {
			t.Run(tc.name+"/"+helper, func(t *testing.T) {
				bin, _ := fakeNode(t, "24.1.0")
				work := t.TempDir()
				seen := filepath.Join(work, "seen")
				step := `mkdir -p out && touch out/x && printf %s "$NODE_EXTRA_CA_CERTS" > ` + seen
				arg := "node:24"
				if helper == BuildHelper {
					arg = "out"
				}
				run := command(context.Background(), t, []string{helper, arg, "sh", "-c", step}, bin)
				run.Dir = work
				run.Env = append(run.Env, "NODE_EXTRA_CA_CERTS="+tc.preset)
				out, err := run.CombinedOutput()
				require.NoError(t, err, "%s", out)
				got, err := os.ReadFile(seen)
				require.NoError(t, err)
				assert.Equal(t, tc.want, string(got))
			})
		}
	}
}
