package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"dagger/tests/internal/dagger"
)

// payload builds the reference payload with the given images, rules and modes.
// +check
func (t *Tests) PayloadBuildsTheReferencePayload(ctx context.Context) error {
	p := dag.LowcodePipeline().
		Payload(dagger.LowcodePipelinePayloadOpts{FrontendRef: "registry.example.com/team/front:1.0.0", BackendRef: []string{"registry.example.com/team/api:1.0.0"}}).
		WithDeployRules([]string{"/api: -> ^(?!legacy$).*"}).
		WithPromotionMode(dagger.LowcodePipelineApprovalModeAuto)
	summary, err := p.Summary(ctx)
	if err != nil {
		return err
	}
	if !strings.Contains(summary, "frontend registry.example.com/team/front:1.0.0") {
		return fmt.Errorf("summary %q does not name the frontend", summary)
	}
	doc, err := p.JSON(ctx)
	if err != nil {
		return err
	}
	return sameJSON(doc, `{"backends":{"images":["registry.example.com/team/api:1.0.0"],"deployRules":[{"source":"/api:","target":"^(?!legacy$).*"}]},
		"codeAsData":{"updateMode":"manual"},"frontend":{"image":"registry.example.com/team/front:1.0.0"},"noDowntime":{"promotionMode":"auto"}}`)
}

// A payload given whole is checked, with every problem and its JSON path.
// +check
func (t *Tests) PayloadReportsAllProblems(ctx context.Context) error {
	from := dag.File("payload.json", `{"frontend":{"image":"Not A Ref"},"noDowntim":{}}`)
	_, err := dag.LowcodePipeline().Payload(dagger.LowcodePipelinePayloadOpts{From: from}).JSON(ctx)
	return fails("a bad payload", err, "frontend.image", `noDowntim: unknown key (did you mean "noDowntime"?)`)
}

// plan fails on a backend that would receive two images.
// +check
func (t *Tests) PlanFailsOnConflict(ctx context.Context) error {
	from := dag.File("payload.json", `{"backends":{"images":["registry.example.com/a:1","registry.example.com/b:1"],"deployRules":[{"source":".*","target":".*"}]}}`)
	_, err := dag.LowcodePipeline().Payload(dagger.LowcodePipelinePayloadOpts{From: from}).Plan([]string{"api"}).Summary(ctx)
	return fails("a conflict", err, `backend "api" would receive 2 different images`)
}

// plan says, as data, which image each backend receives and through which rules.
// +check
func (t *Tests) PlanSaysWhereImagesGo(ctx context.Context) error {
	plan := dag.LowcodePipeline().
		Payload(dagger.LowcodePipelinePayloadOpts{BackendRef: []string{"registry.example.com/api:1", "registry.example.com/jobs:1"}}).
		WithDeployRules([]string{"/api: -> ^api$", "/jobs: -> ^(?!api$)"}).
		Plan([]string{"api", "worker"})
	summary, err := plan.Summary(ctx)
	if err != nil {
		return err
	}
	if !strings.Contains(summary, "worker") {
		return fmt.Errorf("the plan's table lacks the worker: %s", summary)
	}
	backends, err := plan.Backends(ctx)
	if err != nil {
		return err
	}
	if len(backends) != 2 {
		return fmt.Errorf("%d backends, want 2", len(backends))
	}
	name, _ := backends[1].Name(ctx)
	images, _ := backends[1].Images(ctx)
	rules, _ := backends[1].Rules(ctx)
	if name != "worker" || !slices.Equal(images, []string{"registry.example.com/jobs:1"}) || !slices.Equal(rules, []int{1}) {
		return fmt.Errorf("backend 1 is %s with %v through rules %v; want worker with the jobs image through rule 1", name, images, rules)
	}
	doc, err := plan.JSON(ctx)
	if err != nil {
		return err
	}
	return sameJSON(doc, `{"images":[{"image":"registry.example.com/api:1","rules":[0],"backends":["api"]},
		{"image":"registry.example.com/jobs:1","rules":[1],"backends":["worker"]}],
		"backends":[{"name":"api","images":["registry.example.com/api:1"],"rules":[0]},{"name":"worker","images":["registry.example.com/jobs:1"],"rules":[1]}],
		"warnings":[]}`)
}

// receiver is the module's webhook receiver, started for one check.
type receiver struct {
	svc   *dagger.Service
	token *dagger.Secret
	url   string // its endpoint, with path
}

// startReceiver starts the module's webhook receiver for path. It is handed
// to the module by its endpoint URL, which resolves in every module of the
// session (engine-facts.md).
func startReceiver(ctx context.Context, path string) (*receiver, error) {
	token := dag.SetSecret("webhook-token"+strings.ReplaceAll(path, "/", "-"), receiverToken(path))
	svc, err := dag.LowcodePipeline().WebhookReceiver(token).Start(ctx)
	if err != nil {
		return nil, err
	}
	endpoint, err := svc.Endpoint(ctx, dagger.ServiceEndpointOpts{Scheme: "http"})
	if err != nil {
		svc.Stop(ctx)
		return nil, err
	}
	return &receiver{svc: svc, token: token, url: endpoint + path}, nil
}

// receiverToken is the token of the receiver a check starts for path.
func receiverToken(path string) string {
	return "engine-check-token" + strings.ReplaceAll(path, "/", "-")
}

// delivery is one request the receiver recorded.
type delivery struct {
	Path    string
	Payload json.RawMessage
}

// deliveries are what the receiver recorded now. The read is an exec the
// engine would otherwise cache: the receiver's definition (so the binding's
// key) is the same in every run of an unchanged module, and a later run
// would be answered with an earlier run's recordings.
func (r *receiver) deliveries(ctx context.Context) ([]delivery, error) {
	out, err := dag.Container().From("alpine:3.22").
		WithServiceBinding("receiver", r.svc).
		WithEnvVariable("READ_AT", time.Now().UTC().Format(time.RFC3339Nano)).
		WithSecretVariable("T", r.token).
		WithExec([]string{"sh", "-c", `wget -qO- --header "Authorization: Bearer $T" http://receiver:8080/_deliveries`}).
		Stdout(ctx)
	if err != nil {
		return nil, err
	}
	var list []delivery
	return list, json.Unmarshal([]byte(out), &list)
}

// deploy sends the payload once to the webhook receiver, which records it; the receipt holds no token.
// +check
func (t *Tests) DeployReachesTheReceiverOnce(ctx context.Context) error {
	rcv, err := startReceiver(ctx, "/acme/dev")
	if err != nil {
		return err
	}
	defer rcv.svc.Stop(ctx)
	rec := dag.LowcodePipeline().Payload(dagger.LowcodePipelinePayloadOpts{FrontendRef: "registry.example.com/front:1"}).
		Deploy(rcv.url, rcv.token, dagger.LowcodePipelinePayloadDeployOpts{AllowHTTP: true})
	rec, err = pinReceipt(ctx, rec)
	if err != nil {
		return err
	}
	summary, err := rec.Summary(ctx)
	if err != nil {
		return err
	}
	doc, err := rec.JSON(ctx)
	if err != nil {
		return err
	}
	var r struct {
		Status          int
		Message         string
		ConnectAttempts int
		Images          []string
	}
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		return err
	}
	if r.Status != 200 || r.Message != "success" || r.ConnectAttempts != 1 || len(r.Images) != 1 ||
		strings.Contains(doc+summary, receiverToken("/acme/dev")) || !strings.HasPrefix(summary, "deployed: 200 success\n") {
		return fmt.Errorf("unexpected receipt: %s\n%s", summary, doc)
	}
	got, err := rcv.deliveries(ctx)
	if err != nil {
		return err
	}
	if len(got) != 1 || got[0].Path != "/acme/dev" {
		return fmt.Errorf("the receiver recorded %d deliveries, want 1 to /acme/dev: %+v", len(got), got)
	}
	return nil
}

// deploy refuses a plain-http address unless asked, before anything is sent.
// +check
func (t *Tests) DeployRefusesPlainHttp(ctx context.Context) error {
	_, err := dag.LowcodePipeline().Payload(dagger.LowcodePipelinePayloadOpts{FrontendRef: "registry.example.com/front:1"}).
		Deploy("http://hooks.example.com/a", dag.SetSecret("t", "x")).Status(ctx)
	return fails("plain http", err, "uses plain http")
}

// The chain build → publish → payload → deploy delivers exactly once, and the payload carries the published digests.
// +check
func (t *Tests) ChainDeploysThePublishedDigests(ctx context.Context) error {
	reg, err := registry(ctx, "ChainDeploysThePublishedDigests")
	if err != nil {
		return err
	}
	defer reg.Stop(ctx)
	rcv, err := startReceiver(ctx, "/acme/chain")
	if err != nil {
		return err
	}
	defer rcv.svc.Stop(ctx)
	rel := build(t.app(), dagger.LowcodePipelineBuildOpts{CodeAsData: dagger.LowcodePipelineCodeAsDataKindProject}).
		Publish(checkRegistry+"/chain/{kind}", []string{"2.0.0"}, dagger.LowcodePipelineBuildPublishOpts{RegistryService: reg})
	rel, err = pinRelease(ctx, rel)
	if err != nil {
		return err
	}
	payload := rel.Payload()
	images, err := payload.Deploy(rcv.url, rcv.token, dagger.LowcodePipelinePayloadDeployOpts{AllowHTTP: true}).Images(ctx)
	if err != nil {
		return err
	}
	var want []string
	for _, list := range []func(context.Context) ([]dagger.LowcodePipelinePushedImage, error){rel.Frontend, rel.Backend, rel.CodeAsData} {
		refs, err := list(ctx)
		if err != nil {
			return err
		}
		if len(refs) == 0 {
			return fmt.Errorf("the release lacks an image")
		}
		ref, _ := refs[0].Ref(ctx)
		want = append(want, ref)
	}
	if !slices.Equal(images, want) {
		return fmt.Errorf("the receipt deployed %v, want the published %v", images, want)
	}
	return oneDelivery(ctx, rcv, payload)
}

// oneDelivery: the receiver recorded exactly one request, whose body is the payload.
func oneDelivery(ctx context.Context, rcv *receiver, payload *dagger.LowcodePipelinePayload) error {
	return deliveries(ctx, rcv, payload, 1)
}

// deliveries: the receiver recorded exactly n requests, each of whose body is the payload.
func deliveries(ctx context.Context, rcv *receiver, payload *dagger.LowcodePipelinePayload, n int) error {
	got, err := rcv.deliveries(ctx)
	if err != nil {
		return err
	}
	if len(got) != n {
		return fmt.Errorf("the receiver recorded %d deliveries, want exactly %d", len(got), n)
	}
	doc, err := payload.JSON(ctx)
	if err != nil {
		return err
	}
	for i, d := range got {
		if err := sameJSON(string(d.Payload), doc); err != nil {
			return fmt.Errorf("delivery %d of %d: %w", i+1, n, err)
		}
	}
	return nil
}

// deliver, one call, builds, publishes and deploys exactly once, and its summary shows the pinned images and the receipt.
// +check
func (t *Tests) DeliverIsTheChainInOneCall(ctx context.Context) error {
	reg, err := registry(ctx, "DeliverIsTheChainInOneCall")
	if err != nil {
		return err
	}
	defer reg.Stop(ctx)
	rcv, err := startReceiver(ctx, "/acme/deliver")
	if err != nil {
		return err
	}
	defer rcv.svc.Stop(ctx)
	d := dag.LowcodePipeline().Deliver(checkRegistry+"/deliver/{kind}", []string{"4.0.0"}, rcv.url, rcv.token, dagger.LowcodePipelineDeliverOpts{
		Source: t.app(), Toolkit: toolkit, DrawPackage: drawPackage, CodeAsData: dagger.LowcodePipelineCodeAsDataKindBricks,
		RegistryService: reg, AllowHTTP: true, Created: "2026-11-01T00:00:00Z",
		Payload: dag.File("payload.json", `{"backends":{"images":[],"deployRules":[{"source":"/backend:","target":"^api$"}]},"codeAsData":{"updateMode":"auto"}}`),
	})
	d, err = pinDelivery(ctx, d)
	if err != nil {
		return err
	}
	summary, err := d.Summary(ctx)
	if err != nil {
		return err
	}
	if strings.Count(summary, ":4.0.0@sha256:") != 6 || !strings.Contains(summary, "deployed: 200 success") {
		return fmt.Errorf("deliver printed %q: want three images pinned by digest (in the release and the receipt) and 200 success", summary)
	}
	if !strings.Contains(summary, "\nsteps:    build ") || !strings.Contains(summary, " · deploy ") {
		return fmt.Errorf("deliver printed %q: want the steps' times last", summary)
	}
	doc, err := d.Payload().JSON(ctx)
	if err != nil {
		return err
	}
	var sent struct {
		Backends struct {
			DeployRules []struct{ Target string } `json:"deployRules"`
		} `json:"backends"`
		CodeAsData struct {
			UpdateMode string `json:"updateMode"`
		} `json:"codeAsData"`
	}
	if err := json.Unmarshal([]byte(doc), &sent); err != nil {
		return fmt.Errorf("the payload is not JSON: %w", err)
	}
	if sent.CodeAsData.UpdateMode != "auto" || len(sent.Backends.DeployRules) != 1 || sent.Backends.DeployRules[0].Target != "^api$" {
		return fmt.Errorf("the payload %s did not start from --payload (updateMode auto, one rule to ^api$)", doc)
	}
	return oneDelivery(ctx, rcv, d.Payload())
}

// deliver run again with nothing changed sends the deployment once more, the same payload, and pushes nothing: every tag unchanged; the same request twice in one session is sent once.
//
// The registry is reached by its IP, without --registry-service, as in
// publish-spares-what-the-registry-holds: a registry service is always
// pushed to, an outside registry is read first. Each CI run is a session of
// its own; in this one session the second run differs from the first by its
// webhook address's query alone, which the receiver ignores, and the third
// repeats the second, which deliver (+cache="session") does not send again.
// +check
func (t *Tests) DeliverAgainPostsOnceAndPushesNothing(ctx context.Context) error {
	reg, repository, err := registryByIP(ctx, "DeliverAgainPostsOnceAndPushesNothing")
	if err != nil {
		return err
	}
	defer reg.Stop(ctx)
	rcv, err := startReceiver(ctx, "/acme/again")
	if err != nil {
		return err
	}
	defer rcv.svc.Stop(ctx)
	check := sameDigests(ctx)
	var last *dagger.LowcodePipelineDelivery
	for _, run := range []struct {
		name     string
		query    string
		outcomes []string
	}{
		{"deliver", "?run=1", []string{"pushed", "pushed"}},
		{"deliver again, nothing changed", "?run=2", []string{"unchanged", "unchanged"}},
		{"the same request again in this session", "?run=2", []string{"unchanged", "unchanged"}},
	} {
		d, err := pinDelivery(ctx, dag.LowcodePipeline().Deliver(repository+"/again/{kind}", []string{"3.0.0", "latest"}, rcv.url+run.query, rcv.token,
			dagger.LowcodePipelineDeliverOpts{Source: t.app(), Toolkit: toolkit, DrawPackage: drawPackage, AllowHTTP: true}))
		if err != nil {
			return fmt.Errorf("%s: %w", run.name, err)
		}
		if err := check([]string{run.name}, d.Release(), run.outcomes...); err != nil {
			return err
		}
		last = d
	}
	return deliveries(ctx, rcv, last.Payload(), 2)
}

// deliver whose builds fail sends nothing to the webhook, and fails with the build's exit code.
// +check
func (t *Tests) DeliverSendsNothingWhenTheBuildFails(ctx context.Context) error {
	rcv, err := startReceiver(ctx, "/acme/broken")
	if err != nil {
		return err
	}
	defer rcv.svc.Stop(ctx)
	// both builds fail, so no push starts whichever image goes first
	broken := t.app().
		WithNewFile("scripts/build-web.mjs", "process.exit(7)\n").
		WithNewFile("scripts/build-node.mjs", "process.exit(7)\n")
	// no registry: nothing is pushed (a loopback name would be refused before the build)
	_, err = dag.LowcodePipeline().Deliver("registry.invalid/broken/{kind}", []string{"1.0.0"}, rcv.url, rcv.token, dagger.LowcodePipelineDeliverOpts{
		Source: broken, Toolkit: toolkit, DrawPackage: drawPackage, AllowHTTP: true,
	}).Summary(ctx)
	if err := fails("builds that exit 7", err, "exit code: 7"); err != nil {
		return err
	}
	got, err := rcv.deliveries(ctx)
	if err != nil {
		return err
	}
	if len(got) != 0 {
		return fmt.Errorf("the receiver recorded %d deliveries of a run whose build failed, want none", len(got))
	}
	return nil
}

// demo runs the whole pipeline on the embedded example and prints a readable receipt: status 200, three images published by digest.
// +check
func (t *Tests) DemoRunsTheWholePipeline(ctx context.Context) error {
	text, err := dag.LowcodePipeline().Demo(ctx)
	if err != nil {
		return err
	}
	if !strings.Contains(text, "deployed: 200 success\n") || !strings.Contains(text, "payload:  sha256 ") {
		return fmt.Errorf("demo printed %q, want a receipt saying 200 success and the payload's SHA-256", text)
	}
	for _, kind := range []string{"frontend", "backend", "codeasdata"} {
		if !strings.Contains(text, "localhost:5000/lowcode-example/"+kind+":demo@sha256:") {
			return fmt.Errorf("demo printed %q, without the %s image pinned by digest", text, kind)
		}
	}
	return nil
}

// deploy reaches an HTTPS webhook signed by a private CA when, and only when, --webhook-ca-cert names that CA.
// +check
func (t *Tests) DeployTrustsPrivateCA(ctx context.Context) error {
	ca, err := newPrivateCA()
	if err != nil {
		return err
	}
	rcv, err := startReceiver(ctx, "/acme/tls")
	if err != nil {
		return err
	}
	defer rcv.svc.Stop(ctx)
	front, err := tlsFront("deploy-tls", ca, rcv.svc, 8080, 8443).Start(ctx)
	if err != nil {
		return err
	}
	defer front.Stop(ctx)
	endpoint, err := front.Endpoint(ctx, dagger.ServiceEndpointOpts{Scheme: "https"})
	if err != nil {
		return err
	}
	p := dag.LowcodePipeline().Payload(dagger.LowcodePipelinePayloadOpts{FrontendRef: "registry.example.com/front:1"})
	_, err = p.Deploy(endpoint+"/acme/tls", rcv.token).Status(ctx)
	if err := fails("without --webhook-ca-cert", err, "certificate"); err != nil {
		return err
	}
	status, err := p.Deploy(endpoint+"/acme/tls", rcv.token, dagger.LowcodePipelinePayloadDeployOpts{WebhookCaCert: dag.File("ca.pem", ca.CA)}).Status(ctx)
	if err != nil {
		return err
	}
	if status != 200 {
		return fmt.Errorf("status %d through the TLS front, want 200", status)
	}
	got, err := rcv.deliveries(ctx)
	if err != nil {
		return err
	}
	if len(got) != 1 {
		return fmt.Errorf("the receiver recorded %d deliveries through the TLS front, want exactly 1 (the untrusted call sends nothing)", len(got))
	}
	return nil
}
