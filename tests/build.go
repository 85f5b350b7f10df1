package main

import (
	"context"
	"fmt"
	"slices"
)

const exampleArgs = `source: $s, platformCli: "platform-cli-standin", drawPackage: "draw-standin"`

func (t *Tests) exampleID(ctx context.Context) (map[string]any, error) {
	id, err := t.Repo.Directory("examples/app").ID(ctx)
	return map[string]any{"s": id}, err
}

// build produces dist/web, dist/node and dist/codeAsData from examples/app.
// +check
func (t *Tests) BuildProducesTheThreeOutputs(ctx context.Context) error {
	vars, err := t.exampleID(ctx)
	if err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct {
			Build struct{ Glob []string }
		}
	}
	if err := t.query(ctx, `query($s: DirectoryID!) { lowcodePipeline(`+exampleArgs+`) {
		build(codeAsData: true) { glob(pattern: "dist/*/*") } } }`, vars, &out); err != nil {
		return err
	}
	got := out.LowcodePipeline.Build.Glob
	for _, want := range []string{"dist/web/index.html", "dist/node/server.mjs", "dist/codeAsData/config"} {
		if !slices.Contains(got, want) {
			return fmt.Errorf("build output lacks %s: %v", want, got)
		}
	}
	return nil
}

// draw-version reports the installed design-tool package's version.
// +check
func (t *Tests) DrawVersionIsTheInstalledOne(ctx context.Context) error {
	vars, err := t.exampleID(ctx)
	if err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct{ DrawVersion string }
	}
	if err := t.query(ctx, `query($s: DirectoryID!) { lowcodePipeline(`+exampleArgs+`) { drawVersion } }`, vars, &out); err != nil {
		return err
	}
	if out.LowcodePipeline.DrawVersion != "2.14.0" {
		return fmt.Errorf("draw version %q, want 2.14.0", out.LowcodePipeline.DrawVersion)
	}
	return nil
}

// A Node.js image older than 20 is refused.
// +check
func (t *Tests) BuildRefusesAnOldNode(ctx context.Context) error {
	vars, err := t.exampleID(ctx)
	if err != nil {
		return err
	}
	return t.expectFailure(ctx, `query($s: DirectoryID!) { lowcodePipeline(source: $s, nodeImage: "node:18") { frontend { entries } } }`,
		vars, `has Node.js v18`, "needs 20 or above")
}

// A project without a build:draw script is refused, naming the script and the file.
// +check
func (t *Tests) BuildNamesAMissingScript(ctx context.Context) error {
	src := dag.Directory().WithNewFile("package.json", `{"name":"x","scripts":{"build:node":"true"}}`)
	id, err := src.ID(ctx)
	if err != nil {
		return err
	}
	return t.expectFailure(ctx, `query($s: DirectoryID!) { lowcodePipeline(source: $s) { backend { entries } } }`,
		map[string]any{"s": id}, `package.json: no "build:draw" script`)
}
