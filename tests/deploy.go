package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"dagger/tests/internal/dagger"
)

var qPayload = gql("payload", `{ lowcodePipeline { payload(
	frontendImage: "registry.example.com/team/front:1.0.0", backendImage: ["registry.example.com/team/api:1.0.0"]) {
	withDeployRules(deployRule: ["/api: -> ^(?!legacy$).*"]) { withPromotionMode(mode: AUTO) { json summary } } } } }`)

// payload builds the reference payload with the given images, rules and modes.
// +check
func (t *Tests) PayloadBuildsTheReferencePayload(ctx context.Context) error {
	var out struct {
		LowcodePipeline struct {
			Payload struct {
				WithDeployRules struct {
					WithPromotionMode struct{ Json, Summary string }
				}
			}
		}
	}
	if err := t.run(ctx, qPayload, nil, &out); err != nil {
		return err
	}
	p := out.LowcodePipeline.Payload.WithDeployRules.WithPromotionMode
	if !strings.Contains(p.Summary, "frontend registry.example.com/team/front:1.0.0") {
		return fmt.Errorf("summary %q does not name the frontend", p.Summary)
	}
	return sameJSON(p.Json, `{"backends":{"images":["registry.example.com/team/api:1.0.0"],"deployRules":[{"source":"/api:","target":"^(?!legacy$).*"}]},
		"codeAsData":{"updateMode":"manual"},"frontend":{"image":"registry.example.com/team/front:1.0.0"},"noDowntime":{"promotionMode":"auto"}}`)
}

var qBadPayload = gql("bad-payload", `query($payload: String!) { lowcodePipeline { payload(fromJson: $payload) { json } } }`)

// A payload given whole is checked, with every problem and its JSON path.
// +check
func (t *Tests) PayloadReportsAllProblems(ctx context.Context) error {
	return t.fails(ctx, qBadPayload, map[string]any{"payload": `{"frontend":{"image":"Not A Ref"},"noDowntim":{}}`},
		"frontend.image", `noDowntim: unknown key (did you mean "noDowntime"?)`)
}

const conflicting = `{"backends":{"images":["registry.example.com/a:1","registry.example.com/b:1"],"deployRules":[{"source":".*","target":".*"}]}}`

var qPlanConflict = gql("plan-conflict", `query($payload: String!) { lowcodePipeline { payload(fromJson: $payload) {
	plan(backend: ["api"]) { warnings } } } }`)

// plan fails on a backend that would receive two images.
// +check
func (t *Tests) PlanFailsOnConflict(ctx context.Context) error {
	return t.fails(ctx, qPlanConflict, map[string]any{"payload": conflicting}, `backend "api" would receive 2 different images`)
}

var qPlan = gql("plan", `{ lowcodePipeline { payload(backendImage: ["registry.example.com/api:1", "registry.example.com/jobs:1"]) {
	withDeployRules(deployRule: ["/api: -> ^api$", "/jobs: -> ^(?!api$)"]) {
	plan(backend: ["api", "worker"]) { images { image rules backends } backends { name images rules } warnings summary json } } } } }`)

// plan says, as data, which image each backend receives and through which rules.
// +check
func (t *Tests) PlanSaysWhereImagesGo(ctx context.Context) error {
	var out struct {
		LowcodePipeline struct {
			Payload struct {
				WithDeployRules struct {
					Plan struct {
						Images []struct {
							Image    string
							Rules    []int
							Backends []string
						}
						Backends []struct {
							Name   string
							Images []string
							Rules  []int
						}
						Warnings []string
						Summary  string
						Json     string
					}
				}
			}
		}
	}
	if err := t.run(ctx, qPlan, nil, &out); err != nil {
		return err
	}
	plan := out.LowcodePipeline.Payload.WithDeployRules.Plan
	if len(plan.Backends) != 2 || plan.Backends[1].Name != "worker" || !slices.Equal(plan.Backends[1].Images, []string{"registry.example.com/jobs:1"}) ||
		!slices.Equal(plan.Backends[1].Rules, []int{1}) || !strings.Contains(plan.Summary, "worker") {
		return fmt.Errorf("unexpected plan: %+v", plan)
	}
	return sameJSON(plan.Json, `{"images":[{"image":"registry.example.com/api:1","rules":[0],"backends":["api"]},
		{"image":"registry.example.com/jobs:1","rules":[1],"backends":["worker"]}],
		"backends":[{"name":"api","images":["registry.example.com/api:1"],"rules":[0]},{"name":"worker","images":["registry.example.com/jobs:1"],"rules":[1]}],
		"warnings":null}`)
}

var qReceiver = gql("webhook-receiver", `query($token: ID!) { lowcodePipeline { webhookReceiver(webhookToken: $token) { id } } }`)

// receiverToken is the token of the receiver a check starts for path.
func receiverToken(path string) string {
	return "engine-check-token" + strings.ReplaceAll(path, "/", "-")
}

// withReceiver starts the module's webhook receiver and names it in vars:
// $url (its address with path) and $token.
func (t *Tests) withReceiver(ctx context.Context, vars map[string]any, path string) (*dagger.Service, *dagger.Secret, error) {
	token := dag.SetSecret("webhook-token"+strings.ReplaceAll(path, "/", "-"), receiverToken(path))
	tokenID, err := token.ID(ctx)
	if err != nil {
		return nil, nil, err
	}
	var svc struct {
		LowcodePipeline struct {
			WebhookReceiver struct{ ID string }
		}
	}
	if err := t.run(ctx, qReceiver, map[string]any{"token": tokenID}, &svc); err != nil {
		return nil, nil, err
	}
	receiver, err := dag.LoadServiceFromID(dagger.ServiceID(svc.LowcodePipeline.WebhookReceiver.ID)).Start(ctx)
	if err != nil {
		return nil, nil, err
	}
	endpoint, err := receiver.Endpoint(ctx, dagger.ServiceEndpointOpts{Scheme: "http"})
	if err != nil {
		receiver.Stop(ctx)
		return nil, nil, err
	}
	vars["url"], vars["token"] = endpoint+path, tokenID
	return receiver, token, nil
}

// deliveries are what the receiver recorded.
func deliveries(ctx context.Context, receiver *dagger.Service, token *dagger.Secret) ([]struct {
	Path    string
	Payload json.RawMessage
}, error) {
	out, err := dag.Container().From("alpine:3.22").
		WithServiceBinding("receiver", receiver).
		WithSecretVariable("T", token).
		WithExec([]string{"sh", "-c", `wget -qO- --header "Authorization: Bearer $T" http://receiver:8080/_deliveries`}).
		Stdout(ctx)
	if err != nil {
		return nil, err
	}
	var list []struct {
		Path    string
		Payload json.RawMessage
	}
	return list, json.Unmarshal([]byte(out), &list)
}

// receipt is the module's Receipt as a check reads it, every field.
type receipt struct {
	Summary, Json               string
	Status                      int
	Message, Url, PayloadSha256 string
	Images                      []string
	SentAt                      string
	DurationMs, Attempts        int
	Warnings                    []string
	DryRun                      bool
	Request                     string
}

const receiptFields = `summary json status message url payloadSha256 images sentAt durationMs attempts warnings dryRun request`

var qDeploy = gql("deploy", `query($url: String!, $token: ID!) { lowcodePipeline { payload(frontendImage: "registry.example.com/front:1") {
	deploy(webhookUrl: $url, webhookToken: $token, allowHttp: true) { `+receiptFields+` } } } }`)

// deploy sends the payload once to the webhook receiver, which records it; the receipt holds no token.
// +check
func (t *Tests) DeployReachesTheReceiverOnce(ctx context.Context) error {
	vars := map[string]any{}
	receiver, token, err := t.withReceiver(ctx, vars, "/acme/dev")
	if err != nil {
		return err
	}
	defer receiver.Stop(ctx)
	var out struct {
		LowcodePipeline struct {
			Payload struct{ Deploy receipt }
		}
	}
	if err := t.run(ctx, qDeploy, vars, &out); err != nil {
		return err
	}
	rec := out.LowcodePipeline.Payload.Deploy
	if rec.Status != 200 || rec.Message != "success" || rec.Attempts != 1 || strings.Contains(fmt.Sprint(rec), receiverToken("/acme/dev")) {
		return fmt.Errorf("unexpected receipt: %+v", rec)
	}
	if !strings.HasPrefix(rec.Summary, "deployed: 200 success\n") || !strings.Contains(rec.Summary, "registry.example.com/front:1") {
		return fmt.Errorf("the receipt's summary %q does not say what was deployed", rec.Summary)
	}
	var doc struct {
		Status int
		Images []string
	}
	if err := json.Unmarshal([]byte(rec.Json), &doc); err != nil || doc.Status != 200 || len(doc.Images) != 1 {
		return fmt.Errorf("the receipt's json %q is not the receipt (%v)", rec.Json, err)
	}
	got, err := deliveries(ctx, receiver, token)
	if err != nil {
		return err
	}
	if len(got) != 1 || got[0].Path != "/acme/dev" {
		return fmt.Errorf("the receiver recorded %d deliveries, want 1 to /acme/dev: %+v", len(got), got)
	}
	return nil
}

var qPlainHTTP = gql("plain-http", `query($token: ID!) { lowcodePipeline { payload(frontendImage: "registry.example.com/front:1") {
	deploy(webhookUrl: "http://hooks.example.com/a", webhookToken: $token) { status } } } }`)

// deploy refuses a plain-http address unless asked, before anything is sent.
// +check
func (t *Tests) DeployRefusesPlainHttp(ctx context.Context) error {
	id, err := dag.SetSecret("t", "x").ID(ctx)
	if err != nil {
		return err
	}
	return t.fails(ctx, qPlainHTTP, map[string]any{"token": id}, "uses plain http")
}

var qChain = gql("chain", `query($source: ID!, $registry: ID!, $url: String!, $token: ID!) { lowcodePipeline(`+exampleArgs+`) {
	build(codeAsData: true) { publish(registry: "`+checkRegistry+`", frontendRepository: "chain/frontend", backendRepository: "chain/backend",
		codeAsDataRepository: "chain/codeasdata", tag: ["2.0.0"], registryService: $registry) {
		`+releaseFields+`
		payload { json deploy(webhookUrl: $url, webhookToken: $token, allowHttp: true) { `+receiptFields+` } } } } } }`)

// The chain build → publish → payload → deploy delivers exactly once, and the payload carries the published digests.
// +check
func (t *Tests) ChainDeploysThePublishedDigests(ctx context.Context) error {
	vars, registry, err := t.exampleWithRegistry(ctx, "ChainDeploysThePublishedDigests")
	if err != nil {
		return err
	}
	defer registry.Stop(ctx)
	receiver, token, err := t.withReceiver(ctx, vars, "/acme/chain")
	if err != nil {
		return err
	}
	defer receiver.Stop(ctx)
	var out struct {
		LowcodePipeline struct {
			Build struct {
				Publish struct {
					release
					Payload struct {
						Json   string
						Deploy receipt
					}
				}
			}
		}
	}
	if err := t.run(ctx, qChain, vars, &out); err != nil {
		return err
	}
	pub := out.LowcodePipeline.Build.Publish
	if len(pub.Frontend) == 0 || len(pub.Backend) == 0 || len(pub.CodeAsData) == 0 {
		return fmt.Errorf("the release lacks an image: %+v", pub.release)
	}
	want := []string{pub.Frontend[0].Ref, pub.Backend[0].Ref, pub.CodeAsData[0].Ref}
	if !slices.Equal(pub.Payload.Deploy.Images, want) || pub.Payload.Deploy.Status != 200 {
		return fmt.Errorf("the receipt deployed %v (status %d), want the published %v", pub.Payload.Deploy.Images, pub.Payload.Deploy.Status, want)
	}
	got, err := deliveries(ctx, receiver, token)
	if err != nil {
		return err
	}
	if len(got) != 1 {
		return fmt.Errorf("the receiver recorded %d deliveries, want exactly 1", len(got))
	}
	return sameJSON(string(got[0].Payload), pub.Payload.Json)
}

var qDemo = gql("demo", `{ lowcodePipeline { demo } }`)

// demo runs the whole pipeline on the embedded example and prints a readable receipt: status 200, three images published by digest.
// +check
func (t *Tests) DemoRunsTheWholePipeline(ctx context.Context) error {
	var out struct {
		LowcodePipeline struct{ Demo string }
	}
	if err := t.run(ctx, qDemo, nil, &out); err != nil {
		return err
	}
	text := out.LowcodePipeline.Demo
	if !strings.HasPrefix(text, "deployed: 200 success\n") || !strings.Contains(text, "payload:  sha256 ") {
		return fmt.Errorf("demo printed %q, want a receipt saying 200 success and the payload's SHA-256", text)
	}
	for _, kind := range []string{"frontend", "backend", "codeasdata"} {
		if !strings.Contains(text, "localhost:5000/lowcode-example/"+kind+":demo@sha256:") {
			return fmt.Errorf("demo printed %q, without the %s image pinned by digest", text, kind)
		}
	}
	return nil
}

var qDeployTLS = gql("deploy-tls", `query($url: String!, $token: ID!, $ca: ID!) { lowcodePipeline { payload(frontendImage: "registry.example.com/front:1") {
	deploy(webhookUrl: $url, webhookToken: $token, webhookCaCert: $ca) { status message } } } }`)

var qDeployTLSUntrusted = gql("deploy-tls-untrusted", `query($url: String!, $token: ID!) { lowcodePipeline { payload(frontendImage: "registry.example.com/front:1") {
	deploy(webhookUrl: $url, webhookToken: $token) { status } } } }`)

// deploy reaches an HTTPS webhook signed by a private CA when, and only when, --webhook-ca-cert names that CA.
// +check
func (t *Tests) DeployTrustsPrivateCA(ctx context.Context) error {
	ca, err := newPrivateCA()
	if err != nil {
		return err
	}
	vars := map[string]any{}
	receiver, token, err := t.withReceiver(ctx, vars, "/acme/tls")
	if err != nil {
		return err
	}
	defer receiver.Stop(ctx)
	front, err := tlsFront("deploy-tls", ca, receiver, 8080, 8443).Start(ctx)
	if err != nil {
		return err
	}
	defer front.Stop(ctx)
	endpoint, err := front.Endpoint(ctx, dagger.ServiceEndpointOpts{Scheme: "https"})
	if err != nil {
		return err
	}
	vars["url"] = endpoint + "/acme/tls"
	if err := t.fails(ctx, qDeployTLSUntrusted, map[string]any{"url": vars["url"], "token": vars["token"]}, "certificate"); err != nil {
		return fmt.Errorf("without --webhook-ca-cert: %w", err)
	}
	if vars["ca"], err = dag.File("ca.pem", ca.CA).ID(ctx); err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct {
			Payload struct{ Deploy receipt }
		}
	}
	if err := t.run(ctx, qDeployTLS, vars, &out); err != nil {
		return err
	}
	if rec := out.LowcodePipeline.Payload.Deploy; rec.Status != 200 || rec.Message != "success" {
		return fmt.Errorf("unexpected receipt: %+v", rec)
	}
	got, err := deliveries(ctx, receiver, token)
	if err != nil {
		return err
	}
	if len(got) != 1 {
		return fmt.Errorf("the receiver recorded %d deliveries through the TLS front, want exactly 1 (the untrusted call sends nothing)", len(got))
	}
	return nil
}
