package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

const exampleArgs = `source: $s, platformCli: "platform-cli-standin", drawPackage: "draw-standin"`

func (t *Tests) exampleID(ctx context.Context) (map[string]any, error) {
	id, err := t.Repo.Directory("examples/app").ID(ctx)
	return map[string]any{"s": id}, err
}

// example runs selection on the module constructed over examples/app.
func (t *Tests) example(ctx context.Context, selection string, out any) error {
	vars, err := t.exampleID(ctx)
	if err != nil {
		return err
	}
	return t.query(ctx, `query($s: DirectoryID!) { lowcodePipeline(`+exampleArgs+`) { `+selection+` } }`, vars, out)
}

// exampleFails runs selection on examples/app and expects an error containing wants.
func (t *Tests) exampleFails(ctx context.Context, selection string, wants ...string) error {
	vars, err := t.exampleID(ctx)
	if err != nil {
		return err
	}
	return t.expectFailure(ctx, `query($s: DirectoryID!) { lowcodePipeline(`+exampleArgs+`) { `+selection+` } }`, vars, wants...)
}

// build produces dist/web, dist/node and dist/codeAsData from examples/app.
// +check
func (t *Tests) BuildProducesTheThreeOutputs(ctx context.Context) error {
	var out struct {
		LowcodePipeline struct {
			Build struct{ Glob []string }
		}
	}
	if err := t.example(ctx, `build(codeAsData: true) { glob(pattern: "dist/*/*") }`, &out); err != nil {
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
	var out struct {
		LowcodePipeline struct{ DrawVersion string }
	}
	if err := t.example(ctx, `drawVersion`, &out); err != nil {
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

// The .npmrc secret reaches npm but never the project, the cache or the image's filesystem.
// +check
func (t *Tests) NpmrcNeverEntersALayer(ctx context.Context) error {
	const marker = "npm-secret-token-4711"
	npmrcID, err := dag.SetSecret("npmrc", "//registry.example.com/:_authToken="+marker+"\n").ID(ctx)
	if err != nil {
		return err
	}
	srcID, err := t.Repo.Directory("examples/app").ID(ctx)
	if err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct {
			Install struct {
				Rootfs   struct{ Exists bool }
				WithExec struct{ Stdout string }
			}
		}
	}
	err = t.query(ctx, `query($s: DirectoryID!, $n: SecretID!) { lowcodePipeline(source: $s, npmrc: $n) { install {
		rootfs { exists(path: "run/secrets/npmrc") }
		withExec(args: ["sh", "-c", "grep -rIl `+marker+` /app /root /var/cache/npm /tmp 2>/dev/null | wc -l"]) { stdout } } } }`,
		map[string]any{"s": srcID, "n": npmrcID}, &out)
	if err != nil {
		return err
	}
	if out.LowcodePipeline.Install.Rootfs.Exists {
		return fmt.Errorf("the .npmrc secret is part of the container's filesystem")
	}
	if n := strings.TrimSpace(out.LowcodePipeline.Install.WithExec.Stdout); n != "0" {
		return fmt.Errorf("%s files hold the .npmrc token", n)
	}
	return nil
}
