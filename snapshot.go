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
	"slices"
	"strconv"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/prefetch"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
	"dagger/lowcode-pipeline/internal/snapshotpush"
	"dagger/lowcode-pipeline/internal/steplimit"
)

// Snapshot is what the toolkit's snapshot command wrote into each outputDir
type Snapshot struct {
	// Each entry's outputDir and how many files it holds, for a person
	Summary string
	// The same as JSON, for a script
	Json string
	// The changes to the project's outputDirs: export --path . applies additions, changes and deletions there and touches nothing else
	Changes *dagger.Changeset
	// Each entry of the configuration, in its order
	Entries []*SnapshotOutput

	// +private
	Collected *dagger.Container
	// +private
	Project *dagger.Directory // the source, which holds the configuration
	// +private
	ConfigPath string
	// +private
	AllowEmpty bool
}

// SnapshotOutput is one entry's outputDir as the toolkit wrote it
type SnapshotOutput struct {
	// snapshooter.name
	Name string
	// snapshooter.outputDir
	OutputDir string
	// How many files the toolkit wrote there
	Files int
	// Whether the entry has a git section, which push commits
	Pushed bool
}

// SnapshotReport is what push did for each entry with a git section
type SnapshotReport struct {
	// One line an entry: where it went and what happened, for a person
	Summary string
	// The whole report as JSON, for a script
	Json string
	// One per entry with a git section, in the configuration's order
	Entries []*SnapshotEntry
}

// SnapshotEntry is what push did for one entry
type SnapshotEntry struct {
	// snapshooter.name
	Name string
	// snapshooter.outputDir, the folder committed
	OutputDir string
	// The branch pushed to (git.branch)
	Branch string
	// pushed, unchanged, failed: <reason>, not attempted (after a failure), or left to the toolkit (toolkit-snapshot)
	Outcome string
	// Whether a commit was pushed
	Changed bool
	// The branch's commit after the run: the new commit, or the tip when unchanged
	Commit string
	// How many pushes it took, the first included (a push rejected because the branch moved is re-applied and tried again)
	PushAttempts int
}

// Where the git step finds its inputs.
const (
	batchPath   = "/run/lowcode-pipeline/batch.json"
	gitCAPath   = "/run/lowcode-pipeline/git-ca.pem"
	snapshotsAt = "/snapshots"
)

// Commit and push each entry that has a git section, only when its outputDir changed
//
// The module does the git work: for each entry, in order, check out
// git.branch, replace outputDir with the snapshot, commit with the rendered
// commitMessage only when the tree changed, push; a push rejected because
// the branch moved is re-applied on the new tip, never forced. An empty
// snapshot, a commit deleting most of the folder and a missing branch are
// refused unless allowed. The first failing entry stops the run; the report
// says what reached each remote, and the function fails after it when an
// entry failed.
//
// +cache="session"
func (s *Snapshot) Push(
	ctx context.Context,
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
	// Refuse a commit that deletes more than this share of the files under outputDir (1 lets any deletion through)
	// +optional
	// +default=0.5
	maxDeleteRatio float64,
	// Pushes to try when the branch keeps moving, the first included
	// +optional
	// +default=5
	pushAttempts int,
	// Time limit for the git work of one entry (a Go duration); git also gives up on a transfer below 1000 bytes/s for a minute
	// +optional
	// +default="10m"
	timeout string,
	// Commit author, "Name <email>"
	// +optional
	// +default="lowcode-pipeline <lowcode-pipeline@users.noreply.invalid>"
	author string,
) (_ *SnapshotReport, err error) {
	defer userErr(&err)
	checked, err := snapshotconfig.PushFlags{PushAttempts: pushAttempts, MaxDeleteRatio: maxDeleteRatio, Timeout: timeout, Author: author,
		GitUsername: gitUsername}.Check()
	if err != nil {
		return nil, err
	}
	entries, _, err := readConfig(ctx, s.Project, s.ConfigPath)
	if err != nil {
		return nil, err
	}
	pushed, err := snapshotconfig.Pushed(entries)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.ConfigPath, err)
	}
	batch := snapshotpush.Batch{
		AuthorName: checked.AuthorName, AuthorEmail: checked.AuthorEmail, MaxAttempts: pushAttempts, AllowEmpty: s.AllowEmpty,
		MaxDeleteRatio: maxDeleteRatio, CreateBranch: createBranch, Timeout: timeout,
	}
	tool, err := withTool(gitTool(), "snapshot-push")
	if err != nil {
		return nil, err
	}
	if gitCaCert != nil {
		tool, batch.CACert = tool.WithMountedFile(gitCAPath, gitCaCert), gitCAPath
	}
	if gitToken != nil {
		tool = tool.WithSecretVariable("GIT_TOKEN", gitToken)
	}
	for i, e := range pushed {
		dir := path.Join(snapshotsAt, strconv.Itoa(i))
		auth := snapshotpush.EntryFor(i, e, dir, gitUsername, gitToken != nil)
		tool = tool.WithMountedDirectory(dir, s.Collected.Directory(snapshotconfig.Collected(snapshotsAt, e.Index)))
		if auth.URLToken.Set() {
			tool = tool.WithSecretVariable(auth.Entry.TokenEnv, dag.SetSecret("lowcode-pipeline-git-token-"+strconv.Itoa(i), auth.URLToken.Reveal()))
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
	// each entry's git work keeps --timeout (the step's own, sooner and
	// more precise); the pull of git's image and git's install before it,
	// this wait's
	var report *SnapshotReport
	err = steplimit.Wait(ctx, steplimit.Sum(steplimit.Pull, steplimit.Tool, steplimit.Times(len(pushed), checked.Timeout)), "the git step (the pull of "+runtimeImage+", git's install, then each entry's push)",
		func(ctx context.Context) (err error) {
			report, err = snapshotReport(ctx, done)
			return err
		})
	return report, err
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
		return nil, snapshotpush.NoReport(code, stderr)
	}
	var doc results.SnapshotReport
	for _, e := range report.Entries {
		doc.Entries = append(doc.Entries, results.SnapshotEntry{Name: e.Name, OutputDir: e.OutputDir, Branch: e.Branch,
			Outcome: e.Outcome, Changed: e.Changed, Commit: e.Commit, PushAttempts: e.Attempts})
	}
	fmt.Fprintln(os.Stderr, report.Summary())
	if code != 0 || report.Failed() {
		return nil, errors.New("push: an entry failed; what reached each remote:\n" + report.Summary())
	}
	return newSnapshotReport(doc), nil
}

func newSnapshotReport(doc results.SnapshotReport) *SnapshotReport {
	out := &SnapshotReport{Summary: doc.Text(), Json: results.JSON(doc)}
	for _, e := range doc.Entries {
		out.Entries = append(out.Entries, &SnapshotEntry{Name: e.Name, OutputDir: e.OutputDir, Branch: e.Branch,
			Outcome: e.Outcome, Changed: e.Changed, Commit: e.Commit, PushAttempts: e.PushAttempts})
	}
	return out
}

// readConfig reads and checks the snapshot configuration at config in
// source: a file, or a folder of JSON files (folder), read as the toolkit
// reads one (snapshotconfig.ParseFolder).
func readConfig(ctx context.Context, source *dagger.Directory, config string) (_ []snapshotconfig.Entry, folder bool, _ error) {
	folder, err := source.Exists(ctx, config, dagger.DirectoryExistsOpts{ExpectedType: dagger.ExistsTypeDirectoryType})
	if err != nil {
		return nil, false, err
	}
	if !folder {
		data, err := source.File(config).Contents(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("no snapshot configuration at %s in the source directory (--config): %w", config, err)
		}
		entries, err := snapshotconfig.Parse([]byte(data))
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", config, err)
		}
		return entries, false, nil
	}
	found, err := source.Glob(ctx, path.Join(config, "**", "*.json"))
	if err != nil {
		return nil, true, err
	}
	slices.Sort(found)
	files := make([]snapshotconfig.File, len(found))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, p := range found {
		g.Go(func() error {
			data, err := source.File(p).Contents(gctx)
			files[i] = snapshotconfig.File{Path: p, Data: []byte(data)}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, true, err
	}
	entries, err := snapshotconfig.ParseFolder(config, files)
	return entries, true, err
}

// snapshotRun is one run of the toolkit's snapshot command.
type snapshotRun struct {
	source  *dagger.Directory
	config  string
	toolkit string
	folder  bool   // config names a folder of JSON files
	forCLI  []byte // the configuration the toolkit reads
	// --orchestrator, read
	connect    snapshotconfig.Orchestrator
	password   *dagger.Secret
	allowEmpty bool
	nodeImage  string
	npmrc      *dagger.Secret
	masked     []*dagger.Secret // secrets the toolkit may print, for the engine to mask
}

// snapshotFlags are the flags snapshot and toolkit-snapshot share, as given.
type snapshotFlags struct {
	source       *dagger.Directory
	config       string
	toolkit      string
	orchestrator string
	password     *dagger.Secret
	nodeImage    string
	npmrc        *dagger.Secret
}

// newSnapshotRun checks the flags, every problem at once.
func newSnapshotRun(f snapshotFlags, allowEmpty bool) (*snapshotRun, error) {
	r := &snapshotRun{source: f.source, toolkit: f.toolkit, password: f.password, allowEmpty: allowEmpty, nodeImage: f.nodeImage, npmrc: f.npmrc}
	var errs [4]error
	r.connect, errs[0] = snapshotconfig.ParseOrchestrator("--orchestrator", f.orchestrator)
	if errs[0] == nil && f.password != nil && r.connect.Host == "" {
		errs[1] = snapshotconfig.ErrNoOrchestrator
	}
	if f.toolkit != "" {
		errs[2] = nodebuild.CheckCLI(f.toolkit)
	}
	r.config, errs[3] = snapshotconfig.ConfigPath(f.config)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return r, nil
}

// snapshotOnly runs the toolkit's snapshot without the configuration's git
// sections: the snapshot step.
func (r *snapshotRun) snapshotOnly(ctx context.Context) (_ *Snapshot, err error) {
	entries, folder, err := readConfig(ctx, r.source, r.config)
	if err != nil {
		return nil, err
	}
	r.folder = folder
	if r.forCLI, err = snapshotconfig.ForCLI(entries, false, "", ""); err != nil {
		return nil, err
	}
	// A configuration with a git section is pushed next: ready push's git
	// container while the toolkit runs, which the engine would otherwise make
	// only inside push (tests/engine-facts.md, fact 59; a failure is push's
	// to report).
	if slices.ContainsFunc(entries, func(e snapshotconfig.Entry) bool { return e.Git != nil }) {
		early := prefetch.Start(ctx, prefetchTimeout, func(ctx context.Context) error { _, err := gitTool().Sync(ctx); return err })
		defer func() { early.Done(err != nil) }()
	}
	collected, counts, err := r.snapshot(ctx, entries)
	if err != nil {
		return nil, err
	}
	var doc results.Snapshot
	for i, e := range entries {
		doc.Entries = append(doc.Entries, results.SnapshotDir{Name: e.Snapshooter.Name, OutputDir: e.Snapshooter.OutputDir, Files: counts[i], Pushed: e.Git != nil})
	}
	after := r.source
	for i, e := range entries {
		dir := e.Snapshooter.OutputDir
		after = after.WithoutDirectory(dir).WithDirectory(dir, collected.Directory(snapshotconfig.Collected(snapshotsAt, i)))
	}
	return newSnapshot(doc, Snapshot{Changes: after.Changes(r.source), Collected: collected, Project: r.source, ConfigPath: r.config,
		AllowEmpty: r.allowEmpty}), nil
}

// newSnapshot is the Snapshot of doc; private gives its other fields.
func newSnapshot(doc results.Snapshot, private Snapshot) *Snapshot {
	s := private
	s.Summary, s.Json = doc.Text(), results.JSON(doc)
	for _, e := range doc.Entries {
		s.Entries = append(s.Entries, &SnapshotOutput{Name: e.Name, OutputDir: e.OutputDir, Files: e.Files, Pushed: e.Pushed})
	}
	return &s
}

// withToolkitGit runs the toolkit's snapshot with the configuration's git
// sections, a --git-token put in each git.repo: the toolkit pushes.
func (r *snapshotRun) withToolkitGit(ctx context.Context, gitToken *dagger.Secret) (*SnapshotReport, error) {
	entries, folder, err := readConfig(ctx, r.source, r.config)
	if err != nil {
		return nil, err
	}
	r.folder = folder
	pushed, err := snapshotconfig.Pushed(entries)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.config, err)
	}
	var token string
	if gitToken != nil {
		if token, err = gitToken.Plaintext(ctx); err != nil {
			return nil, fmt.Errorf("read --git-token: %w", err)
		}
	}
	if r.forCLI, err = snapshotconfig.ForCLI(entries, true, "", token); err != nil {
		return nil, err
	}
	// The engine masks in an exec's output the secrets the exec holds: hand
	// it each token the toolkit gets inside git.repo, in case it prints its
	// remote (the configuration itself is one secret, the token a piece of it).
	if gitToken != nil {
		r.masked = append(r.masked, gitToken)
	}
	for i, e := range pushed {
		if _, _, t := e.Git.Remote(); t != "" {
			r.masked = append(r.masked, dag.SetSecret(fmt.Sprintf("lowcode-pipeline-git-token-%d", i), t))
		}
	}
	if _, _, err := r.snapshot(ctx, entries); err != nil {
		return nil, err
	}
	var doc results.SnapshotReport
	for _, e := range pushed {
		doc.Entries = append(doc.Entries, results.SnapshotEntry{Name: e.Snapshooter.Name, OutputDir: e.Snapshooter.OutputDir,
			Branch: e.Git.Branch, Outcome: "left to the toolkit (toolkit-snapshot)"})
	}
	return newSnapshotReport(doc), nil
}

// snapshot runs the toolkit's snapshot command in the installed project,
// into emptied outputDirs, with r.forCLI mounted read-only over the
// configuration file, copies each entry's outputDir to
// snapshotconfig.Collected(snapshotsAt, i), and checks that it wrote every
// one. It returns that container and each entry's file count.
func (r *snapshotRun) snapshot(ctx context.Context, entries []snapshotconfig.Entry) (*dagger.Container, []int, error) {
	manifest, image, err := readManifest(ctx, r.source, r.nodeImage)
	if err != nil {
		return nil, nil, err
	}
	r.toolkit = manifest.Tool(r.toolkit, nodebuild.ToolkitPackage)
	cmd, err := nodebuild.SnapshotCommand(r.toolkit, r.config)
	if err != nil {
		return nil, nil, err
	}
	in, err := install(ctx, r.source, manifest, image, r.npmrc, r.config)
	if err != nil {
		return nil, nil, err
	}
	installed := in.project
	for _, e := range entries {
		installed = installed.WithoutDirectory(path.Join(appDir, e.Snapshooter.OutputDir))
	}
	// the toolkit reads the configuration the module made, where --config
	// names it: over the file, or as the only file of the folder
	sum := sha256.Sum256(r.forCLI)
	mounted := path.Join(appDir, r.config)
	if r.folder {
		installed, mounted = installed.WithoutDirectory(mounted), path.Join(mounted, snapshotconfig.FolderFile)
	}
	installed = installed.WithMountedSecret(mounted, dag.SetSecret("lowcode-pipeline-snapshot-config-"+hex.EncodeToString(sum[:8]), string(r.forCLI)))
	// the toolkit reads its orchestrator options' defaults from these: never
	// options, so no printed command holds them; the password a secret the
	// engine masks wherever the toolkit prints it (at --logLevel debug it logs
	// the command line it gives its snapshot process, password included)
	for _, kv := range r.connect.Env() {
		installed = installed.WithEnvVariable(kv[0], kv[1])
	}
	if r.password != nil {
		installed = installed.WithSecretVariable(snapshotconfig.PasswordEnv, r.password)
	}
	for i, s := range r.masked {
		installed = installed.WithSecretVariable(fmt.Sprintf("LOWCODE_PIPELINE_MASKED_%d", i), s)
	}
	// the platform's state moves: always re-run
	collected := rerun(installed).WithExec(steplimit.Within(steplimit.Project, cmd)).WithExec(steplimit.Within(steplimit.Tool, snapshotconfig.CollectCommand(entries, snapshotsAt)))
	// each exec keeps its own limit once it runs; the pull of the Node.js
	// image before the install, this wait's
	var out string
	err = steplimit.Wait(ctx, steplimit.Sum(steplimit.Pull, steplimit.Project, steplimit.Project, steplimit.Tool),
		"the snapshot (the pull of "+r.nodeImage+", the project's install, npx "+r.toolkit+" snapshot, then the copy of its folders)",
		func(ctx context.Context) (err error) {
			out, err = collected.Stdout(ctx)
			return err
		})
	if err != nil {
		return nil, nil, fmt.Errorf("npx %s snapshot failed: %w", r.toolkit, explain(err))
	}
	counts, err := snapshotconfig.CheckWritten(entries, out, r.allowEmpty)
	if err != nil {
		return nil, nil, err
	}
	return collected, counts, nil
}

// gitTool is the container push's git step runs in, before the module's
// binary is installed in it.
func gitTool() *dagger.Container {
	return limited(dag.Container().From(runtimeImage)).WithExec(steplimit.Within(steplimit.Tool, []string{"apk", "add", "--no-cache", "git", "ca-certificates"}))
}
