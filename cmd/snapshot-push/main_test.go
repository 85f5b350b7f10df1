package main

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

	"dagger/lowcode-pipeline/internal/gitsync"
	"dagger/lowcode-pipeline/internal/gittest"
)

func TestRunPushesWithTheRenderedMessageAndPrintsTheResult(t *testing.T) {
	r := gittest.NewRemote(t)
	snap := t.TempDir()
	gittest.Write(t, filepath.Join(snap, "00000000000000000001/p.patch.json"), "{}")
	env := func(k string) string {
		if k == "GIT_TOKEN" {
			return gittest.Token
		}
		return os.Getenv(k)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{
		"-remote", r.URL, "-branch", "main", "-output-dir", "codeasdata/main", "-snapshot", snap,
		"-message", "snapshot of {folder} at {date}", "-allow-http",
	}, env, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())

	var res gitsync.Result
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	assert.True(t, res.Changed)
	assert.Equal(t, "main", res.Branch)
	subject := gittest.Git(t, r.Checkout(t), "log", "-1", "--format=%s")
	assert.Regexp(t, regexp.MustCompile(`^snapshot of codeasdata/main at \d{4}\.\d{2}\.\d{2} (0[1-9]|1[0-2]):\d{2}:\d{2}$`), subject)
	assert.NotContains(t, stderr.String(), gittest.Token)
}

func TestRunFailsWithoutTheTokenAndSaysWhy(t *testing.T) {
	r := gittest.NewRemote(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{
		"-remote", r.URL, "-branch", "main", "-output-dir", "o", "-snapshot", t.TempDir(), "-message", "m", "-allow-http",
	}, func(string) string { return "" }, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "the server refused the credentials")
	assert.Empty(t, stdout.String())
}

func TestRunRefusesUnknownFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"-force"}, os.Getenv, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "flag provided but not defined: -force")
}
