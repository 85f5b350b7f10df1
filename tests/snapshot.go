package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"dagger/tests/internal/dagger"
)

const stalePatch = "snapshot/00000000000000000001/Home/deleted-on-the-platform.patch.json"

// snapshot writes each entry's roots, less the excluded folders, into its outputDir, and its changes delete what the platform no longer has.
// +check
func (t *Tests) SnapshotWritesTheOutputDirs(ctx context.Context) error {
	source := t.app().WithNewFile(stalePatch, "{}")
	// each read below a query of its own: snapshot runs once in the session
	snap := dag.LowcodePipeline().Snapshot(dagger.LowcodePipelineSnapshotOpts{Source: source, Toolkit: toolkit})
	changes := snap.Changes()
	got, err := changes.After().Glob(ctx, "snapshot/**/*.patch.json")
	if err != nil {
		return err
	}
	want := []string{
		"snapshot/00000000000000000001/Home/00000000000000000002/orders-table.patch.json",
		"snapshot/00000000000000000001/Home/project.patch.json",
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("snapshot wrote %v, want %v (the excluded folder and the stale file left out)", got, want)
	}
	removed, err := changes.RemovedPaths(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(removed, stalePatch) {
		return fmt.Errorf("the changes remove %v, not the stale %s", removed, stalePatch)
	}
	applied := source.WithChanges(changes)
	if gone, err := applied.Exists(ctx, stalePatch); err != nil || gone {
		return fmt.Errorf("applying the changes kept %s (err %v)", stalePatch, err)
	}
	if kept, err := applied.Exists(ctx, "package.json"); err != nil || !kept {
		return fmt.Errorf("applying the changes touched files outside the outputDirs")
	}
	summary, err := snap.Summary(ctx)
	if err != nil {
		return err
	}
	if !strings.Contains(summary, "snapshot, 2 files") {
		return fmt.Errorf("the snapshot's summary %q does not count the files", summary)
	}
	return nil
}

// push refuses a configuration without git sections.
// +check
func (t *Tests) SnapshotPushNeedsGitSection(ctx context.Context) error {
	_, err := dag.LowcodePipeline().Snapshot(dagger.LowcodePipelineSnapshotOpts{Source: t.app(), Toolkit: toolkit}).Push().Summary(ctx)
	return fails("no git section", err, "no entry has a git section")
}

// push commits to a self-hosted HTTPS git server trusted through --git-ca-cert; a second run changes nothing; the token is nowhere in the repository.
// +check
func (t *Tests) SnapshotPushToSelfHostedGit(ctx context.Context) error {
	const token = "engine-check-git-token-0451"
	ca, err := newPrivateCA()
	if err != nil {
		return err
	}
	secret := dag.SetSecret("git-token", token)
	server, err := tlsFront("git-tls", ca, t.gitServer(secret), 80, 443).Start(ctx)
	if err != nil {
		return err
	}
	defer server.Stop(ctx)
	endpoint, err := server.Endpoint(ctx, dagger.ServiceEndpointOpts{Scheme: "https"})
	if err != nil {
		return err
	}
	repo := endpoint + "/code.git"
	source := t.app().WithNewFile("res/snapshot-config.json", `[{
		"snapshooter": {"name": "Orders project", "rootTags": ["00000000000000000001"], "exclude": ["00000000000000000003"], "outputDir": "snapshot"},
		"git": {"repo": "`+repo+`", "branch": "main", "commitMessage": "snapshot {folder} at {date}"}}]`)
	caFile := dag.File("ca.pem", ca.CA)
	// two CI runs: in this one session the second differs from the first by
	// push's time limit alone, as the module runs a request once a session
	for run, want := range []string{"pushed", "unchanged"} {
		report := dag.LowcodePipeline().Snapshot(dagger.LowcodePipelineSnapshotOpts{Source: source, Toolkit: toolkit}).
			Push(dagger.LowcodePipelineSnapshotPushOpts{GitToken: secret, GitCaCert: caFile, CreateBranch: true, Timeout: []string{"10m", "9m"}[run]})
		doc, err := report.JSON(ctx)
		if err != nil {
			return fmt.Errorf("run %d: %w", run+1, err)
		}
		if !strings.Contains(doc, `"outcome": "`+want+`"`) || strings.Count(doc, `"name":`) != 1 || strings.Contains(doc, token) {
			return fmt.Errorf("run %d: report %s, want one entry %s", run+1, doc, want)
		}
	}
	listing, err := dag.Container().From("alpine:3.22").
		WithExec([]string{"apk", "add", "--no-cache", "git"}).
		WithNewFile("/ca.pem", ca.CA).
		WithSecretVariable("T", secret).
		WithEnvVariable("GIT_SSL_CAINFO", "/ca.pem").
		WithExec([]string{"sh", "-c", `git -c http.extraHeader="Authorization: Basic $(printf 'x:%s' "$T" | base64)" clone -q ` + repo + ` /r && ` +
			`cd /r && git log --format=%s && find snapshot -type f | sort && ! grep -rqF "$T" . && echo token-absent`}).
		Stdout(ctx)
	if err != nil {
		return err
	}
	for _, want := range []string{"snapshot snapshot at ", "snapshot/00000000000000000001/Home/project.patch.json", "token-absent"} {
		if !strings.Contains(listing, want) {
			return fmt.Errorf("the pushed repository lacks %q:\n%s", want, listing)
		}
	}
	return nil
}

// gitServer is internal/testsupport/gitserver/cmd/git-test-server over plain http on port 80, for a TLS front.
func (t *Tests) gitServer(token *dagger.Secret) *dagger.Service {
	bin := dag.Container().From("golang:1.26-alpine").
		WithEnvVariable("CGO_ENABLED", "0").
		WithDirectory("/src", t.Repo, dagger.ContainerWithDirectoryOpts{Include: []string{"go.mod", "go.sum", "internal/"}}).
		WithWorkdir("/src").
		WithExec([]string{"go", "build", "-o", "/out/git-test-server", "./internal/testsupport/gitserver/cmd/git-test-server"}).
		File("/out/git-test-server")
	return dag.Container().From("alpine:3.22").
		WithExec([]string{"apk", "add", "--no-cache", "git", "git-daemon"}).
		WithFile("/usr/local/bin/git-test-server", bin).
		WithSecretVariable("GIT_TOKEN", token).
		WithExposedPort(80).
		AsService(dagger.ContainerAsServiceOpts{Args: []string{"git-test-server", "-root", "/srv/git", "-init", "code.git", "-listen", ":80"}})
}
