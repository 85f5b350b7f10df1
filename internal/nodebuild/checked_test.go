package nodebuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/steplimit"
)

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
			run := exec.Command(cmd[0], cmd[1:]...)
			run.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
			out, err := run.CombinedOutput()
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
			run := exec.Command(cmd[0], cmd[1:]...)
			run.Dir = t.TempDir()
			out, err := run.CombinedOutput()
			if tc.wantCode == 0 {
				assert.NoError(t, err, string(out))
				return
			}
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit)
			assert.Equal(t, tc.wantCode, exit.ExitCode())
			assert.Contains(t, string(out), tc.wantErr)
		})
	}
}

func TestCheckedBuildLeavesItsOutputReadableByAll(t *testing.T) {
	dir := t.TempDir()
	// a tool run with umask 077: private files and folders, one command
	step := `umask 077 && mkdir -p dist/web/assets && echo x > dist/web/index.html && echo y > dist/web/assets/app.js &&
printf '#!/bin/sh\n' > dist/web/run.sh && chmod 700 dist/web/run.sh && chmod 666 dist/web/assets/app.js`
	cmd := CheckedBuild([]string{"sh", "-c", step}, WebDir)
	run := exec.Command(cmd[0], cmd[1:]...)
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

func TestProjectCommandsRunWithinTheProjectTimeLimit(t *testing.T) {
	install := InstallCommand([]string{"package.json", "package-lock.json"})
	build := RunScript(DrawScript)
	for _, tc := range []struct {
		name  string
		cmd   []string
		limit []string
	}{
		{"the install", CheckedInstall("node:24", []string{"package.json", "package-lock.json"}), steplimit.Within(steplimit.Project, install)},
		{"a build", CheckedBuild(build, WebDir), steplimit.Within(steplimit.Project, build)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Greater(t, len(tc.cmd), len(tc.limit))
			assert.Equal(t, tc.limit, tc.cmd[len(tc.cmd)-len(tc.limit):], "the command runs under steplimit.Within")
		})
	}
}
