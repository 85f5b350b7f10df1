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
// lacks it, reads each tag back, and prints the result as JSON;
//
//	oci-publish keep-base -base base.tar -verdicts DIR [-ref REF@DIGEST]
//
// keeps, while the project builds, in the folder normalize keeps its
// verdicts in, what the base's registry says of a base image (ref), or
// that it could not be read; a base its registry cannot give has its layers
// (an OCI tarball) re-encoded there instead.

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
	if len(args) == 0 || (args[0] != "normalize" && args[0] != "push" && args[0] != "keep-base") {
		fmt.Fprintln(stderr, "oci-publish: usage: oci-publish normalize -request FILE -out DIR | push -request FILE -layout DIR | keep-base -base FILE -verdicts DIR [-ref REF]")
		return 2
	}
	step := args[0]
	fs := flag.NewFlagSet("oci-publish "+step, flag.ContinueOnError)
	fs.SetOutput(stderr)
	requestFile := fs.String("request", "", "JSON file of the request")
	dir := fs.String("out", "", "folder to write the OCI layout to (normalize)")
	layoutDir := fs.String("layout", "", "folder of the OCI layout to push (push)")
	baseFile := fs.String("base", "", "OCI tarball of the base image (keep-base)")
	verdicts := fs.String("verdicts", "", "folder normalize keeps re-encoded layers in (keep-base)")
	baseRef := fs.String("ref", "", "the base image's reference, pinned by digest, to read from its registry (keep-base)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if step == "keep-base" {
		return keepBase(ctx, *baseFile, *baseRef, *verdicts, stderr)
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
		return withWork(stderr, "oci-publish: the "+p.Kind+" image", func(work string) error {
			return ocipublish.Normalized(ctx, p, work, *dir, stderr)
		})
	}
	var req ocipublish.Request
	if err := json.Unmarshal(data, &req); err != nil {
		fmt.Fprintln(stderr, "oci-publish: -request:", err)
		return 2
	}
	result, err := ocipublish.Push(ctx, req, secret.New(getenv("REGISTRY_PASSWORD")), *layoutDir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "oci-publish: the %s image: %v\n", fielderr.Printable(req.Kind), err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(result); err != nil {
		fmt.Fprintln(stderr, "oci-publish:", err)
		return 1
	}
	return 0
}

// keepBase is oci-publish keep-base: it readies, while the project builds,
// what normalize takes of the base image. A base its registry gives (read
// and kept by its digest) needs nothing more: its layers are pushed as the
// registry's blobs, which the engine's export of a base it pulled holds
// already. One its registry cannot give is said, not failed on: its layers
// are re-encoded and its export kept (ocipublish.KeepBase), which normalize
// then takes in the registry's place.
func keepBase(ctx context.Context, base, ref, verdicts string, stderr io.Writer) int {
	if base == "" || verdicts == "" {
		fmt.Fprintln(stderr, "oci-publish keep-base: -base and -verdicts are both needed")
		return 2
	}
	if ref != "" {
		err := ocipublish.ReadRegistryBase(ctx, ref, ocipublish.Verdicts{Dir: verdicts})
		if err == nil {
			return 0
		}
		fmt.Fprintf(stderr, "oci-publish: the base image: %v; the engine's first export of it, kept by its digest, stands in for it (tests/engine-facts.md, fact 52)\n", err)
	}
	return withWork(stderr, "oci-publish: the base image", func(work string) error {
		_, err := ocipublish.KeepBase(base, work, ref, ocipublish.Verdicts{Dir: verdicts})
		return err
	})
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
		fmt.Fprintf(stderr, "%s: %v\n", what, err)
		return 1
	}
	return 0
}
