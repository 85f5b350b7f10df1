package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	telemetry "github.com/dagger/otel-go"
	"go.opentelemetry.io/otel/trace"

	"dagger/tests/internal/dagger"
)

// The frontend image serves dist/web over HTTP from the document root, owned by the web user with group root, labelled draw_version.
// +check
func (t *Tests) FrontendImageServesTheSite(ctx context.Context) error {
	img := build(t.app(), dagger.LowcodePipelineBuildOpts{}).FrontendImage()
	label, err := img.Label(ctx, "draw_version")
	if err != nil {
		return err
	}
	if label != "2.14.0" {
		return fmt.Errorf("draw_version label %q, want 2.14.0", label)
	}
	owner, err := img.WithExec([]string{"sh", "-c", "stat -c '%U:%G %A' /usr/share/nginx/html/index.html"}).Stdout(ctx)
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(owner); !strings.HasPrefix(got, "nginx:root -rw-r") {
		return fmt.Errorf("index.html is %q, want owned by nginx:root and group-readable", got)
	}
	return fetchesSite(ctx, img)
}

// A build tool that writes private files (umask 077) still gives an image whose files the web server's group reads: the build sets the output's modes.
// +check
func (t *Tests) FrontendImageFilesAreReadableByGroupRoot(ctx context.Context) error {
	source, err := t.withScript(ctx, "build:draw", "umask 077 && node scripts/build-web.mjs")
	if err != nil {
		return err
	}
	img := build(source, dagger.LowcodePipelineBuildOpts{}).FrontendImage()
	out, err := img.WithExec([]string{"sh", "-c", "stat -c '%A' /usr/share/nginx/html/index.html /usr/share/nginx/html/assets"}).Stdout(ctx)
	if err != nil {
		return err
	}
	if got := strings.Fields(out); len(got) != 2 || got[0] != "-rw-r--r--" || got[1] != "drwxr-xr-x" {
		return fmt.Errorf("index.html and assets/ are %q, want -rw-r--r-- and drwxr-xr-x", out)
	}
	return fetchesSite(ctx, img)
}

// fetchesSite serves a frontend image and fetches its index page over HTTP.
func fetchesSite(ctx context.Context, frontend *dagger.Container) error {
	site := frontend.WithExposedPort(80).AsService(dagger.ContainerAsServiceOpts{UseEntrypoint: true})
	page, err := dag.Container().From("alpine:3.22").
		WithServiceBinding("frontend", site).
		WithExec([]string{"wget", "-qO-", "http://frontend/"}).
		Stdout(ctx)
	if err != nil {
		return fmt.Errorf("fetch the frontend over HTTP: %w", err)
	}
	if !strings.Contains(page, "<title>Example app</title>") {
		return fmt.Errorf("the frontend served %.200q, not examples/app's page", page)
	}
	return nil
}

// The backend image runs dist/node from /home/node/app as a non-root user, and the code-as-data image holds dist/codeAsData at /root/patches, where the platform reads them.
// +check
func (t *Tests) BackendAndCodeAsDataImages(ctx context.Context) error {
	b := build(t.app(), dagger.LowcodePipelineBuildOpts{CodeAsData: dagger.LowcodePipelineCodeAsDataKindProject})
	user, err := b.BackendImage().User(ctx)
	if err != nil {
		return err
	}
	if user == "" || user == "root" || user == "0" {
		return fmt.Errorf("backend image user %q, want non-root", user)
	}
	workdir, err := b.BackendImage().Workdir(ctx)
	if err != nil {
		return err
	}
	if workdir != "/home/node/app" {
		return fmt.Errorf("backend image workdir %q, want /home/node/app", workdir)
	}
	order, err := b.CodeAsDataImage().File("/root/patches/import_order.json").Contents(ctx)
	if err != nil {
		return err
	}
	if !strings.Contains(order, `"path":"lowcode-example-app"`) {
		return fmt.Errorf("unexpected code-as-data import order: %s", order)
	}
	return nil
}

// publish refuses an invalid tag, a repository without {kind} and one without a registry host before building anything.
// +check
func (t *Tests) PublishRefusesBadNames(ctx context.Context) error {
	_, err := build(t.app(), dagger.LowcodePipelineBuildOpts{}).Publish("registry.example.com/team/{kind}", []string{"bad tag"}).Summary(ctx)
	if err := fails("a bad tag", err, `--tag: "bad tag" is not a valid tag`); err != nil {
		return err
	}
	_, err = build(t.app(), dagger.LowcodePipelineBuildOpts{}).Publish("registry.example.com/team/app", []string{"1"}).Summary(ctx)
	if err := fails("no {kind}", err, "put {kind} where frontend, backend and codeasdata go"); err != nil {
		return err
	}
	// the name parses, but as a path: its first part is no registry host
	_, err = build(t.app(), dagger.LowcodePipelineBuildOpts{}).Publish("r_1.example.com/team/{kind}", []string{"1"}).Summary(ctx)
	return fails("no registry host", err, `"r_1.example.com" is not a registry host`)
}

// The source URL the published images are labelled with: its credentials must not reach the label.
const labelledSourceURL = "https://ci:label-secret-0815@git.example.com/team/app.git"

// build publish pushes the three images under every tag to a registry; pulled back by digest they carry their labels.
// +check
func (t *Tests) PublishPushesImagesPinnedByDigest(ctx context.Context) error {
	reg, err := registry(ctx, "PublishPushesImagesPinnedByDigest")
	if err != nil {
		return err
	}
	defer reg.Stop(ctx)
	rel := build(t.app(), dagger.LowcodePipelineBuildOpts{CodeAsData: dagger.LowcodePipelineCodeAsDataKindProject}).
		Publish(checkRegistry+"/checks/{kind}", []string{"1.0.0", "latest"}, dagger.LowcodePipelineBuildPublishOpts{
			RegistryService: reg,
			Label: []string{"org.opencontainers.image.version=9.9.9", "org.opencontainers.image.revision=0123abc",
				"org.opencontainers.image.source=" + labelledSourceURL},
		})
	rel, err = pinRelease(ctx, rel)
	if err != nil {
		return err
	}
	groups := map[string]func(context.Context) ([]dagger.LowcodePipelinePushedImage, error){
		"frontend": rel.Frontend, "backend": rel.Backend, "codeasdata": rel.CodeAsData,
	}
	for kind, list := range groups {
		refs, err := pinned(ctx, kind, list)
		if err != nil {
			return err
		}
		pulled := dag.Container().From(refs[0], dagger.ContainerFromOpts{RegistryService: reg})
		if err := checkLabels(ctx, kind, pulled); err != nil {
			return err
		}
		if kind == "frontend" {
			if err := fetchesSite(ctx, pulled); err != nil {
				return err
			}
		}
	}
	summary, err := rel.Summary(ctx)
	if err != nil {
		return err
	}
	if strings.Count(summary, "@sha256:") != 6 || strings.Contains(summary, "label-secret") {
		return fmt.Errorf("the release's summary %q does not list the six pinned references", summary)
	}
	return nil
}

// pinned reads one image's references: one per tag, all of one digest, each naming it, each
// pushed (a registry service is always pushed to).
func pinned(ctx context.Context, kind string, list func(context.Context) ([]dagger.LowcodePipelinePushedImage, error)) ([]string, error) {
	images, err := list(ctx)
	if err != nil {
		return nil, err
	}
	if len(images) != 2 {
		return nil, fmt.Errorf("%s: %d references, want one per tag (2)", kind, len(images))
	}
	var refs []string
	var first string
	for i, img := range images {
		ref, err := img.Ref(ctx)
		if err != nil {
			return nil, err
		}
		repo, _ := img.Repository(ctx)
		tag, _ := img.Tag(ctx)
		digest, _ := img.Digest(ctx)
		if outcome, _ := img.Outcome(ctx); outcome != "pushed" {
			return nil, fmt.Errorf("%s: reference %q says %q, want pushed: a registry service is always pushed to", kind, ref, outcome)
		}
		if i == 0 {
			first = digest
		}
		want := checkRegistry + "/checks/" + kind
		if repo != want || tag != []string{"1.0.0", "latest"}[i] || !strings.HasPrefix(digest, "sha256:") || ref != repo+":"+tag+"@"+digest || digest != first {
			return nil, fmt.Errorf("%s: reference %q is not %s:<tag>@<the image's digest>", kind, ref, want)
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

func checkLabels(ctx context.Context, kind string, pulled *dagger.Container) error {
	for name, want := range map[string]string{
		"draw_version":                      "2.14.0",
		"org.opencontainers.image.version":  "9.9.9",
		"org.opencontainers.image.revision": "0123abc",
		"org.opencontainers.image.source":   "https://git.example.com/team/app.git",
	} {
		got, err := pulled.Label(ctx, name)
		if err != nil {
			return fmt.Errorf("%s pulled back by digest: %w", kind, err)
		}
		if got != want {
			return fmt.Errorf("%s pulled back by digest: label %s is %q, want %q", kind, name, got, want)
		}
	}
	return nil
}

// A project's Dockerfile copies its own files beside its build output (a web server's configuration), as docker build in the project would, its .dockerignore applied.
// +check
func (t *Tests) FrontendImageTakesTheProjectsOwnFiles(ctx context.Context) error {
	const conf = "server { listen 80; location / { root /usr/share/nginx/html; } }\n"
	// the example's .dockerignore keeps only the build outputs in the context,
	// as docker build reads it: a project that copies its own files lets them in
	ignore, err := t.app().File(".dockerignore").Contents(ctx)
	if err != nil {
		return err
	}
	source := t.app().
		WithNewFile(".dockerignore", ignore+"!docker/nginx.conf\n").
		WithNewFile("docker/nginx.conf", conf).
		WithNewFile("docker/frontend.Dockerfile", "ARG FRONTEND_BASE_IMAGE=nginx:stable\nFROM ${FRONTEND_BASE_IMAGE}\nARG SOURCES_PATH\n"+
			"COPY ${SOURCES_PATH}/ /usr/share/nginx/html/\nCOPY docker/nginx.conf /etc/nginx/conf.d/default.conf\n")
	img := build(source, dagger.LowcodePipelineBuildOpts{}).FrontendImage()
	got, err := img.File("/etc/nginx/conf.d/default.conf").Contents(ctx)
	if err != nil {
		return err
	}
	if got != conf {
		return fmt.Errorf("the image's nginx configuration is %q, want the project's docker/nginx.conf", got)
	}
	return fetchesSite(ctx, img)
}

// The frontend image keeps an unprivileged base image's own user (101) and puts the files in a custom DOCUMENT_ROOT, owned by the web user with group root.
// +check
func (t *Tests) FrontendImageKeepsItsBaseUser(ctx context.Context) error {
	img := build(t.app(), dagger.LowcodePipelineBuildOpts{BuildArg: []string{
		"FRONTEND_BASE_IMAGE=nginxinc/nginx-unprivileged:stable", "DOCUMENT_ROOT=/srv/site",
	}}).FrontendImage()
	user, err := img.User(ctx)
	if err != nil {
		return err
	}
	out, err := img.WithExec([]string{"sh", "-c", "id -u; stat -c '%U:%G %A' /srv/site/index.html"}).Stdout(ctx)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if user != "101" || len(lines) != 2 || lines[0] != "101" || !strings.HasPrefix(lines[1], "nginx:root -rw-r--r--") {
		return fmt.Errorf("user %q, runs as and files %q; want 101, and files nginx:root readable by all", user, lines)
	}
	return nil
}

// The same sources built twice give the same digests, even when the second build shares no build layer with the first: no clock in an image; the base image's layers keep their content.
//
// The second source has one more file that no build reads, so the engine
// runs the builds again (new file times, a new build clock), as a fresh CI
// runner with an empty cache does. --created is a year before node:24-slim's
// current build, so its layers hold later times: they must still be the
// published image's first layers, their content unchanged (engine-facts.md,
// fact 15; their blobs re-encoded, fact 41).
// +check
func (t *Tests) PublishIsReproducible(ctx context.Context) error {
	reg, err := registry(ctx, "PublishIsReproducible")
	if err != nil {
		return err
	}
	defer reg.Stop(ctx)
	rebuilt := t.app().WithNewFile("REBUILD.txt", time.Now().UTC().Format(time.RFC3339Nano))
	digests := func(source *dagger.Directory, tag string) ([2]string, error) {
		rel := build(source, dagger.LowcodePipelineBuildOpts{}).Publish(checkRegistry+"/twice/{kind}", []string{tag},
			dagger.LowcodePipelineBuildPublishOpts{RegistryService: reg, Created: "1764151389"})
		var out [2]string
		rel, err := pinRelease(ctx, rel)
		if err != nil {
			return out, err
		}
		for i, list := range []func(context.Context) ([]dagger.LowcodePipelinePushedImage, error){rel.Frontend, rel.Backend} {
			images, err := list(ctx)
			if err != nil {
				return out, err
			}
			if len(images) != 1 {
				return out, fmt.Errorf("%d references, want 1", len(images))
			}
			if out[i], err = images[0].Digest(ctx); err != nil {
				return out, err
			}
		}
		return out, nil
	}
	a, err := digests(t.app(), "first")
	if err != nil {
		return err
	}
	b, err := digests(rebuilt, "second")
	if err != nil {
		return err
	}
	if a != b {
		return fmt.Errorf("two builds of the same sources gave different digests: %v and %v", a, b)
	}
	created, err := dag.Container().From(checkRegistry+"/twice/frontend:first", dagger.ContainerFromOpts{RegistryService: reg}).
		Label(ctx, "org.opencontainers.image.created")
	if err != nil {
		return err
	}
	if created != "2025-11-26T10:03:09Z" {
		return fmt.Errorf("org.opencontainers.image.created is %q, want --created's 2025-11-26T10:03:09Z", created)
	}
	base, err := diffIDs(ctx, dag.Container().From("node:24-slim"))
	if err != nil {
		return err
	}
	published, err := diffIDs(ctx, dag.Container().From(checkRegistry+"/twice/backend:first", dagger.ContainerFromOpts{RegistryService: reg}))
	if err != nil {
		return err
	}
	if len(published) <= len(base) || !slices.Equal(published[:len(base)], base) {
		return fmt.Errorf("the backend's layers %v do not start with node:24-slim's %v, unchanged", published, base)
	}
	return nil
}

// diffIDs are the image's layers, as its config lists them.
func diffIDs(ctx context.Context, image *dagger.Container) ([]string, error) {
	layout := dag.Container().From("alpine:3.22").
		WithMountedFile("/image.tar", image.AsTarball()).
		WithExec([]string{"sh", "-c", "mkdir /out && tar -xf /image.tar -C /out"}).
		Directory("/out")
	blob := func(digest string, into any) error {
		algo, hex, _ := strings.Cut(digest, ":")
		data, err := layout.File("blobs/" + algo + "/" + hex).Contents(ctx)
		if err != nil {
			return err
		}
		return json.Unmarshal([]byte(data), into)
	}
	index, err := layout.File("index.json").Contents(ctx)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Manifests []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"manifests"`
		Config struct {
			Digest string `json:"digest"`
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal([]byte(index), &doc); err != nil {
		return nil, err
	}
	// index → (index →) manifest → config
	for len(doc.Manifests) > 0 {
		next := doc.Manifests[0].Digest
		doc.Manifests = nil
		if err := blob(next, &doc); err != nil {
			return nil, err
		}
	}
	if err := blob(doc.Config.Digest, &doc); err != nil {
		return nil, err
	}
	return doc.RootFS.DiffIDs, nil
}

// The cosign the supply-chain check verifies with: the binary of the
// published image the module signs with by default, or the same version
// built from its Go module, as the module's --tools-from-source builds it.
const (
	cosignImage   = "gcr.io/projectsigstore/cosign:v2.6.5@sha256:ad281047f85c5e1fc6ffbc30c2b55be3b07b4032bef715a12122ce5829619aca"
	cosignPackage = "github.com/sigstore/cosign/v2/cmd/cosign@v2.6.5"
)

// cosign is a container with the cosign binary bin on its path.
func cosign(bin *dagger.File) *dagger.Container {
	return dag.Container().From("alpine:3.22").
		WithExec([]string{"apk", "add", "--no-cache", "socat"}).
		WithFile("/usr/local/bin/cosign", bin)
}

// cosignBinary is cosign from its published image, or, on an engine that
// cannot pull that image by its digest (no stand-in can have it, and an
// air-gapped engine's registry may hold no copy), built from its Go module
// at the same version: fromSource says which, and the check then signs with
// --tools-from-source.
func cosignBinary(ctx context.Context) (bin *dagger.File, fromSource bool, err error) {
	published := dag.Container().From(cosignImage).File("/ko-app/cosign")
	_, err = published.Sync(ctx)
	switch {
	case err == nil:
		return published, false, nil
	case !cannotPull(err):
		return nil, false, err
	}
	built := dag.Container().From("golang:1.26-alpine").
		WithEnvVariable("CGO_ENABLED", "0").
		WithEnvVariable("GOBIN", "/out").
		WithExec([]string{"go", "install", "-trimpath", cosignPackage}).
		File("/out/cosign")
	return built, true, nil
}

// cannotPull says whether err is the engine's failure to pull an image
// pinned by digest.
func cannotPull(err error) bool {
	return strings.Contains(err.Error(), "failed to resolve image") && strings.Contains(err.Error(), "@sha256:")
}

// A call the module stops waiting for at its deadline stops the engine's work with it: an exec's command, and a Dockerfile's RUN step, end when the call does. The module bounds an image's build so (steplimit.Wait, 1 h 15 min with its FROM's pull).
//
// Each command calls a service when it begins, and would call it again 20 s
// later; that second call must never come. An engine stops only a command
// that has begun: a deadline that comes while the engine still prepares it
// (installing its custom CA certificates, engine-facts 55) lets the command
// run to its end. So a command that had not begun by its deadline proves
// nothing, and the check tries again with a deadline twice as long.
// +check
func (t *Tests) CallDeadlineStopsTheEnginesWork(ctx context.Context) error {
	run := time.Now().UTC().Format(time.RFC3339Nano)
	base := dag.Container().From("alpine:3.22")
	if _, err := base.Sync(ctx); err != nil {
		return err
	}
	// each GET /cgi-bin/hit?NAME is kept as "NAME <unix seconds>" in a cache volume
	const hit = "#!/bin/sh\necho \"$QUERY_STRING $(date +%s)\" >> /c/hits\nprintf 'Content-Type: text/plain\\r\\n\\r\\nok\\n'\n"
	vol := base.WithMountedCache("/c", dag.CacheVolume("lowcode-pipeline-tests-deadline-"+run)).WithEnvVariable("RUN", run)
	svc, err := vol.
		WithNewFile("/w/cgi-bin/hit", hit, dagger.ContainerWithNewFileOpts{Permissions: 0o755}).
		WithExposedPort(8080).
		AsService(dagger.ContainerAsServiceOpts{Args: []string{"busybox", "httpd", "-f", "-p", "8080", "-h", "/w"}}).
		Start(ctx)
	if err != nil {
		return err
	}
	defer svc.Stop(ctx)
	host, err := svc.Hostname(ctx)
	if err != nil {
		return err
	}
	call := func(name string) string {
		return fmt.Sprintf("wget -q -O /dev/null 'http://%s:8080/cgi-bin/hit?%s'", host, name)
	}
	// a Dockerfile's RUN has no binding: both reach the service by its own hostname
	client := vol.WithServiceBinding("hits", svc)
	if _, err := client.WithExec([]string{"sh", "-c", call("control")}).Sync(ctx); err != nil {
		return err
	}
	exec := func(ctx context.Context, script string) error {
		_, err := client.WithExec([]string{"sh", "-c", script}).Sync(ctx)
		return err
	}
	dockerfileRun := func(ctx context.Context, script string) error {
		_, err := dag.Directory().WithNewFile("Dockerfile", "FROM alpine:3.22\nRUN "+script+"\n").DockerBuild().Sync(ctx)
		return err
	}
	return errors.Join(
		deadlineStops(ctx, "exec", "an exec's command", exec, call, client),
		deadlineStops(ctx, "run", "a Dockerfile's RUN step", dockerfileRun, call, client),
	)
}

// deadlineStops runs a command through run under a deadline, and says
// whether it went on after the call had returned: the command calls the
// hit service (call) when it begins and 20 s later, under names made from
// key, and client reads the hits. A command that had not begun by the
// deadline is tried again with a longer one, up to 40 s.
func deadlineStops(ctx context.Context, key, what string, run func(context.Context, string) error, call func(string) string, client *dagger.Container) error {
	const slack, later = 30 * time.Second, 20 * time.Second
	for try, deadline := 1, 5*time.Second; ; try, deadline = try+1, 2*deadline {
		begun, late := fmt.Sprintf("%s-%d-begun", key, try), fmt.Sprintf("%s-%d-late", key, try)
		script := fmt.Sprintf("%s; sleep %d; %s", call(begun), int(later.Seconds()), call(late))
		start := time.Now()
		dctx, cancel := context.WithTimeout(ctx, deadline)
		err := run(dctx, script)
		cancel()
		switch took := time.Since(start); {
		case err == nil:
			return fmt.Errorf("%s ended before its call's deadline", what)
		case took > deadline+slack:
			return fmt.Errorf("%s: the call returned %s after its %s deadline", what, (took - deadline).Round(time.Second), deadline)
		}
		// a command begun before the deadline has made its late call by now
		time.Sleep(time.Until(start.Add(deadline + later + 5*time.Second)))
		held, err := client.WithEnvVariable("AT", time.Now().String()).WithExec([]string{"cat", "/c/hits"}).Stdout(ctx)
		if err != nil {
			return err
		}
		hits := map[string]int64{}
		for _, line := range strings.Split(strings.TrimSpace(held), "\n") {
			name, at, _ := strings.Cut(line, " ")
			hits[name], _ = strconv.ParseInt(at, 10, 64)
		}
		// the service's clock is this one's, in seconds: a second is left for the rounding
		began, ok := hits[begun]
		beforeDeadline := ok && time.Unix(began+1, 0).Before(start.Add(deadline))
		_, control := hits["control"]
		_, wentOn := hits[late]
		switch {
		case !control:
			return fmt.Errorf("the hit service holds %q, not the control call: the probe sees nothing", held)
		case beforeDeadline && wentOn:
			return fmt.Errorf("%s went on after its call's deadline (%s): it called again %s after it began", what, deadline, later)
		case beforeDeadline:
			return nil
		case try == 4:
			return fmt.Errorf("%s had not begun by its call's deadline in %d tries, the last %s: nothing to judge", what, try, deadline)
		}
	}
}

// With sign --attest-sbom, cosign verify and verify-attestation succeed against the pushed digest, and the backend's SBOM lists its npm package.
//
// The tools are the module's default images; an engine that cannot pull
// cosign's by its digest signs with --tools-from-source instead (its
// progress shows a span saying so), and verifies with cosign built the same
// way.
// +check
func (t *Tests) PublishSignsAndDescribesImages(ctx context.Context) (err error) {
	bin, fromSource, err := cosignBinary(ctx)
	if err != nil {
		return err
	}
	if fromSource {
		var span trace.Span
		ctx, span = Tracer().Start(ctx, "cosign's image cannot be pulled by its digest here: signing with --tools-from-source")
		defer telemetry.EndWithCause(span, &err)
	}
	reg, err := registry(ctx, "PublishSignsAndDescribesImages")
	if err != nil {
		return err
	}
	defer reg.Stop(ctx)
	password := dag.SetSecret("cosign-password", "engine-check-cosign-pw")
	keys := cosign(bin).
		WithWorkdir("/keys").
		WithSecretVariable("COSIGN_PASSWORD", password).
		WithExec([]string{"cosign", "generate-key-pair"}).
		Directory("/keys")
	key, err := keys.File("cosign.key").Contents(ctx)
	if err != nil {
		return err
	}
	rel := build(t.app(), dagger.LowcodePipelineBuildOpts{}).
		Publish(checkRegistry+"/signed/{kind}", []string{"1.0.0"}, dagger.LowcodePipelineBuildPublishOpts{RegistryService: reg}).
		Sign(dag.SetSecret("cosign-key", key), dagger.LowcodePipelineReleaseSignOpts{CosignPassword: password, AttestSbom: true, ToolsFromSource: fromSource})
	rel, err = pinRelease(ctx, rel)
	if err != nil {
		return err
	}
	signed, err := rel.Signed(ctx)
	if err != nil {
		return err
	}
	backend, err := rel.Backend(ctx)
	if err != nil {
		return err
	}
	sbom, err := rel.Sboms(dagger.LowcodePipelineReleaseSbomsOpts{ToolsFromSource: fromSource}).File("backend.spdx.json").Contents(ctx)
	if err != nil {
		return err
	}
	if !signed || len(backend) != 1 || !strings.Contains(sbom, "lowcode-example-backend") || !strings.Contains(sbom, "SPDX") {
		return fmt.Errorf("signed %v, %d backend references, SBOM %.300q", signed, len(backend), sbom)
	}
	repo, _ := backend[0].Repository(ctx)
	digest, _ := backend[0].Digest(ctx)
	ref := repo + "@" + digest
	_, err = cosign(bin).
		WithServiceBinding("registry", reg).
		WithFile("/cosign.pub", keys.File("cosign.pub")).
		WithExec([]string{"sh", "-c", `socat TCP-LISTEN:5000,fork,reuseaddr TCP:registry:5000 & sleep 1; ` +
			`cosign verify --key /cosign.pub --insecure-ignore-tlog=true "$0" && ` +
			`cosign verify-attestation --key /cosign.pub --type spdxjson --insecure-ignore-tlog=true "$0"`, ref}).
		Sync(ctx)
	if err != nil {
		return fmt.Errorf("cosign verify %s: %w", ref, err)
	}
	return nil
}

// A publish pushes an image only when no tag holds it: run again it leaves every tag unchanged, and a new tag is pointed at the image the registry holds, with no push; deliver does the same.
//
// The registry is a service reached by its IP, without --registry-service,
// as a registry outside the engine is: Dagger's service network is private
// (RFC 1918), where go-containerregistry speaks plain http, so the push's
// container reads the tags, tags and pushes straight to it (engine-facts.md,
// facts 22, 24).
// +check
func (t *Tests) PublishSparesWhatTheRegistryHolds(ctx context.Context) error {
	reg, repository, err := registryByIP(ctx, "PublishSparesWhatTheRegistryHolds")
	if err != nil {
		return err
	}
	defer reg.Stop(ctx)
	repository += "/spare/{kind}"
	check := sameDigests(ctx)
	if err := publishesSpare(ctx, build(t.app(), dagger.LowcodePipelineBuildOpts{}), repository, check, dagger.LowcodePipelineBuildPublishOpts{}); err != nil {
		return err
	}
	rcv, err := startReceiver(ctx, "/acme/spare")
	if err != nil {
		return err
	}
	defer rcv.svc.Stop(ctx)
	d, err := pinDelivery(ctx, dag.LowcodePipeline().Deliver(repository, []string{"1.2.0", "latest"}, rcv.url, rcv.token,
		dagger.LowcodePipelineDeliverOpts{Source: t.app(), Toolkit: toolkit, DrawPackage: drawPackage, AllowHTTP: true}))
	if err != nil {
		return fmt.Errorf("deliver [1.2.0 latest]: %w", err)
	}
	if err := check([]string{"deliver", "1.2.0", "latest"}, d.Release(), "tagged", "unchanged"); err != nil {
		return err
	}
	return oneDelivery(ctx, rcv, d.Payload())
}

// publishesSpare publishes b three times, and checks how each run left
// each tag: all pushed, then unchanged, then one new tag pointed at the
// image the registry holds.
func publishesSpare(ctx context.Context, b *dagger.LowcodePipelineBuild, repository string,
	check func([]string, *dagger.LowcodePipelineRelease, ...string) error, opts dagger.LowcodePipelineBuildPublishOpts) error {
	for _, run := range []struct {
		tags     []string
		outcomes []string
	}{
		{[]string{"1.0.0", "latest"}, []string{"pushed", "pushed"}},
		// the same tags again: in this one session a request runs once, so
		// the second run names them in another order
		{[]string{"latest", "1.0.0"}, []string{"unchanged", "unchanged"}},
		{[]string{"1.1.0", "latest"}, []string{"tagged", "unchanged"}},
	} {
		rel, err := pinRelease(ctx, b.Publish(repository, run.tags, opts))
		if err != nil {
			return fmt.Errorf("publish %v: %w", run.tags, err)
		}
		if err := check(append([]string{"publish"}, run.tags...), rel, run.outcomes...); err != nil {
			return err
		}
	}
	return nil
}

// A publish to a registry service (--registry-service), which only the push's container reaches, leaves a tag that holds the image unchanged and points a new one at it, as with a registry reached by its address.
// +check
func (t *Tests) PublishToRegistryServiceSparesWhatItHolds(ctx context.Context) error {
	reg, err := registry(ctx, "PublishToRegistryServiceSparesWhatItHolds")
	if err != nil {
		return err
	}
	defer reg.Stop(ctx)
	return publishesSpare(ctx, build(t.app(), dagger.LowcodePipelineBuildOpts{}), checkRegistry+"/spare-service/{kind}", sameDigests(ctx),
		dagger.LowcodePipelineBuildPublishOpts{RegistryService: reg})
}

// sameDigests is a check of each run's release: the outcome of each of the
// frontend's tags then each of the backend's, each tag the same outcome, and
// the digests the first run's.
func sameDigests(ctx context.Context) func(run []string, rel *dagger.LowcodePipelineRelease, outcomes ...string) error {
	var digests []string
	return func(run []string, rel *dagger.LowcodePipelineRelease, outcomes ...string) error {
		var got, at []string
		for _, list := range []func(context.Context) ([]dagger.LowcodePipelinePushedImage, error){rel.Frontend, rel.Backend} {
			images, err := list(ctx)
			if err != nil {
				return err
			}
			for _, img := range images {
				outcome, _ := img.Outcome(ctx)
				digest, _ := img.Digest(ctx)
				got, at = append(got, outcome), append(at, digest)
			}
		}
		if want := append(slices.Clone(outcomes), outcomes...); !slices.Equal(got, want) {
			return fmt.Errorf("%v: outcomes %v, want %v (frontend's tags, then the backend's)", run, got, want)
		}
		if digests == nil {
			digests = at
		} else if !slices.Equal(at, digests) {
			return fmt.Errorf("%v: digests %v, want the first run's %v", run, at, digests)
		}
		return nil
	}
}

// registryByIP starts the check's registry and gives its address by its IP
// (byIP), as a registry outside the engine is named.
func registryByIP(ctx context.Context, check string) (*dagger.Service, string, error) {
	reg, err := registry(ctx, check)
	if err != nil {
		return nil, "", err
	}
	host, err := byIP(ctx, reg, 5000)
	if err != nil {
		reg.Stop(ctx)
		return nil, "", err
	}
	return reg, host, nil
}

// byIP is host:port of a service by its IP address on the engine's private
// network (engine-facts.md, fact 24), as a registry outside the engine is
// named: no service binding, no name only the session resolves.
func byIP(ctx context.Context, svc *dagger.Service, port int) (string, error) {
	endpoint, err := svc.Endpoint(ctx, dagger.ServiceEndpointOpts{Port: port})
	if err != nil {
		return "", err
	}
	host, p, err := net.SplitHostPort(endpoint)
	if err != nil {
		return "", err
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip4", host)
	if err != nil || len(ips) == 0 || !ips[0].IsPrivate() {
		return "", fmt.Errorf("setup: the service %s has no private IPv4 address (%v, %v): this check needs Dagger's default service network", host, ips, err)
	}
	return net.JoinHostPort(ips[0].String(), p), nil
}
