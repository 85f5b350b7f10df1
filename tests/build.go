package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"dagger/tests/internal/dagger"
)

// The constructor arguments every query over examples/app uses.
const exampleArgs = `source: $source, platformCli: "platform-cli-standin", drawPackage: "draw-standin"`

var qBuild = gql("build", `query($source: ID!) { lowcodePipeline(`+exampleArgs+`) {
	build(codeAsData: true) { drawVersion hasCodeAsData dist { glob(pattern: "*/*") } } } }`)

// build produces web, node and codeAsData from examples/app, and the installed design-tool version.
// +check
func (t *Tests) BuildProducesTheThreeOutputs(ctx context.Context) error {
	vars, err := t.example(ctx)
	if err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct {
			Build struct {
				DrawVersion   string
				HasCodeAsData bool
				Dist          struct{ Glob []string }
			}
		}
	}
	if err := t.run(ctx, qBuild, vars, &out); err != nil {
		return err
	}
	b := out.LowcodePipeline.Build
	for _, want := range []string{"web/index.html", "node/server.mjs", "codeAsData/config/"} {
		// v0.21.8 lists a directory with a trailing "/" (engine-facts.md)
		if !slices.Contains(b.Dist.Glob, want) {
			return fmt.Errorf("build output lacks %s: %v", want, b.Dist.Glob)
		}
	}
	if b.DrawVersion != "2.14.0" || !b.HasCodeAsData {
		return fmt.Errorf("drawVersion %q (want 2.14.0), hasCodeAsData %v (want true)", b.DrawVersion, b.HasCodeAsData)
	}
	return nil
}

var qOldNode = gql("old-node", `query($source: ID!) { lowcodePipeline(source: $source, nodeImage: "node:18") { build { drawVersion } } }`)

// A Node.js image older than 20 is refused.
// +check
func (t *Tests) BuildRefusesOldNode(ctx context.Context) error {
	vars, err := t.example(ctx)
	if err != nil {
		return err
	}
	return t.fails(ctx, qOldNode, vars, "has Node.js v18", "needs 20 or above")
}

var qNoDrawScript = gql("no-draw-script", `query($source: ID!) { lowcodePipeline(source: $source) { build { drawVersion } } }`)

// A project without a build:draw script is refused, naming the script and the file.
// +check
func (t *Tests) BuildNamesMissingScript(ctx context.Context) error {
	id, err := dag.Directory().WithNewFile("package.json", `{"name":"x","scripts":{"build:node":"true"}}`).ID(ctx)
	if err != nil {
		return err
	}
	return t.fails(ctx, qNoDrawScript, map[string]any{"source": id}, `package.json: no "build:draw" script`)
}

const npmrcMarker = "npm-secret-token-4711"

var qNpmrc = gql("npmrc", `query($source: ID!, $npmrc: ID!) { lowcodePipeline(source: $source, npmrc: $npmrc) { install {
	rootfs { exists(path: "run/secrets/npmrc") }
	withExec(args: ["sh", "-c", "grep -rIl `+npmrcMarker+` /app /root /var/cache/npm /tmp 2>/dev/null | wc -l"]) { stdout } } } }`)

// The .npmrc secret reaches npm but never the project, the cache or the image's filesystem.
// +check
func (t *Tests) NpmrcNeverEntersLayer(ctx context.Context) error {
	npmrc, err := dag.SetSecret("npmrc", "//registry.example.com/:_authToken="+npmrcMarker+"\n").ID(ctx)
	if err != nil {
		return err
	}
	vars, err := t.example(ctx)
	if err != nil {
		return err
	}
	vars["npmrc"] = npmrc
	var out struct {
		LowcodePipeline struct {
			Install struct {
				Rootfs   struct{ Exists bool }
				WithExec struct{ Stdout string }
			}
		}
	}
	if err := t.run(ctx, qNpmrc, vars, &out); err != nil {
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

// A project whose backend carries a native addon (better-sqlite3, built for
// the build image's C library), as real backends often do.
func nativeAddonProject() *dagger.Directory {
	return dag.Directory().
		WithNewFile("package.json", `{"name": "addon-app", "version": "1.0.0", "private": true,
  "scripts": {"build:draw": "node draw.mjs", "build:node": "node node.mjs"},
  "dependencies": {"better-sqlite3": "12.4.1"}}`).
		WithNewFile("draw.mjs", `import { mkdirSync, writeFileSync } from 'node:fs';
mkdirSync('dist/web', { recursive: true });
writeFileSync('dist/web/index.html', '<!doctype html><title>addon</title>');`).
		WithNewFile("node.mjs", `import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
mkdirSync('dist/node', { recursive: true });
cpSync('node_modules', 'dist/node/node_modules', { recursive: true });
writeFileSync('dist/node/package.json', JSON.stringify({ name: 'addon-backend', main: 'index.js' }));
writeFileSync('dist/node/index.js', "const db = require('better-sqlite3')(':memory:'); console.log(db.prepare('select 41 + 1 as n').get().n);");`)
}

var qNativeAddon = gql("native-addon", `query($source: ID!) { lowcodePipeline(source: $source, drawPackage: "better-sqlite3") { build {
	backendImage { withExec(args: ["node", "."]) { stdout } } } } }`)

// A backend with a native addon runs in its image: the runtime has the build image's C library.
// +check
func (t *Tests) BackendNativeAddonRuns(ctx context.Context) error {
	id, err := nativeAddonProject().ID(ctx)
	if err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct {
			Build struct {
				BackendImage struct {
					WithExec struct{ Stdout string }
				}
			}
		}
	}
	if err := t.run(ctx, qNativeAddon, map[string]any{"source": id}, &out); err != nil {
		return err
	}
	if got := strings.TrimSpace(out.LowcodePipeline.Build.BackendImage.WithExec.Stdout); got != "42" {
		return fmt.Errorf("the backend with a native addon printed %q, want 42", got)
	}
	return nil
}
