package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/snapshotpush"
	"dagger/lowcode-pipeline/internal/testsupport/gittest"
)

func batchFile(t *testing.T, b snapshotpush.Batch) string {
	data, err := json.Marshal(b)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "batch.json")
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

func TestRunPushesWithTheRenderedMessageAndPrintsTheReport(t *testing.T) {
	r := gittest.NewRemote(t)
	snap := t.TempDir()
	gittest.Write(t, filepath.Join(snap, "00000000000000000001/p.patch.json"), "{}")
	env := func(k string) string {
		if k == "GIT_TOKEN_0" {
			return gittest.Token
		}
		return ""
	}
	var stdout, stderr bytes.Buffer
	code := SnapshotPush(context.Background(), []string{"-batch", batchFile(t, snapshotpush.Batch{
		MaxAttempts: 5, MaxDeleteRatio: 1, Timeout: "2m", AllowHTTP: true,
		Entries: []snapshotpush.Entry{{Name: "main", Remote: r.URL, Branch: "main", OutputDir: "codeasdata/main", Snapshot: snap,
			Message: "snapshot of {folder} at {date}", Username: "x-token-auth", TokenEnv: "GIT_TOKEN_0"}},
	})}, env, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())

	var report snapshotpush.Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &report))
	require.Len(t, report.Entries, 1)
	assert.Equal(t, "pushed", report.Entries[0].Outcome)
	subject := gittest.Git(t, r.Checkout(t), "log", "-1", "--format=%s")
	assert.Regexp(t, regexp.MustCompile(`^snapshot of codeasdata/main at \d{4}\.\d{2}\.\d{2} (0[1-9]|1[0-2]):\d{2}:\d{2}$`), subject)
	assert.Equal(t, []string{"x-token-auth"}, r.Users())
	assert.NotContains(t, stderr.String()+stdout.String(), gittest.Token)
}

func TestRunPrintsTheReportAndFailsWhenAnEntryFails(t *testing.T) {
	r := gittest.NewRemote(t)
	snap := t.TempDir()
	gittest.Write(t, filepath.Join(snap, "p.patch.json"), "{}")
	var stdout, stderr bytes.Buffer
	code := SnapshotPush(context.Background(), []string{"-batch", batchFile(t, snapshotpush.Batch{
		MaxAttempts: 1, MaxDeleteRatio: 1, Timeout: "1m", AllowHTTP: true,
		Entries: []snapshotpush.Entry{{Name: "main", Remote: r.URL, Branch: "main", OutputDir: "o", Snapshot: snap, Message: "m", TokenEnv: "NONE"}},
	})}, func(string) string { return "" }, &stdout, &stderr)
	assert.Equal(t, 1, code)
	var report snapshotpush.Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &report), "the report is printed whatever happened")
	assert.Contains(t, report.Entries[0].Outcome, "the server refused the credentials")
	assert.Contains(t, stderr.String(), "an entry failed")
}

func TestRunRefusesUnknownFlagsAndMissingBatches(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, SnapshotPush(context.Background(), []string{"-force"}, os.Getenv, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "flag provided but not defined: -force")
	assert.Equal(t, 2, SnapshotPush(context.Background(), []string{"-batch", "/nonexistent"}, os.Getenv, &stdout, &stderr))
}
