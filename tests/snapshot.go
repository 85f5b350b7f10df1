package main

import (
	"context"
	"fmt"
	"slices"
)

var qSnapshot = gql("snapshot", `query($source: ID!) { lowcodePipeline(`+exampleArgs+`) {
	snapshot { glob(pattern: "codeasdata/orders/**/*.patch.json") } } }`)

// snapshot writes each entry's roots, less the excluded folders, into its outputDir.
// +check
func (t *Tests) SnapshotWritesTheOutputDirs(ctx context.Context) error {
	vars, err := t.example(ctx)
	if err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct {
			Snapshot struct{ Glob []string }
		}
	}
	if err := t.run(ctx, qSnapshot, vars, &out); err != nil {
		return err
	}
	got := out.LowcodePipeline.Snapshot.Glob
	want := []string{
		"codeasdata/orders/00000000000000000001/00000000000000000002/orders-table.patch.json",
		"codeasdata/orders/00000000000000000001/project.patch.json",
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("snapshot wrote %v, want %v (the excluded folder left out)", got, want)
	}
	return nil
}

var qSnapshotPush = gql("snapshot-push", `query($source: ID!) { lowcodePipeline(`+exampleArgs+`) {
	snapshotPush { entries { name outcome commit branch attempts } } } }`)

// snapshot-push refuses a configuration without git sections.
// +check
func (t *Tests) SnapshotPushNeedsGitSection(ctx context.Context) error {
	vars, err := t.example(ctx)
	if err != nil {
		return err
	}
	return t.fails(ctx, qSnapshotPush, vars, "no entry has a git section")
}
