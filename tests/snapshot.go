package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"dagger/tests/internal/dagger"
)

var qSnapshot = gql("snapshot", `query($source: ID!) { lowcodePipeline(`+exampleArgs+`) {
	snapshot { id removedPaths after { glob(pattern: "codeasdata/orders/**/*.patch.json") } } } }`)

const stalePatch = "codeasdata/orders/00000000000000000001/deleted-on-the-platform.patch.json"

// snapshot writes each entry's roots, less the excluded folders, into its outputDir, and its changeset deletes what the platform no longer has.
// +check
func (t *Tests) SnapshotWritesTheOutputDirs(ctx context.Context) error {
	source := t.Repo.Directory("examples/app").WithNewFile(stalePatch, "{}")
	id, err := source.ID(ctx)
	if err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct {
			Snapshot struct {
				ID           string
				RemovedPaths []string
				After        struct{ Glob []string }
			}
		}
	}
	if err := t.run(ctx, qSnapshot, map[string]any{"source": id}, &out); err != nil {
		return err
	}
	snap := out.LowcodePipeline.Snapshot
	got := snap.After.Glob
	want := []string{
		"codeasdata/orders/00000000000000000001/00000000000000000002/orders-table.patch.json",
		"codeasdata/orders/00000000000000000001/project.patch.json",
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("snapshot wrote %v, want %v (the excluded folder and the stale file left out)", got, want)
	}
	if !slices.Contains(snap.RemovedPaths, stalePatch) {
		return fmt.Errorf("the changeset removes %v, not the stale %s", snap.RemovedPaths, stalePatch)
	}
	applied := source.WithChanges(dag.LoadChangesetFromID(dagger.ChangesetID(snap.ID)))
	if gone, err := applied.Exists(ctx, stalePatch); err != nil || gone {
		return fmt.Errorf("applying the changeset kept %s (err %v)", stalePatch, err)
	}
	if kept, err := applied.Exists(ctx, "package.json"); err != nil || !kept {
		return fmt.Errorf("applying the changeset touched files outside the outputDirs")
	}
	return nil
}

var qSnapshotPushNoGit = gql("snapshot-push-no-git", `query($source: ID!) { lowcodePipeline(`+exampleArgs+`) {
	snapshotPush { entries { name outcome commit branch attempts } } } }`)

// snapshot-push refuses a configuration without git sections.
// +check
func (t *Tests) SnapshotPushNeedsGitSection(ctx context.Context) error {
	vars, err := t.example(ctx)
	if err != nil {
		return err
	}
	return t.fails(ctx, qSnapshotPushNoGit, vars, "no entry has a git section")
}

var qSnapshotPush = gql("snapshot-push", `query($source: ID!, $token: ID!, $ca: ID!) { lowcodePipeline(`+exampleArgs+`) {
	snapshotPush(gitToken: $token, gitCaCert: $ca, createBranch: true) { entries { name outputDir branch outcome changed commit attempts } } } }`)

// snapshot-push commits to a self-hosted HTTPS git server trusted through --git-ca-cert; a second run changes nothing; the token is nowhere in the repository.
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
	source := t.Repo.Directory("examples/app").WithNewFile("res/snapshot-config.json", `[{
		"snapshooter": {"name": "Orders project", "rootTags": ["00000000000000000001"], "exclude": ["00000000000000000003"], "outputDir": "codeasdata/orders"},
		"git": {"repo": "`+repo+`", "branch": "main", "commitMessage": "snapshot {folder} at {date}"}}]`)
	vars := map[string]any{}
	if vars["source"], err = source.ID(ctx); err != nil {
		return err
	}
	if vars["token"], err = secret.ID(ctx); err != nil {
		return err
	}
	if vars["ca"], err = dag.File("ca.pem", ca.CA).ID(ctx); err != nil {
		return err
	}
	for run, want := range []string{"pushed", "unchanged"} {
		var out struct {
			LowcodePipeline struct {
				SnapshotPush struct {
					Entries []struct {
						Name, OutputDir, Branch, Outcome, Commit string
						Changed                                  bool
						Attempts                                 int
					}
				}
			}
		}
		if err := t.run(ctx, qSnapshotPush, vars, &out); err != nil {
			return fmt.Errorf("run %d: %w", run+1, err)
		}
		entries := out.LowcodePipeline.SnapshotPush.Entries
		if len(entries) != 1 || entries[0].Outcome != want || len(entries[0].Commit) != 40 || strings.Contains(fmt.Sprint(entries), token) {
			return fmt.Errorf("run %d: report %+v, want one entry %s", run+1, entries, want)
		}
	}
	listing, err := dag.Container().From("alpine:3.22").
		WithExec([]string{"apk", "add", "--no-cache", "git"}).
		WithNewFile("/ca.pem", ca.CA).
		WithSecretVariable("T", secret).
		WithEnvVariable("GIT_SSL_CAINFO", "/ca.pem").
		WithExec([]string{"sh", "-c", `git -c http.extraHeader="Authorization: Basic $(printf 'x:%s' "$T" | base64)" clone -q ` + repo + ` /r && ` +
			`cd /r && git log --format=%s && find codeasdata -type f | sort && ! grep -rqF "$T" . && echo token-absent`}).
		Stdout(ctx)
	if err != nil {
		return err
	}
	for _, want := range []string{"snapshot codeasdata/orders at ", "codeasdata/orders/00000000000000000001/project.patch.json", "token-absent"} {
		if !strings.Contains(listing, want) {
			return fmt.Errorf("the pushed repository lacks %q:\n%s", want, listing)
		}
	}
	return nil
}

// gitServer is cmd/git-test-server over plain http on port 80, for a TLS front.
func (t *Tests) gitServer(token *dagger.Secret) *dagger.Service {
	bin := dag.Container().From("golang:1.26-alpine").
		WithEnvVariable("CGO_ENABLED", "0").
		WithDirectory("/src", t.Repo, dagger.ContainerWithDirectoryOpts{Include: []string{"go.mod", "go.sum", "cmd/", "internal/"}}).
		WithWorkdir("/src").
		WithExec([]string{"go", "build", "-o", "/out/git-test-server", "./cmd/git-test-server"}).
		File("/out/git-test-server")
	return dag.Container().From("alpine:3.22").
		WithExec([]string{"apk", "add", "--no-cache", "git", "git-daemon"}).
		WithFile("/usr/local/bin/git-test-server", bin).
		WithSecretVariable("GIT_TOKEN", token).
		WithExposedPort(80).
		AsService(dagger.ContainerAsServiceOpts{Args: []string{"git-test-server", "-root", "/srv/git", "-init", "code.git", "-listen", ":80"}})
}
