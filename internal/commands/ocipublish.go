// The oci-publish command pushes one image of a build reproducibly (see
// internal/ocipublish), in two steps, so that the engine caches the first:
//
//	oci-publish normalize -request prepare.json -out DIR
//
// clamps every time in the image (an OCI tarball) to the request's created
// time, checks the platforms, and writes it as an OCI layout into DIR;
//
//	REGISTRY_PASSWORD=… oci-publish push -request request.json -layout DIR
//
// reads what each tag holds, pushes that layout (or tags it) where a tag
// lacks it, reads each tag back, and prints the result as JSON.

package commands

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/ocipublish"
	"dagger/lowcode-pipeline/internal/secret"
)

// OCIPublish is the oci-publish command: a step and its flags in, the result
// as JSON on stdout (push), 0, 1 or 2 out.
func OCIPublish(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "normalize" && args[0] != "push") {
		fmt.Fprintln(stderr, "oci-publish: usage: oci-publish normalize -request FILE -out DIR | push -request FILE -layout DIR")
		return 2
	}
	step := args[0]
	fs := flag.NewFlagSet("oci-publish "+step, flag.ContinueOnError)
	fs.SetOutput(stderr)
	requestFile := fs.String("request", "", "JSON file of the request")
	dir := fs.String("out", "", "folder to write the OCI layout to (normalize)")
	layoutDir := fs.String("layout", "", "folder of the OCI layout to push (push)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	data, err := os.ReadFile(*requestFile)
	if err != nil {
		fmt.Fprintln(stderr, "oci-publish: -request:", err)
		return 2
	}
	if step == "normalize" {
		var p ocipublish.Prepare
		if err := json.Unmarshal(data, &p); err != nil {
			fmt.Fprintln(stderr, "oci-publish: -request:", err)
			return 2
		}
		return withWork(stderr, "oci-publish: the "+fielderr.Printable(p.Kind)+" image", func(work string) error {
			return ocipublish.Normalized(p, work, *dir, stderr)
		})
	}
	var req ocipublish.Request
	if err := json.Unmarshal(data, &req); err != nil {
		fmt.Fprintln(stderr, "oci-publish: -request:", err)
		return 2
	}
	result, err := ocipublish.Push(ctx, req, secret.New(getenv("REGISTRY_PASSWORD")), *layoutDir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "oci-publish: the %s image: %s\n", fielderr.Printable(req.Kind), fielderr.Printable(err.Error()))
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(result); err != nil {
		fmt.Fprintln(stderr, "oci-publish:", err)
		return 1
	}
	return 0
}

// withWork runs f with a folder of its own, removed after it: 1 when f
// fails (its error after what), else 0.
func withWork(stderr io.Writer, what string, f func(work string) error) int {
	work, err := os.MkdirTemp("", "oci-publish-")
	if err != nil {
		fmt.Fprintln(stderr, "oci-publish:", err)
		return 1
	}
	defer os.RemoveAll(work)
	if err := f(work); err != nil {
		// the layout's words (a media type, a digest) are the tarball's
		fmt.Fprintf(stderr, "%s: %s\n", what, fielderr.Printable(err.Error()))
		return 1
	}
	return 0
}
