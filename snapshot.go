package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
	"dagger/lowcode-pipeline/internal/snapshotpush"
)

// SnapshotReport is what snapshot-push did for each entry with a git section
type SnapshotReport struct {
	// One line an entry: where it went and what happened, for a person
	Summary string
	// The whole report as JSON, for a script
	Json string
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
	// pushed, unchanged, failed: <reason>, not attempted (after a failure), or left to the platform CLI (--platform-git)
	Outcome string
	// Whether a commit was pushed
	Changed bool
	// The branch's commit after the run: the new commit, or the tip when unchanged
	Commit string
	// How many pushes it took (a push rejected because the branch moved is re-applied and tried again)
	Attempts int
}

// Where the git step finds its inputs.
const (
	batchPath   = "/run/lowcode-pipeline/batch.json"
	gitCAPath   = "/run/lowcode-pipeline/git-ca.pem"
	snapshotsAt = "/snapshots"
)

// Save code as data: run the platform CLI's snapshot; the changes to the project's outputDirs, ready to export
//
// Runs `npx <platform cli> snapshot` in the installed project with a copy of
// the configuration whose git sections are removed (the CLI only writes patch
// files), into emptied outputDirs, so the snapshot is exactly what the CLI
// wrote. Fails, naming the entry, when an outputDir stays empty (unless
// --allow-empty). `export --path .` applies additions, changes and deletions
// inside the outputDirs and touches nothing else; `after` is the whole
// project as a directory.
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
	// Accept an outputDir the CLI leaves empty
	// +optional
	allowEmpty bool,
) (*dagger.Changeset, error) {
	if err := snapshotconfig.CheckEnvName("--platform-token-env", platformTokenEnv); err != nil {
		return nil, err
	}
	entries, err := m.snapshotConfig(ctx, config)
	if err != nil {
		return nil, err
	}
	forCLI, err := snapshotconfig.ForCLI(entries, false, "", "")
	if err != nil {
		return nil, err
	}
	snap, err := m.runSnapshot(ctx, snapshotRun{config: config, forCLI: forCLI, entries: entries,
		token: platformToken, tokenEnv: platformTokenEnv, allowEmpty: allowEmpty})
	if err != nil {
		return nil, err
	}
	after := m.Source
	for i, e := range entries {
		dir := e.Snapshooter.OutputDir
		after = after.WithoutDirectory(dir).WithDirectory(dir, snap.Directory(snapshotconfig.Collected(snapshotsAt, i)))
	}
	return after.Changes(m.Source), nil
}

// Save code as data and commit it to git: for each entry with a git section, commit and push its outputDir when it changed
//
// The module does the git work: the platform CLI gets the configuration
// without git sections and writes patch files only. For each entry, in
// order: check out git.branch, replace outputDir with the snapshot, commit
// with the rendered commitMessage only when the tree changed, push; a push
// rejected because the branch moved is re-applied on the new tip, never
// forced. An empty snapshot, a commit deleting most of the folder and a
// missing branch are refused unless allowed. The first failing entry stops
// the run; the report says what reached each remote, and the function fails
// after it when an entry failed.
//
// +cache="never"
func (m *LowcodePipeline) SnapshotPush(
	ctx context.Context,
	// Snapshot configuration file, relative to the project
	// +optional
	// +default="res/snapshot-config.json"
	config string,
	// Git access token (recommended: then git.repo carries none, and the token is never in the project). Without it, a token in git.repo's user-info is used
	// +optional
	gitToken *dagger.Secret,
	// User name sent with the token (default: the one in git.repo, else x-access-token; GitLab: oauth2, Bitbucket: x-token-auth)
	// +optional
	gitUsername string,
	// CA certificate (PEM) that signs a self-hosted git server's certificate; trusted by the git step only, instead of the system's
	// +optional
	gitCaCert *dagger.File,
	// Create git.branch when the remote has no such branch: from the default branch, or as the first commit of an empty repository
	// +optional
	createBranch bool,
	// Accept an outputDir the CLI leaves empty, and push the deletion of the folder
	// +optional
	allowEmpty bool,
	// Refuse a commit that deletes more than this share of the files under outputDir (1 lets any deletion through)
	// +optional
	// +default=0.5
	maxDeleteRatio float64,
	// Pushes to try when the branch keeps moving
	// +optional
	// +default=5
	maxAttempts int,
	// Time limit for the git work of one entry (a Go duration); git also gives up on a transfer below 1000 bytes/s for a minute
	// +optional
	// +default="10m"
	timeout string,
	// Commit author name
	// +optional
	// +default="lowcode-pipeline"
	authorName string,
	// Commit author e-mail
	// +optional
	// +default="lowcode-pipeline@users.noreply.invalid"
	authorEmail string,
	// Let the platform CLI clone, commit and push by itself, as the interface describes; the module then does no git work and none of its checks
	// +optional
	platformGit bool,
	// Platform credentials for the snapshot command, as a secret
	// +optional
	platformToken *dagger.Secret,
	// Environment variable the platform CLI reads its credentials from
	// +optional
	// +default="PLATFORM_TOKEN"
	platformTokenEnv string,
) (*SnapshotReport, error) {
	flags := snapshotconfig.PushFlags{MaxAttempts: maxAttempts, MaxDeleteRatio: maxDeleteRatio, PlatformTokenEnv: platformTokenEnv, Timeout: timeout}
	if err := flags.Check(); err != nil {
		return nil, err
	}
	entries, err := m.snapshotConfig(ctx, config)
	if err != nil {
		return nil, err
	}
	pushed, err := snapshotconfig.Pushed(entries)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config, err)
	}
	run := snapshotRun{config: config, entries: entries, token: platformToken, tokenEnv: platformTokenEnv, allowEmpty: allowEmpty}
	if platformGit {
		return m.platformGitSnapshot(ctx, run, pushed, gitUsername, gitToken)
	}
	if run.forCLI, err = snapshotconfig.ForCLI(entries, false, "", ""); err != nil {
		return nil, err
	}
	snap, err := m.runSnapshot(ctx, run)
	if err != nil {
		return nil, err
	}
	batch := snapshotpush.Batch{
		AuthorName: authorName, AuthorEmail: authorEmail, MaxAttempts: maxAttempts, AllowEmpty: allowEmpty,
		MaxDeleteRatio: maxDeleteRatio, CreateBranch: createBranch, Timeout: timeout,
	}
	tool := dag.Container().From(runtimeImage).
		WithExec([]string{"apk", "add", "--no-cache", "git", "ca-certificates"}).
		WithFile("/usr/local/bin/snapshot-push", toolBinary("snapshot-push"))
	if gitCaCert != nil {
		tool, batch.CACert = tool.WithMountedFile(gitCAPath, gitCaCert), gitCAPath
	}
	if gitToken != nil {
		tool = tool.WithSecretVariable("GIT_TOKEN", gitToken)
	}
	for i, e := range pushed {
		dir := path.Join(snapshotsAt, strconv.Itoa(i))
		auth := snapshotpush.EntryFor(i, e, dir, gitUsername, gitToken != nil)
		tool = tool.WithMountedDirectory(dir, snap.Directory(snapshotconfig.Collected(snapshotsAt, e.Index)))
		if auth.URLToken != "" {
			tool = tool.WithSecretVariable(auth.Entry.TokenEnv, dag.SetSecret("lowcode-pipeline-git-token-"+strconv.Itoa(i), auth.URLToken))
		}
		batch.Entries = append(batch.Entries, auth.Entry)
	}
	batchJSON, err := json.Marshal(batch)
	if err != nil {
		return nil, err
	}
	// every call pushes anew
	done := rerun(tool.WithNewFile(batchPath, string(batchJSON))).
		WithExec([]string{"snapshot-push", "-batch", batchPath}, dagger.ContainerWithExecOpts{Expect: dagger.ReturnTypeAny})
	return snapshotReport(ctx, done)
}

// snapshotReport reads the git step's report; it fails, after printing the
// report, when an entry failed.
func snapshotReport(ctx context.Context, done *dagger.Container) (*SnapshotReport, error) {
	out, err := done.Stdout(ctx)
	if err != nil {
		return nil, err
	}
	code, err := done.ExitCode(ctx)
	if err != nil {
		return nil, err
	}
	var report snapshotpush.Report
	if jsonErr := json.Unmarshal([]byte(out), &report); jsonErr != nil {
		stderr, _ := done.Stderr(ctx)
		return nil, fmt.Errorf("the git step exited %d without a report: %s", code, fielderr.Cut(stderr, snapshotpush.MaxReason))
	}
	var doc results.SnapshotReport
	for _, e := range report.Entries {
		doc.Entries = append(doc.Entries, results.SnapshotEntry{Name: e.Name, OutputDir: e.OutputDir, Branch: e.Branch,
			Outcome: e.Outcome, Changed: e.Changed, Commit: e.Commit, Attempts: e.Attempts})
	}
	result := newSnapshotReport(doc)
	fmt.Fprintln(os.Stderr, report.Summary())
	if code != 0 || report.Failed() {
		return nil, errors.New("snapshot-push: an entry failed; what reached each remote:\n" + report.Summary())
	}
	return result, nil
}

// platformGitSnapshot leaves the git work to the platform CLI, as the
// interface describes: the CLI gets the git sections, and a --git-token in
// git.repo.
func (m *LowcodePipeline) platformGitSnapshot(ctx context.Context, run snapshotRun, pushed []snapshotconfig.Entry,
	gitUsername string, gitToken *dagger.Secret) (*SnapshotReport, error) {
	var token string
	if gitToken != nil {
		var err error
		if token, err = gitToken.Plaintext(ctx); err != nil {
			return nil, fmt.Errorf("read --git-token: %w", err)
		}
	}
	var err error
	if run.forCLI, err = snapshotconfig.ForCLI(run.entries, true, gitUsername, token); err != nil {
		return nil, err
	}
	run.allowEmpty = true // the CLI has pushed already: an empty folder is its business
	if _, err := m.runSnapshot(ctx, run); err != nil {
		return nil, err
	}
	var doc results.SnapshotReport
	for _, e := range pushed {
		doc.Entries = append(doc.Entries, results.SnapshotEntry{Name: e.Snapshooter.Name, OutputDir: e.Snapshooter.OutputDir,
			Branch: e.Git.Branch, Outcome: "left to the platform CLI (--platform-git)"})
	}
	return newSnapshotReport(doc), nil
}

func newSnapshotReport(doc results.SnapshotReport) *SnapshotReport {
	out := &SnapshotReport{Summary: doc.Text(), Json: results.JSON(doc)}
	for _, e := range doc.Entries {
		out.Entries = append(out.Entries, &SnapshotEntry{Name: e.Name, OutputDir: e.OutputDir, Branch: e.Branch,
			Outcome: e.Outcome, Changed: e.Changed, Commit: e.Commit, Attempts: e.Attempts})
	}
	return out
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

type snapshotRun struct {
	config     string
	forCLI     []byte // the configuration the CLI reads
	entries    []snapshotconfig.Entry
	token      *dagger.Secret
	tokenEnv   string
	allowEmpty bool
}

// runSnapshot runs the platform CLI's snapshot command in the installed
// project, into emptied outputDirs, with r.forCLI mounted read-only over the
// configuration file, copies each entry's outputDir to
// snapshotconfig.Collected(snapshotsAt, i) and checks that it wrote every one.
func (m *LowcodePipeline) runSnapshot(ctx context.Context, r snapshotRun) (*dagger.Container, error) {
	cmd, err := nodebuild.SnapshotCommand(m.PlatformCli, r.config, snapshotconfig.DefaultPath)
	if err != nil {
		return nil, err
	}
	installed, err := m.Install(ctx)
	if err != nil {
		return nil, err
	}
	for _, e := range r.entries {
		installed = installed.WithoutDirectory(path.Join(appDir, e.Snapshooter.OutputDir))
	}
	sum := sha256.Sum256(r.forCLI)
	installed = installed.WithMountedSecret(path.Join(appDir, r.config),
		dag.SetSecret("lowcode-pipeline-snapshot-config-"+hex.EncodeToString(sum[:8]), string(r.forCLI)))
	if r.token != nil {
		installed = installed.WithSecretVariable(r.tokenEnv, r.token)
	}
	// the platform's state moves: always re-run
	snap, err := rerun(installed).WithExec(cmd).Sync(ctx)
	if err != nil {
		return nil, fmt.Errorf("npx %s snapshot failed: %w", m.PlatformCli, err)
	}
	collected := snap.WithExec(snapshotconfig.CollectCommand(r.entries, snapshotsAt))
	counts, err := collected.Stdout(ctx)
	if err != nil {
		return nil, err
	}
	if err := snapshotconfig.CheckWritten(r.entries, counts, r.allowEmpty); err != nil {
		return nil, err
	}
	return collected, nil
}
