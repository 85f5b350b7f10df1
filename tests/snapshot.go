package main

import (
	"context"
	"fmt"
	"slices"
)

// snapshot writes each entry's roots, less the excluded folders, into its outputDir.
// +check
func (t *Tests) SnapshotWritesTheOutputDirs(ctx context.Context) error {
	var out struct {
		LowcodePipeline struct {
			Snapshot struct{ Glob []string }
		}
	}
	if err := t.example(ctx, `snapshot { glob(pattern: "codeasdata/orders/**/*.patch.json") }`, &out); err != nil {
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

// snapshot-push refuses a configuration without git sections.
// +check
func (t *Tests) SnapshotPushNeedsAGitSection(ctx context.Context) error {
	return t.exampleFails(ctx, `snapshotPush`, "no entry has a git section")
}
