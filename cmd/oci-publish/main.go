// Command oci-publish pushes one image of a build reproducibly (see
// internal/ocipublish): it reads the request as JSON (-request FILE) and the
// registry password from $REGISTRY_PASSWORD, clamps every time in the image
// to the request's created time, checks the platforms, pushes every tag and
// prints the result as JSON.
//
//	REGISTRY_PASSWORD=… oci-publish -request request.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"dagger/lowcode-pipeline/internal/ocipublish"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the command: the request in, the result as JSON on stdout, 0, 1 or 2 out.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("oci-publish", flag.ContinueOnError)
	fs.SetOutput(stderr)
	requestFile := fs.String("request", "", "JSON file of the request")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	data, err := os.ReadFile(*requestFile)
	if err != nil {
		fmt.Fprintln(stderr, "oci-publish: -request:", err)
		return 2
	}
	var req ocipublish.Request
	if err := json.Unmarshal(data, &req); err != nil {
		fmt.Fprintln(stderr, "oci-publish: -request:", err)
		return 2
	}
	work, err := os.MkdirTemp("", "oci-publish-")
	if err != nil {
		fmt.Fprintln(stderr, "oci-publish:", err)
		return 1
	}
	defer os.RemoveAll(work)
	result, err := ocipublish.Run(ctx, req, getenv("REGISTRY_PASSWORD"), work)
	if err != nil {
		fmt.Fprintf(stderr, "oci-publish: the %s image: %v\n", req.Kind, err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(result); err != nil {
		fmt.Fprintln(stderr, "oci-publish:", err)
		return 1
	}
	return 0
}
