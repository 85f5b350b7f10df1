package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/snapshotconfig"
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
	before := time.Now().UTC().Truncate(time.Second)
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
	after := time.Now().UTC()
	subject := gittest.Git(t, r.Checkout(t), "log", "-1", "--format=%s")
	date, ok := strings.CutPrefix(subject, "snapshot of codeasdata/main at ")
	require.True(t, ok, subject)
	// {date} is the push's time in UTC on the 24-hour clock (snapshotconfig.DateLayout)
	at, err := time.Parse(snapshotconfig.DateLayout, date)
	require.NoError(t, err, subject)
	assert.False(t, at.Before(before) || at.After(after), "{date} %s is the push's time, between %s and %s", date, before.Format(time.TimeOnly), after.Format(time.TimeOnly))
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
