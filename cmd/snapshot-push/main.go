// Command snapshot-push commits one snapshot folder into a git branch and
// pushes it when it changed (see internal/gitsync). The token comes from
// $GIT_TOKEN; the result is printed as JSON.
//
//	GIT_TOKEN=… snapshot-push -remote https://git.example.com/team/code.git \
//	  -branch main -output-dir codeasdata/main -snapshot ./snapshot -message 'snapshot {folder} {date}'
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"dagger/lowcode-pipeline/internal/gitsync"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the command: flags in, the result as JSON on stdout, 0 or 1 out.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("snapshot-push", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o gitsync.Options
	var message string
	fs.StringVar(&o.RemoteURL, "remote", "", "https address of the repository, without credentials")
	fs.StringVar(&o.Branch, "branch", "", "branch to clone and push")
	fs.StringVar(&o.OutputDir, "output-dir", "", "folder of the repository the snapshot replaces")
	fs.StringVar(&o.Snapshot, "snapshot", "", "local folder holding the snapshot")
	fs.StringVar(&message, "message", "", "commit message template ({date}, {folder})")
	fs.StringVar(&o.Username, "username", gitsync.DefaultUsername, "user name sent with the token")
	fs.StringVar(&o.AuthorName, "author-name", gitsync.DefaultAuthorName, "commit author name")
	fs.StringVar(&o.AuthorEmail, "author-email", gitsync.DefaultAuthorEmail, "commit author e-mail")
	fs.IntVar(&o.MaxAttempts, "max-attempts", gitsync.DefaultMaxAttempts, "pushes to try when the branch keeps moving")
	fs.BoolVar(&o.AllowHTTP, "allow-http", false, "allow a plain-http repository (local test servers only)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.Token = getenv("GIT_TOKEN")
	o.Message = snapshotconfig.RenderMessage(message, time.Now().UTC(), o.OutputDir)
	o.Logf = log.New(stderr, "", log.LstdFlags).Printf
	res, err := gitsync.Sync(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "snapshot-push:", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		fmt.Fprintln(stderr, "snapshot-push:", err)
		return 1
	}
	return 0
}
