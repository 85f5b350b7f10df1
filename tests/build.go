package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"dagger/tests/internal/dagger"
)

// build produces web, node and codeAsData from examples/app, and the installed design-tool version.
// +check
func (t *Tests) BuildProducesTheThreeOutputs(ctx context.Context) error {
	b := build(t.app(), dagger.LowcodePipelineBuildOpts{CodeAsData: dagger.LowcodePipelineCodeAsDataKindProject})
	files, err := b.Dist().Glob(ctx, "*/*")
	if err != nil {
		return err
	}
	// v0.21.8 lists a directory with a trailing "/" (engine-facts.md)
	for _, want := range []string{"web/index.html", "node/server.mjs", "codeAsData/import_order.json"} {
		if !slices.Contains(files, want) {
			return fmt.Errorf("build output lacks %s: %v", want, files)
		}
	}
	version, err := b.DrawVersion(ctx)
	if err != nil {
		return err
	}
	has, err := b.HasCodeAsData(ctx)
	if err != nil {
		return err
	}
	summary, err := b.Summary(ctx)
	if err != nil {
		return err
	}
	if version != "2.14.0" || !has || !strings.Contains(summary, "draw_version 2.14.0") {
		return fmt.Errorf("drawVersion %q (want 2.14.0), hasCodeAsData %v (want true), summary %q", version, has, summary)
	}
	return nil
}

// Each output costs only its own work: the frontend exports although build:node fails.
// +check
func (t *Tests) BuildOutputsAreBuiltWhenUsed(ctx context.Context) error {
	source := t.app().WithNewFile("scripts/build-node.mjs", "console.error('build:node is broken'); process.exit(1);\n")
	b := build(source, dagger.LowcodePipelineBuildOpts{})
	if _, err := b.Frontend().Entries(ctx); err != nil {
		return fmt.Errorf("dist/web needs build:draw only, yet: %w", err)
	}
	_, err := b.Backend().Entries(ctx)
	return fails("dist/node", err, "exit code")
}

// A step given its inputs in package.json (lowcodePipeline.inputs) runs
// again only when they change: after a web file changed, build:node's output
// is the one it wrote before (a stamp it writes on each run says so); after a
// server file changed, build:node runs again. The projects are read back
// from this module's own files, as a checkout is, so that the engine keys
// them on their content (engine-facts.md, facts 13 and 34).
// +check
func (t *Tests) BuildReRunsOnlyTheStepsWhoseInputsChanged(ctx context.Context) error {
	script, err := t.app().File("scripts/build-node.mjs").Contents(ctx)
	if err != nil {
		return err
	}
	server, err := t.app().File("src/server/server.mjs").Contents(ctx)
	if err != nil {
		return err
	}
	stamped := t.app().WithNewFile("scripts/build-node.mjs",
		script+"writeFileSync(`${out}/stamp.txt`, `${process.hrtime.bigint()} ${Math.random()}\n`);\n")
	variants := map[string]*dagger.Directory{
		"base":   stamped,
		"web":    stamped.WithNewFile("src/web/app.js", "console.log('changed web');\n"),
		"server": stamped.WithNewFile("src/server/server.mjs", "// changed server\n"+server),
	}
	stamps := map[string]string{}
	for _, name := range []string{"base", "web", "server"} {
		at := "variants/" + name
		if _, err := variants[name].Export(ctx, at); err != nil {
			return err
		}
		b := build(dag.CurrentModule().Workdir(at), dagger.LowcodePipelineBuildOpts{})
		if stamps[name], err = b.Backend().File("stamp.txt").Contents(ctx); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if name == "web" {
			index, err := b.Frontend().File("index.html").Contents(ctx)
			if err != nil {
				return err
			}
			js, err := b.Frontend().Glob(ctx, "assets/app.*.js")
			if err != nil || len(js) != 1 || !strings.Contains(index, js[0]) {
				return fmt.Errorf("the changed web file: dist/web has %v (%v), index.html loads none of them", js, err)
			}
			if got, err := b.Frontend().File(js[0]).Contents(ctx); err != nil || got != "console.log('changed web');\n" {
				return fmt.Errorf("build:draw did not run on the changed web file: %s holds %q (%v)", js[0], got, err)
			}
		}
	}
	summary, err := build(dag.CurrentModule().Workdir("variants/base"), dagger.LowcodePipelineBuildOpts{}).Summary(ctx)
	if err != nil {
		return err
	}
	if !strings.Contains(summary, "dist/node (npm run build:node; reads scripts/build-node.mjs, src/server)") {
		return fmt.Errorf("the build's summary does not say what build:node reads: %q", summary)
	}
	if stamps["web"] != stamps["base"] {
		return fmt.Errorf("build:node ran again after a web file changed (stamp %q, then %q): its declared inputs are scripts/build-node.mjs and src/server", stamps["base"], stamps["web"])
	}
	if stamps["server"] == stamps["base"] {
		return fmt.Errorf("build:node did not run again after src/server changed (stamp %q both times)", stamps["base"])
	}
	return nil
}

// A Node.js image older than 20 is refused, saying why.
// +check
func (t *Tests) BuildRefusesOldNode(ctx context.Context) error {
	_, err := build(t.app(), dagger.LowcodePipelineBuildOpts{NodeImage: "node:18"}).DrawVersion(ctx)
	return fails("node:18", err, "has Node.js v18", "needs 20 or above")
}

// A project without a build:draw script is refused, naming the script and the file.
// +check
func (t *Tests) BuildNamesMissingScript(ctx context.Context) error {
	source := dag.Directory().WithNewFile("package.json", `{"name":"x","scripts":{"build:node":"true"}}`)
	_, err := dag.LowcodePipeline().Build(dagger.LowcodePipelineBuildOpts{Source: source}).DrawVersion(ctx)
	return fails("no build:draw", err, `package.json: no "build:draw" script`)
}

// A declaration of what a step reads that names a path the project lacks,
// or no path at all, is refused before anything runs, each problem by its
// place in package.json.
// +check
func (t *Tests) BuildRefusesBadDeclaredInputs(ctx context.Context) error {
	manifest, err := t.app().File("package.json").Contents(ctx)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(manifest), &doc); err != nil {
		return err
	}
	doc["lowcodePipeline"] = map[string]any{"inputs": map[string]any{
		"build:draw": []string{"scripts/build-web.mjs", "src/web", "src/wbe"},
		"build:node": []string{"src/*.mjs"},
	}}
	edited, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	source := t.app().WithNewFile("package.json", string(edited))
	_, err = build(source, dagger.LowcodePipelineBuildOpts{}).DrawVersion(ctx)
	if err := fails("a pattern", err, `package.json: lowcodePipeline.inputs.build:node[0]: "src/*.mjs": a pattern`); err != nil {
		return err
	}
	doc["lowcodePipeline"] = map[string]any{"inputs": map[string]any{"build:draw": []string{"scripts/build-web.mjs", "src/web", "src/wbe"}}}
	if edited, err = json.Marshal(doc); err != nil {
		return err
	}
	_, err = build(t.app().WithNewFile("package.json", string(edited)), dagger.LowcodePipelineBuildOpts{}).DrawVersion(ctx)
	return fails("a missing path", err, `package.json: lowcodePipeline.inputs.build:draw[2]: "src/wbe": no such file or folder in the project`)
}

// A step given its inputs sees those paths and what the install read, nothing
// else of the project; given none, only what the install read.
// +check
func (t *Tests) BuildGivesDeclaredStepsOnlyTheirInputs(ctx context.Context) error {
	manifest, err := t.app().File("package.json").Contents(ctx)
	if err != nil {
		return err
	}
	seen := func(declared []string) (string, error) {
		var doc map[string]any
		if err := json.Unmarshal([]byte(manifest), &doc); err != nil {
			return "", err
		}
		doc["scripts"].(map[string]any)["build:node"] = `node -e "const fs=require('fs'); fs.mkdirSync('dist/node',{recursive:true}); fs.writeFileSync('dist/node/seen.txt', fs.readdirSync('.').sort().join(' '))"`
		doc["lowcodePipeline"] = map[string]any{"inputs": map[string]any{"build:node": declared}}
		edited, err := json.Marshal(doc)
		if err != nil {
			return "", err
		}
		return build(t.app().WithNewFile("package.json", string(edited)), dagger.LowcodePipelineBuildOpts{}).Backend().File("seen.txt").Contents(ctx)
	}
	for _, tc := range []struct {
		declared []string
		want     string
	}{
		// the install read package.json, the lock file and the stand-ins' folders (file: dependencies); dist is the step's own
		{[]string{}, "dist node_modules package-lock.json package.json tools"},
		{[]string{"src/server", "res"}, "dist node_modules package-lock.json package.json res src tools"},
	} {
		got, err := seen(tc.declared)
		if err != nil {
			return err
		}
		if got != tc.want {
			return fmt.Errorf("build:node declared to read %v saw %q; want %q", tc.declared, got, tc.want)
		}
	}
	return nil
}

// withScript is examples/app with one of package.json's scripts set to cmd.
func (t *Tests) withScript(ctx context.Context, name, cmd string) (*dagger.Directory, error) {
	manifest, err := t.app().File("package.json").Contents(ctx)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(manifest), &doc); err != nil {
		return nil, err
	}
	scripts, ok := doc["scripts"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("examples/app/package.json has no scripts")
	}
	scripts[name] = cmd
	edited, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return t.app().WithNewFile("package.json", string(edited)), nil
}

// A postinstall that runs a project file finds it, as in a checkout: the install gets what the project's install-time scripts read.
// +check
func (t *Tests) InstallRunsTheProjectsPostinstall(ctx context.Context) error {
	source, err := t.withScript(ctx, "postinstall", "node scripts/postinstall.mjs")
	if err != nil {
		return err
	}
	source = source.WithNewFile("scripts/postinstall.mjs", "import { writeFileSync } from 'node:fs'\nwriteFileSync('postinstall-ran.txt', 'yes')\n")
	ran, err := dag.LowcodePipeline().Install(dagger.LowcodePipelineInstallOpts{Source: source}).File("/app/postinstall-ran.txt").Contents(ctx)
	if err != nil {
		return fmt.Errorf("the postinstall did not leave its file: %w", err)
	}
	if ran != "yes" {
		return fmt.Errorf("the postinstall wrote %q, want yes", ran)
	}
	return nil
}

// The project's .npmrc reaches npm without the settings that name an environment variable, which --npmrc then gives.
// +check
func (t *Tests) InstallKeepsTheProjectsNpmrcSettings(ctx context.Context) error {
	source := t.app().WithNewFile(".npmrc", "fund=false\n//npm.vendor.example/:_authToken=${NPM_TOKEN}\n")
	got, err := dag.LowcodePipeline().Install(dagger.LowcodePipelineInstallOpts{Source: source}).File("/app/.npmrc").Contents(ctx)
	if err != nil {
		return err
	}
	if got != "fund=false\n" {
		return fmt.Errorf("the install's .npmrc is %q, want the project's settings without the ${NPM_TOKEN} one", got)
	}
	return nil
}

// A node_modules below the project's root (a sub-project's, installed for another machine) never reaches the build: it would be laid over the install.
// +check
func (t *Tests) InstallLeavesOutNestedNodeModules(ctx context.Context) error {
	source := t.app().WithNewFile("tools/sub/node_modules/host-only/index.js", "throw new Error('built for the host')\n").
		WithNewFile("tools/sub/index.js", "export {}\n")
	app := dag.LowcodePipeline().Install(dagger.LowcodePipelineInstallOpts{Source: source}).Directory("/app")
	kept, err := app.Exists(ctx, "tools/sub/index.js")
	if err != nil {
		return err
	}
	nested, err := app.Exists(ctx, "tools/sub/node_modules")
	if err != nil {
		return err
	}
	if !kept || nested {
		return fmt.Errorf("tools/sub/index.js in the project: %v (want true); tools/sub/node_modules: %v (want false)", kept, nested)
	}
	return nil
}

// A token in another snapshot configuration kept in res/ (which the template's
// webpack copies into the frontend image whole) reaches no build container;
// an address of the app's own configuration there stays as written.
// +check
func (t *Tests) InstallScrubsEverySnapshotConfig(ctx context.Context) error {
	const token = "ghp_snapshot_token_0815"
	ctr := dag.LowcodePipeline().Install(dagger.LowcodePipelineInstallOpts{Source: t.app().
		WithNewFile("res/snapshot-config.json", `[{"snapshooter":{"name":"dev"},"git":{"repo":"https://`+token+`@git.example.com/dev.git"}}]`).
		WithNewFile("res/env/snapshot-config.prod.json", `[{"snapshooter":{"name":"prod"},"git":{"repo":"https://`+token+`@git.example.com/prod.git"}}]`).
		WithNewFile("res/oConfig.json", `{"server":"https://user:pw@api.example.com/"}`)})
	// the token in no file; the other configuration's address without it; the app's own as written
	out, err := ctr.WithExec([]string{"sh", "-c", "grep -rlF " + token + " /app/res; " +
		"grep -qF '\"https://git.example.com/prod.git\"' /app/res/env/snapshot-config.prod.json || echo 'prod config rewritten wrongly'; " +
		"grep -qF user:pw@ /app/res/oConfig.json || echo 'the app configuration changed'; true"}).Stdout(ctx)
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) != "" {
		return fmt.Errorf("after the install: %s", strings.Join(strings.Fields(out), " "))
	}
	return nil
}

// The design tool's version of a project that does not depend on it itself,
// a workspace does, comes from npm ls (an exec bounded by a step's time limit).
// +check
func (t *Tests) DrawVersionOfWorkspaceDependency(ctx context.Context) error {
	source := dag.Directory().
		WithNewFile("package.json", `{"name":"ws","private":true,"workspaces":["packages/*"],"scripts":{"build:draw":"true","build:node":"true"}}`).
		WithNewFile("packages/draw/package.json", `{"name":"draw-ws","version":"3.1.4"}`).
		WithNewFile("packages/app/package.json", `{"name":"app","version":"1.0.0","dependencies":{"draw-ws":"3.1.4"}}`)
	got, err := dag.LowcodePipeline().Build(dagger.LowcodePipelineBuildOpts{Source: source, DrawPackage: "draw-ws"}).DrawVersion(ctx)
	if err != nil {
		return err
	}
	if got != "3.1.4" {
		return fmt.Errorf("drawVersion %q, want 3.1.4: the workspace's dependency, as npm ls lists it", got)
	}
	return nil
}

// npm workspaces install from each one's package.json, and the project the builds get resolves every workspace with its files.
// +check
func (t *Tests) InstallLinksWorkspaces(ctx context.Context) error {
	source := dag.Directory().
		WithNewFile("package.json", `{"name":"ws","private":true,"workspaces":["packages/*"]}`).
		WithNewFile("packages/ui/package.json", `{"name":"ui","version":"1.0.0","main":"index.js"}`).
		WithNewFile("packages/ui/index.js", "module.exports = 'from the ui workspace'\n")
	got, err := dag.LowcodePipeline().Install(dagger.LowcodePipelineInstallOpts{Source: source}).
		WithExec([]string{"node", "-p", "require('ui')"}).Stdout(ctx)
	if err != nil {
		return err
	}
	if strings.TrimSpace(got) != "from the ui workspace" {
		return fmt.Errorf("require('ui') gave %q, want the workspace's export", got)
	}
	return nil
}

const npmrcMarker = "npm-secret-token-4711"

// The .npmrc secret reaches npm but never the project, the cache or the image's filesystem.
// +check
func (t *Tests) NpmrcNeverEntersLayer(ctx context.Context) error {
	npmrc := dag.SetSecret("npmrc", "//registry.example.com/:_authToken="+npmrcMarker+"\n")
	installed := dag.LowcodePipeline().Install(dagger.LowcodePipelineInstallOpts{Source: t.app(), Npmrc: npmrc})
	exists, err := installed.Rootfs().Exists(ctx, "run/secrets/npmrc")
	if err != nil {
		return err
	}
	if exists {
		return fmt.Errorf("the .npmrc secret is part of the container's filesystem")
	}
	n, err := installed.WithExec([]string{"sh", "-c", "grep -rIl " + npmrcMarker + " /app /root /var/cache/npm /tmp 2>/dev/null | wc -l"}).Stdout(ctx)
	if err != nil {
		return err
	}
	if strings.TrimSpace(n) != "0" {
		return fmt.Errorf("%s files hold the .npmrc token", strings.TrimSpace(n))
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

// A backend with a native addon runs in its image: the runtime has the build image's C library.
// +check
func (t *Tests) BackendNativeAddonRuns(ctx context.Context) error {
	out, err := dag.LowcodePipeline().Build(dagger.LowcodePipelineBuildOpts{Source: nativeAddonProject(), DrawPackage: "better-sqlite3"}).
		BackendImage().
		WithExec([]string{"node", "."}).
		Stdout(ctx)
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(out); got != "42" {
		return fmt.Errorf("the backend with a native addon printed %q, want 42", got)
	}
	return nil
}
