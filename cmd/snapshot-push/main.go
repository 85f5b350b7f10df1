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
	"log"
	"os"
	"time"

	"dagger/lowcode-pipeline/internal/gitsync"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
)

func main() {
	var o gitsync.Options
	var message string
	flag.StringVar(&o.RemoteURL, "remote", "", "https address of the repository, without credentials")
	flag.StringVar(&o.Branch, "branch", "", "branch to clone and push")
	flag.StringVar(&o.OutputDir, "output-dir", "", "folder of the repository the snapshot replaces")
	flag.StringVar(&o.Snapshot, "snapshot", "", "local folder holding the snapshot")
	flag.StringVar(&message, "message", "", "commit message template ({date}, {folder})")
	flag.StringVar(&o.Username, "username", gitsync.DefaultUsername, "user name sent with the token")
	flag.StringVar(&o.AuthorName, "author-name", gitsync.DefaultAuthorName, "commit author name")
	flag.StringVar(&o.AuthorEmail, "author-email", gitsync.DefaultAuthorEmail, "commit author e-mail")
	flag.IntVar(&o.MaxAttempts, "max-attempts", gitsync.DefaultMaxAttempts, "pushes to try when the branch keeps moving")
	flag.Parse()

	o.Token = os.Getenv("GIT_TOKEN")
	o.Message = snapshotconfig.RenderMessage(message, time.Now().UTC(), o.OutputDir)
	o.Logf = log.Printf
	res, err := gitsync.Sync(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "snapshot-push:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		log.Fatal(err)
	}
}
