package snapshotpush

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
	"dagger/lowcode-pipeline/internal/testsupport/gittest"
)

// These tests run examples/app's stand-in platform CLI with this machine's
// Node.js, as the module runs it, against the real git server.

func exampleApp(t *testing.T) string {
	_, err := exec.LookPath("node")
	require.NoError(t, err, "these tests run the stand-in CLI with Node.js")
	app := filepath.Join(t.TempDir(), "app")
	require.NoError(t, exec.Command("cp", "-a", "../../examples/app", app).Run())
	require.NoError(t, os.RemoveAll(filepath.Join(app, "node_modules")))
	install := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	install.Dir = app
	out, err := install.CombinedOutput()
	require.NoError(t, err, "npm ci: %s", out)
	return app
}

// standinSnapshot runs the toolkit's snapshot as the module runs it.
func standinSnapshot(t *testing.T, app string, env ...string) {
	cmd, err := nodebuild.SnapshotCommand("platform-cli-standin", snapshotconfig.DefaultPath)
	require.NoError(t, err)
	run := exec.Command(cmd[0], cmd[1:]...)
	run.Dir = app
	run.Env = append(os.Environ(), append([]string{"SNAPSHOT_REPOSITORIES=" + t.TempDir()}, env...)...)
	out, err := run.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// The stand-in does what the interface says when it sees a git section: it
// clones and pushes by itself, with the token in the URL. What the module
// hands it has no git section, so it never does.
func TestThePlatformCLIGetsNoGitSection(t *testing.T) {
	r, ca := gittest.NewTLSRemote(t)
	app := exampleApp(t)
	repo := strings.Replace(r.URL, "https://", "https://x-access-token:"+gittest.Token+"@", 1)
	config := `[{"snapshooter": {"name": "Orders", "rootTags": ["00000000000000000001"], "outputDir": "codeasdata/main"},
		"git": {"repo": "` + repo + `", "branch": "main", "commitMessage": "standin {folder}"}}]`
	configPath := filepath.Join(app, snapshotconfig.DefaultPath)
	require.NoError(t, os.WriteFile(configPath, []byte(config), 0o644))

	standinSnapshot(t, app, "GIT_SSL_CAINFO="+ca)
	require.EqualValues(t, 1, r.Pushes.Load(), "given git, the stand-in pushes by itself, as the interface says")

	entries, err := snapshotconfig.Parse([]byte(config))
	require.NoError(t, err)
	forCLI, err := snapshotconfig.ForCLI(entries, false, "", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(configPath, forCLI, 0o644))
	standinSnapshot(t, app, "GIT_SSL_CAINFO="+ca)
	assert.EqualValues(t, 1, r.Pushes.Load(), "what the module gives the CLI makes it push nothing")
	assert.FileExists(t, filepath.Join(app, "codeasdata/main/00000000000000000001/Home/project.patch.json"), "it only writes the patch files")
	assert.NotContains(t, string(forCLI), gittest.Token)
}

// A CI checkout's copy of outputDir (another branch's, say) holds a file the
// platform no longer has. The module empties each outputDir before the
// toolkit runs (the real one empties it too; a toolkit that only wrote what it
// exports would not), so that file never reaches the remote.
func TestAStaleOutputDirNeverReachesTheRemote(t *testing.T) {
	r := gittest.NewRemote(t)
	app := exampleApp(t)
	data, err := os.ReadFile(filepath.Join(app, snapshotconfig.DefaultPath))
	require.NoError(t, err)
	entries, err := snapshotconfig.Parse(data)
	require.NoError(t, err)
	stale := filepath.Join(app, "snapshot/00000000000000000001/Home/deleted-on-the-platform.patch.json")
	gittest.Write(t, stale, "{}")
	for _, e := range entries { // what runSnapshot does before the CLI runs
		require.NoError(t, os.RemoveAll(filepath.Join(app, e.Snapshooter.OutputDir)))
	}
	standinSnapshot(t, app)
	collected := filepath.Join(t.TempDir(), "snapshots")
	collect := snapshotconfig.CollectCommand(entries, collected)
	cmd := exec.Command(collect[0], collect[1:]...)
	cmd.Dir = app
	counts, err := cmd.Output()
	require.NoError(t, err)
	_, err = snapshotconfig.CheckWritten(entries, string(counts), false)
	require.NoError(t, err)

	report := Run(context.Background(), Batch{MaxAttempts: 1, MaxDeleteRatio: 1, Timeout: "1m", AllowHTTP: true, Entries: []Entry{{
		Name: "orders", Remote: r.URL, Branch: "main", OutputDir: "snapshot", Snapshot: snapshotconfig.Collected(collected, 0),
		Message: "snapshot {folder}", TokenEnv: "GIT_TOKEN",
	}}}, env, time.Now(), nil)
	require.False(t, report.Failed(), report.Summary())
	co := r.Checkout(t)
	assert.FileExists(t, filepath.Join(co, "snapshot/00000000000000000001/Home/project.patch.json"))
	assert.NoFileExists(t, filepath.Join(co, "snapshot/00000000000000000001/Home/deleted-on-the-platform.patch.json"))
	assert.NoDirExists(t, filepath.Join(co, "snapshot/00000000000000000001/Home/00000000000000000003"), "the excluded folder stays out")
}
