// The snapshot-push command commits snapshot folders into git branches and
// pushes those that changed (see internal/snapshotpush). It reads the batch
// as JSON (-batch FILE), each entry's token from the environment variable
// the batch names, and prints the report as JSON whatever happened; it exits
// 1 when an entry failed.
//
//	GIT_TOKEN=… snapshot-push -batch batch.json

package commands

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"dagger/lowcode-pipeline/internal/snapshotpush"
)

// SnapshotPush is the snapshot-push command: flags in, the report as JSON on
// stdout, 0, 1 or 2 out.
func SnapshotPush(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("snapshot-push", flag.ContinueOnError)
	fs.SetOutput(stderr)
	batchFile := fs.String("batch", "", "JSON file of the entries and options")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	data, err := os.ReadFile(*batchFile)
	if err != nil {
		fmt.Fprintln(stderr, "snapshot-push: -batch:", err)
		return 2
	}
	var batch snapshotpush.Batch
	if err := json.Unmarshal(data, &batch); err != nil {
		fmt.Fprintln(stderr, "snapshot-push: -batch:", err)
		return 2
	}
	report := snapshotpush.Run(ctx, batch, getenv, time.Now().UTC(), log.New(stderr, "", log.LstdFlags).Printf)
	if err := json.NewEncoder(stdout).Encode(report); err != nil {
		fmt.Fprintln(stderr, "snapshot-push:", err)
		return 1
	}
	if report.Failed() {
		fmt.Fprintln(stderr, "snapshot-push: an entry failed:\n"+report.Summary())
		return 1
	}
	return 0
}
