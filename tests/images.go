package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"dagger/tests/internal/dagger"
)

var qFrontendImage = gql("frontend-image", `query($source: ID!) { lowcodePipeline(`+exampleArgs+`) { build { frontendImage {
	id
	label(name: "draw_version")
	withExec(args: ["sh", "-c", "stat -c '%U:%G %A' /usr/share/nginx/html/index.html"]) { stdout } } } } }`)

// The frontend image serves dist/web over HTTP from the document root, owned by the web user with group root, labelled draw_version.
// +check
func (t *Tests) FrontendImageServesTheSite(ctx context.Context) error {
	vars, err := t.example(ctx)
	if err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct {
			Build struct {
				FrontendImage struct {
					ID       string
					Label    string
					WithExec struct{ Stdout string }
				}
			}
		}
	}
	if err := t.run(ctx, qFrontendImage, vars, &out); err != nil {
		return err
	}
	img := out.LowcodePipeline.Build.FrontendImage
	if img.Label != "2.14.0" {
		return fmt.Errorf("draw_version label %q, want 2.14.0", img.Label)
	}
	if got := strings.TrimSpace(img.WithExec.Stdout); !strings.HasPrefix(got, "nginx:root -rw-r") {
		return fmt.Errorf("index.html is %q, want owned by nginx:root and group-readable", got)
	}
	return fetchesSite(ctx, dag.LoadContainerFromID(dagger.ContainerID(img.ID)))
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

var qBackendAndCodeAsData = gql("backend-and-code-as-data", `query($source: ID!) { lowcodePipeline(`+exampleArgs+`) { build(codeAsData: true) {
	backendImage { user }
	codeAsDataImage { file(path: "/codeasdata/config/project.json") { contents } } } } }`)

// The backend image runs dist/node as a non-root user, and the code-as-data image holds dist/codeAsData at /codeasdata.
// +check
func (t *Tests) BackendAndCodeAsDataImages(ctx context.Context) error {
	vars, err := t.example(ctx)
	if err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct {
			Build struct {
				BackendImage    struct{ User string }
				CodeAsDataImage struct {
					File struct{ Contents string }
				}
			}
		}
	}
	if err := t.run(ctx, qBackendAndCodeAsData, vars, &out); err != nil {
		return err
	}
	b := out.LowcodePipeline.Build
	if u := b.BackendImage.User; u == "" || u == "root" || u == "0" {
		return fmt.Errorf("backend image user %q, want non-root", u)
	}
	if !strings.Contains(b.CodeAsDataImage.File.Contents, `"kind": "project"`) {
		return fmt.Errorf("unexpected code-as-data config: %s", b.CodeAsDataImage.File.Contents)
	}
	return nil
}

var qBadTag = gql("bad-tag", `query($source: ID!) { lowcodePipeline(`+exampleArgs+`) { build {
	publish(registry: "registry.example.com", frontendRepository: "team/front", backendRepository: "team/api", tag: ["bad tag"]) {
		frontend { ref } } } } }`)

// publish refuses an invalid tag before pushing anything.
// +check
func (t *Tests) PublishRefusesInvalidTag(ctx context.Context) error {
	vars, err := t.example(ctx)
	if err != nil {
		return err
	}
	return t.fails(ctx, qBadTag, vars, `--tag: "bad tag" is not a valid tag`)
}

// The registry the checks publish to: registry:3 as a service, reached as
// localhost:5000 (the engine routes the host to the service, and speaks plain
// http only to localhost).
const checkRegistry = "localhost:5000"

// exampleWithRegistry is the variables of a query over examples/app that
// publishes: registry:3 started as a service, named $registry. Each check
// names its own: the engine shares identical services between concurrent
// checks, so one check's Stop would stop another's registry under its push,
// and a restarted registry is empty (engine-facts.md). The name makes the
// definition, so the instance, the check's own.
func (t *Tests) exampleWithRegistry(ctx context.Context, check string) (map[string]any, *dagger.Service, error) {
	vars, err := t.example(ctx)
	if err != nil {
		return nil, nil, err
	}
	registry, err := dag.Container().From("registry:3").
		WithEnvVariable("LOWCODE_PIPELINE_CHECK", check).
		WithExposedPort(5000).
		AsService(dagger.ContainerAsServiceOpts{UseEntrypoint: true}).
		Start(ctx)
	if err != nil {
		return nil, nil, err
	}
	if vars["registry"], err = registry.ID(ctx); err != nil {
		registry.Stop(ctx)
		return nil, nil, err
	}
	return vars, registry, nil
}

// The source URL the published images are labelled with: its credentials must not reach the label.
const labelledSourceURL = "https://ci:label-secret-0815@git.example.com/team/app.git"

// reference is the module's Reference as a check reads it.
type reference struct{ Ref, Repository, Tag, Digest string }

// release is the module's Release as a check reads it.
type release struct{ Frontend, Backend, CodeAsData []reference }

const releaseFields = `frontend { ref repository tag digest } backend { ref repository tag digest } codeAsData { ref repository tag digest }`

var qPublish = gql("publish", `query($source: ID!, $registry: ID!) { lowcodePipeline(`+exampleArgs+`,
	imageVersion: "9.9.9", vcsRevision: "0123abc", vcsUrl: "`+labelledSourceURL+`") { build(codeAsData: true) {
	publish(registry: "`+checkRegistry+`", frontendRepository: "checks/frontend", backendRepository: "checks/backend",
		codeAsDataRepository: "checks/codeasdata", tag: ["1.0.0", "latest"], registryService: $registry) { `+releaseFields+` } } } }`)

// build publish pushes the three images under every tag to a registry; pulled back by digest they carry their labels.
// +check
func (t *Tests) PublishPushesImagesPinnedByDigest(ctx context.Context) error {
	vars, registry, err := t.exampleWithRegistry(ctx, "PublishPushesImagesPinnedByDigest")
	if err != nil {
		return err
	}
	defer registry.Stop(ctx)
	var out struct {
		LowcodePipeline struct {
			Build struct{ Publish release }
		}
	}
	if err := t.run(ctx, qPublish, vars, &out); err != nil {
		return err
	}
	rel := out.LowcodePipeline.Build.Publish
	for kind, refs := range map[string][]reference{"frontend": rel.Frontend, "backend": rel.Backend, "codeasdata": rel.CodeAsData} {
		if err := checkPinned(kind, refs); err != nil {
			return err
		}
		pulled := dag.Container().From(refs[0].Ref, dagger.ContainerFromOpts{RegistryService: registry})
		if err := checkLabels(ctx, kind, pulled); err != nil {
			return err
		}
		if kind == "frontend" {
			if err := fetchesSite(ctx, pulled); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPinned: one reference per tag, all of one digest, each naming it.
func checkPinned(kind string, refs []reference) error {
	if len(refs) != 2 {
		return fmt.Errorf("%s: %d references, want one per tag (2): %+v", kind, len(refs), refs)
	}
	for i, r := range refs {
		want := fmt.Sprintf("%s/checks/%s", checkRegistry, kind)
		if r.Repository != want || r.Tag != []string{"1.0.0", "latest"}[i] || !strings.HasPrefix(r.Digest, "sha256:") ||
			r.Ref != r.Repository+":"+r.Tag+"@"+r.Digest || r.Digest != refs[0].Digest {
			return fmt.Errorf("%s: reference %+v is not %s:<tag>@<the image's digest>", kind, r, want)
		}
	}
	return nil
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

var qUnprivilegedFrontend = gql("unprivileged-frontend", `query($source: ID!) { lowcodePipeline(`+exampleArgs+`,
	frontendBaseImage: "nginxinc/nginx-unprivileged:stable", documentRoot: "/srv/site") { build { frontendImage {
	user
	withExec(args: ["sh", "-c", "id -u; stat -c '%U:%G %A' /srv/site/index.html"]) { stdout } } } } }`)

// The frontend image keeps an unprivileged base image's own user (101) and puts the files in a custom --document-root, owned by the web user with group root.
// +check
func (t *Tests) FrontendImageKeepsItsBaseUser(ctx context.Context) error {
	vars, err := t.example(ctx)
	if err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct {
			Build struct {
				FrontendImage struct {
					User     string
					WithExec struct{ Stdout string }
				}
			}
		}
	}
	if err := t.run(ctx, qUnprivilegedFrontend, vars, &out); err != nil {
		return err
	}
	img := out.LowcodePipeline.Build.FrontendImage
	lines := strings.Split(strings.TrimSpace(img.WithExec.Stdout), "\n")
	if img.User != "101" || len(lines) != 2 || lines[0] != "101" || !strings.HasPrefix(lines[1], "nginx:root -rw-r--r--") {
		return fmt.Errorf("user %q, runs as and files %q; want 101, and files nginx:root readable by all", img.User, lines)
	}
	return nil
}

var qPublishTwice = gql("publish-twice", `query($source: ID!, $rebuilt: ID!, $registry: ID!) {
	first: lowcodePipeline(`+exampleArgs+`, created: "1764151389") { build {
		publish(registry: "`+checkRegistry+`", frontendRepository: "twice/frontend", backendRepository: "twice/backend",
		tag: ["first"], registryService: $registry) { frontend { digest } backend { digest } } } }
	second: lowcodePipeline(source: $rebuilt, platformCli: "platform-cli-standin", drawPackage: "draw-standin", created: "1764151389") { build {
		publish(registry: "`+checkRegistry+`", frontendRepository: "twice/frontend", backendRepository: "twice/backend",
		tag: ["second"], registryService: $registry) { frontend { digest } backend { digest } } } } }`)

// The same sources built twice give the same digests, even when the second build shares no layer with the first: no clock in an image.
//
// The second source has one more file that no build reads, so the engine
// runs the builds again (new file times, a new build clock), as a fresh CI
// runner with an empty cache does.
// +check
func (t *Tests) PublishIsReproducible(ctx context.Context) error {
	vars, registry, err := t.exampleWithRegistry(ctx, "PublishIsReproducible")
	if err != nil {
		return err
	}
	defer registry.Stop(ctx)
	rebuilt := t.Repo.Directory("examples/app").WithNewFile("REBUILD.txt", time.Now().UTC().Format(time.RFC3339Nano))
	if vars["rebuilt"], err = rebuilt.ID(ctx); err != nil {
		return err
	}
	type digests struct {
		Build struct {
			Publish struct{ Frontend, Backend []struct{ Digest string } }
		}
	}
	var out struct{ First, Second digests }
	if err := t.run(ctx, qPublishTwice, vars, &out); err != nil {
		return err
	}
	a, b := out.First.Build.Publish, out.Second.Build.Publish
	if len(a.Frontend) != 1 || len(b.Frontend) != 1 || a.Frontend[0].Digest != b.Frontend[0].Digest || a.Backend[0].Digest != b.Backend[0].Digest {
		return fmt.Errorf("two builds of the same sources gave different digests: %+v and %+v", a, b)
	}
	return nil
}

// The cosign the supply-chain check verifies with, built as the module builds it.
const cosignPackage = "github.com/sigstore/cosign/v2/cmd/cosign@v2.6.5"

func cosign() *dagger.Container {
	bin := dag.Container().From("golang:1.26-alpine").
		WithEnvVariable("CGO_ENABLED", "0").
		WithEnvVariable("GOBIN", "/out").
		WithExec([]string{"go", "install", "-trimpath", cosignPackage}).
		File("/out/cosign")
	return dag.Container().From("alpine:3.22").
		WithExec([]string{"apk", "add", "--no-cache", "socat"}).
		WithFile("/usr/local/bin/cosign", bin)
}

var qSupplyChain = gql("supply-chain", `query($source: ID!, $registry: ID!, $key: ID!, $password: ID!) { lowcodePipeline(`+exampleArgs+`) { build {
	publish(registry: "`+checkRegistry+`", frontendRepository: "signed/frontend", backendRepository: "signed/backend", tag: ["1.0.0"],
		registryService: $registry, sbom: true, cosignKey: $key, cosignPassword: $password) {
		signed backend { repository digest } sboms { file(path: "backend.spdx.json") { contents } } } } } }`)

// With --sbom and --cosign-key, cosign verify succeeds against the pushed digest, and the backend's SBOM lists its npm package.
// +check
func (t *Tests) PublishSignsAndDescribesImages(ctx context.Context) error {
	vars, registry, err := t.exampleWithRegistry(ctx, "PublishSignsAndDescribesImages")
	if err != nil {
		return err
	}
	defer registry.Stop(ctx)
	password := dag.SetSecret("cosign-password", "engine-check-cosign-pw")
	keys := cosign().
		WithWorkdir("/keys").
		WithSecretVariable("COSIGN_PASSWORD", password).
		WithExec([]string{"cosign", "generate-key-pair"}).
		Directory("/keys")
	key, err := keys.File("cosign.key").Contents(ctx)
	if err != nil {
		return err
	}
	if vars["key"], err = dag.SetSecret("cosign-key", key).ID(ctx); err != nil {
		return err
	}
	if vars["password"], err = password.ID(ctx); err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct {
			Build struct {
				Publish struct {
					Signed  bool
					Backend []struct{ Repository, Digest string }
					Sboms   struct {
						File struct{ Contents string }
					}
				}
			}
		}
	}
	if err := t.run(ctx, qSupplyChain, vars, &out); err != nil {
		return err
	}
	pub := out.LowcodePipeline.Build.Publish
	if !pub.Signed || len(pub.Backend) != 1 || !strings.Contains(pub.Sboms.File.Contents, "lowcode-example-backend") || !strings.Contains(pub.Sboms.File.Contents, "SPDX") {
		return fmt.Errorf("signed %v, backend %v, SBOM %.300q", pub.Signed, pub.Backend, pub.Sboms.File.Contents)
	}
	ref := pub.Backend[0].Repository + "@" + pub.Backend[0].Digest
	_, err = cosign().
		WithServiceBinding("registry", registry).
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
