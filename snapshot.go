package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"time"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/gitsync"
	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
)

// SnapshotReport is what snapshot-push did for each entry with a git section
type SnapshotReport struct {
	// One per entry with a git section, in the configuration's order
	Entries []*SnapshotEntry
}

// SnapshotEntry is what snapshot-push did for one entry
type SnapshotEntry struct {
	// snapshooter.name
	Name string
	// snapshooter.outputDir, the folder committed
	OutputDir string
	// The branch pushed to (git.branch)
	Branch string
	// pushed, or unchanged when the snapshot changed nothing
	Outcome string
	// Whether a commit was pushed
	Changed bool
	// The branch's commit after the run: the new commit, or the tip when unchanged
	Commit string
	// How many pushes it took (a push rejected because the branch moved is re-applied and tried again)
	Attempts int
}

// Save code as data: run the platform CLI's snapshot and return the project with its outputDirs updated
//
// Reads the snapshot configuration, runs `npx <platform cli> snapshot` in
// the installed project, and returns the source directory with each entry's
// outputDir replaced by the new snapshot (`export --path .` writes it back).
//
// +cache="never"
func (m *LowcodePipeline) Snapshot(
	ctx context.Context,
	// Snapshot configuration file, relative to the project
	// +optional
	// +default="res/snapshot-config.json"
	config string,
	// Platform credentials for the snapshot command, as a secret
	// +optional
	platformToken *dagger.Secret,
	// Environment variable the platform CLI reads its credentials from
	// +optional
	// +default="PLATFORM_TOKEN"
	platformTokenEnv string,
) (*dagger.Directory, error) {
	entries, err := m.snapshotConfig(ctx, config)
	if err != nil {
		return nil, err
	}
	snap, err := m.runSnapshot(ctx, config, platformToken, platformTokenEnv)
	if err != nil {
		return nil, err
	}
	out := m.Source
	for _, e := range entries {
		dir := e.Snapshooter.OutputDir
		out = out.WithoutDirectory(dir).WithDirectory(dir, snap.Directory(path.Join(appDir, dir)))
	}
	return out, nil
}

// Save code as data and commit it to git: for each entry with a git section, commit and push its outputDir when it changed
//
// Clones git.branch, replaces outputDir with the new snapshot (files that
// disappeared from it disappear), commits with the rendered commitMessage
// only when the tree changed, and pushes; a push rejected because the
// branch moved is re-applied on the new tip, never forced. The report says,
// per entry, whether it changed, the commit and the branch.
//
// +cache="never"
func (m *LowcodePipeline) SnapshotPush(
	ctx context.Context,
	// Snapshot configuration file, relative to the project
	// +optional
	// +default="res/snapshot-config.json"
	config string,
	// Git access token (recommended; then git.repo carries none). Without it, a token in git.repo's user-info is used
	// +optional
	gitToken *dagger.Secret,
	// User name sent with the git token (most hosts accept any; GitLab: oauth2, Bitbucket: x-token-auth)
	// +optional
	// +default="x-access-token"
	gitUsername string,
	// Commit author name
	// +optional
	// +default="lowcode-pipeline"
	authorName string,
	// Commit author e-mail
	// +optional
	// +default="lowcode-pipeline@users.noreply.invalid"
	authorEmail string,
	// Pushes to try when the branch keeps moving
	// +optional
	// +default=5
	maxAttempts int,
	// Platform credentials for the snapshot command, as a secret
	// +optional
	platformToken *dagger.Secret,
	// Environment variable the platform CLI reads its credentials from
	// +optional
	// +default="PLATFORM_TOKEN"
	platformTokenEnv string,
) (*SnapshotReport, error) {
	entries, err := m.snapshotConfig(ctx, config)
	if err != nil {
		return nil, err
	}
	if entries, err = snapshotconfig.Pushed(entries); err != nil {
		return nil, fmt.Errorf("%s: %w", config, err)
	}
	snap, err := m.runSnapshot(ctx, config, platformToken, platformTokenEnv)
	if err != nil {
		return nil, err
	}
	tool := dag.Container().From(runtimeImage).
		WithExec([]string{"apk", "add", "--no-cache", "git", "ca-certificates"}).
		WithFile("/usr/local/bin/snapshot-push", toolBinary("snapshot-push"))
	report := &SnapshotReport{}
	for _, e := range entries {
		remote, urlToken := e.Git.Remote()
		token := gitToken
		if token == nil && urlToken != "" {
			token = dag.SetSecret("lowcode-pipeline-git-token-"+strconv.Itoa(e.Index), urlToken)
		}
		ctr := tool.
			WithMountedDirectory("/snapshot", snap.Directory(path.Join(appDir, e.Snapshooter.OutputDir))).
			WithEnvVariable("LOWCODE_PIPELINE_RUN", time.Now().UTC().Format(time.RFC3339Nano)) // every call pushes anew
		if token != nil {
			ctr = ctr.WithSecretVariable("GIT_TOKEN", token)
		}
		out, err := ctr.WithExec([]string{"snapshot-push",
			"-remote", remote, "-branch", e.Git.Branch, "-output-dir", e.Snapshooter.OutputDir, "-snapshot", "/snapshot",
			"-message", e.Git.CommitMessage, "-username", gitUsername, "-author-name", authorName,
			"-author-email", authorEmail, "-max-attempts", strconv.Itoa(maxAttempts),
		}).Stdout(ctx)
		if err != nil {
			return nil, fmt.Errorf("entry [%d] %q: %w", e.Index, e.Snapshooter.Name, err)
		}
		var res gitsync.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			return nil, fmt.Errorf("entry [%d]: unreadable result %q: %w", e.Index, out, err)
		}
		report.Entries = append(report.Entries, &SnapshotEntry{
			Name: e.Snapshooter.Name, OutputDir: res.OutputDir, Branch: res.Branch, Outcome: res.Outcome(),
			Changed: res.Changed, Commit: res.Commit, Attempts: res.Attempts,
		})
	}
	return report, nil
}

// snapshotConfig reads and checks the snapshot configuration.
func (m *LowcodePipeline) snapshotConfig(ctx context.Context, config string) ([]snapshotconfig.Entry, error) {
	data, err := m.Source.File(config).Contents(ctx)
	if err != nil {
		return nil, fmt.Errorf("no snapshot configuration at %s in the source directory (--config): %w", config, err)
	}
	entries, err := snapshotconfig.Parse([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config, err)
	}
	return entries, nil
}

// runSnapshot runs the platform CLI's snapshot command in the installed
// project and returns the container after it.
func (m *LowcodePipeline) runSnapshot(ctx context.Context, config string, token *dagger.Secret, tokenEnv string) (*dagger.Container, error) {
	cmd, err := nodebuild.SnapshotCommand(m.PlatformCli, config, snapshotconfig.DefaultPath)
	if err != nil {
		return nil, err
	}
	installed, err := m.Install(ctx)
	if err != nil {
		return nil, err
	}
	if token != nil {
		installed = installed.WithSecretVariable(tokenEnv, token)
	}
	snap, err := installed.
		WithEnvVariable("LOWCODE_PIPELINE_RUN", time.Now().UTC().Format(time.RFC3339Nano)). // the platform's state moves: always re-run
		WithExec(cmd).
		Sync(ctx)
	if err != nil {
		return nil, fmt.Errorf("npx %s snapshot failed: %w", m.PlatformCli, err)
	}
	return snap, nil
}
