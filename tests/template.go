package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"dagger/tests/internal/dagger"
)

// olympe is examples/olympe: a project laid out as the vendor's template
// (no lock file, no ARG SOURCES_PATH, the toolkit and the design tool in its
// devDependencies, a Node.js 18 backend base, RUN steps in the code-as-data
// Dockerfile), built from the vendor's packages.
func (t *Tests) olympe() *dagger.Directory { return t.Repo.Directory("examples/olympe") }

// A project laid out as the vendor's template delivers with only what a CI must say: where to push, where to deploy, the token. Its images hold exactly the build outputs where its Dockerfiles put them, one POST.
// +check
func (t *Tests) TemplateShapedProjectDelivers(ctx context.Context) error {
	reg, err := registry(ctx, "TemplateShapedProjectDelivers")
	if err != nil {
		return err
	}
	defer reg.Stop(ctx)
	rcv, err := startReceiver(ctx, "/acme/template")
	if err != nil {
		return err
	}
	defer rcv.svc.Stop(ctx)
	d, err := pinDelivery(ctx, dag.LowcodePipeline().Deliver(checkRegistry+"/template/{kind}", []string{"1.0.0"}, rcv.url, rcv.token,
		dagger.LowcodePipelineDeliverOpts{Source: t.olympe(), CodeAsData: dagger.LowcodePipelineCodeAsDataKindProject,
			RegistryService: reg, AllowHTTP: true}))
	if err != nil {
		return err
	}
	summary, err := d.Summary(ctx)
	if err != nil {
		return err
	}
	if !strings.Contains(summary, "deployed: 200 success\n") || !strings.Contains(summary, "warning: no package-lock.json") {
		return fmt.Errorf("the summary %q does not say 200 success and that no lock file pins the install", summary)
	}
	b := d.Build()
	if v, err := b.DrawVersion(ctx); err != nil || v != "2.9.2" {
		return fmt.Errorf("draw_version %q (%v), want 2.9.2: @olympeio/draw from package.json", v, err)
	}
	for _, img := range []struct {
		name       string
		ctr        *dagger.Container
		dir        string
		want, none []string
	}{
		{"frontend", b.FrontendImage(), "/usr/share/nginx/html", []string{"index.html", "main.js", "version.json"}, []string{"package.json", "src", "docker", "dist", ".dockerignore"}},
		{"backend", b.BackendImage(), "/home/node/app", []string{"main.js", "oConfig.json"}, []string{"package.json", "src", "docker", "dist", ".dockerignore"}},
		{"code as data", b.CodeAsDataImage(), "/root/patches", []string{"olympe-example", "olympeio.draw", "import_order.json"}, []string{"package.json", "snapshot", "docker", ".dockerignore"}},
	} {
		entries, err := img.ctr.Directory(img.dir).Entries(ctx)
		if err != nil {
			return fmt.Errorf("the %s image: %w", img.name, err)
		}
		for _, w := range img.want {
			if !slices.Contains(entries, w) && !slices.Contains(entries, w+"/") {
				return fmt.Errorf("the %s image's %s holds %v, without %s", img.name, img.dir, entries, w)
			}
		}
		for _, n := range img.none {
			if slices.Contains(entries, n) || slices.Contains(entries, n+"/") {
				return fmt.Errorf("the %s image's %s holds %v: %s is the project's, not the build output's", img.name, img.dir, entries, n)
			}
		}
	}
	// the vendor's RUN steps ran as written, and the backend runs on its Node.js 18 base
	modes, err := b.CodeAsDataImage().WithExec([]string{"stat", "-c", "%a %u:%g", "/root/patches"}).Stdout(ctx)
	if err != nil || strings.TrimSpace(modes) != "775 1000:1000" {
		return fmt.Errorf("the code-as-data image's /root/patches is %q (%v), want 775 1000:1000 after its RUN steps", modes, err)
	}
	node, err := b.BackendImage().WithExec([]string{"node", "--version"}).Stdout(ctx)
	if err != nil || !strings.HasPrefix(node, "v18.") {
		return fmt.Errorf("the backend runs on %q (%v), want the Node.js 18 of its base", node, err)
	}
	return oneDelivery(ctx, rcv, d.Payload())
}

// A Dockerfile that copies $SOURCES_PATH without ARG SOURCES_PATH and also copies a file of the project is refused before the build, naming the line and the fix: its build context is the build output alone.
// +check
func (t *Tests) DockerfileWithoutSourcesPathThatReadsTheProjectIsRefused(ctx context.Context) error {
	source := t.app().WithNewFile("docker/frontend.Dockerfile",
		"FROM nginx:stable\nCOPY --chown=nginx:root $SOURCES_PATH /usr/share/nginx/html\nCOPY docker/nginx.conf /etc/nginx/conf.d/default.conf\n")
	_, err := build(source, dagger.LowcodePipelineBuildOpts{}).FrontendImage().Sync(ctx)
	return fails("a vendor-shaped Dockerfile that reads the project", err, "docker/frontend.Dockerfile:3 reads the project's files", `add a line "ARG SOURCES_PATH" after the FROM line (line 1)`)
}
