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
	plan(backend: ["api", "worker"]) { images { image rules backends } backends { name images rules } warnings table } } } } }`)

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
						Table    string
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
		!slices.Equal(plan.Backends[1].Rules, []int{1}) || !strings.Contains(plan.Table, "worker") {
		return fmt.Errorf("unexpected plan: %+v", plan)
	}
	return nil
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
	Status                      int
	Message, Url, PayloadSha256 string
	Images                      []string
	SentAt                      string
	DurationMs, Attempts        int
	Warnings                    []string
	DryRun                      bool
	Request                     string
}

const receiptFields = `status message url payloadSha256 images sentAt durationMs attempts warnings dryRun request`

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
	vars, registry, err := t.exampleWithRegistry(ctx)
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

var qDemo = gql("demo", `{ lowcodePipeline { demo { `+receiptFields+` } } }`)

// demo runs the whole pipeline on the embedded example: three images published by digest, deployed once.
// +check
func (t *Tests) DemoRunsTheWholePipeline(ctx context.Context) error {
	var out struct {
		LowcodePipeline struct{ Demo receipt }
	}
	if err := t.run(ctx, qDemo, nil, &out); err != nil {
		return err
	}
	rec := out.LowcodePipeline.Demo
	if rec.Status != 200 || rec.Message != "success" || len(rec.Images) != 3 {
		return fmt.Errorf("unexpected demo receipt: %+v", rec)
	}
	for _, ref := range rec.Images {
		if !strings.HasPrefix(ref, "localhost:5000/lowcode-example/") || !strings.Contains(ref, ":demo@sha256:") {
			return fmt.Errorf("demo deployed %q, want a reference pinned by digest in its registry", ref)
		}
	}
	return nil
}

// The self-hosted webhook of the TLS check: its name is in its certificate.
const hooksHost = "lowcode-hooks.test"

var qTLSReceiver = gql("tls-receiver", `query($token: ID!, $cert: ID!, $key: ID!) { lowcodePipeline {
	webhookReceiver(webhookToken: $token, port: 8443, tlsCert: $cert, tlsKey: $key) { id } } }`)

var qDeployTLS = gql("deploy-tls", `query($token: ID!, $ca: ID!) { lowcodePipeline { payload(frontendImage: "registry.example.com/front:1") {
	deploy(webhookUrl: "https://`+hooksHost+`:8443/acme/tls", webhookToken: $token, webhookCaCert: $ca) { status message } } } }`)

var qDeployTLSUntrusted = gql("deploy-tls-untrusted", `query($token: ID!) { lowcodePipeline { payload(frontendImage: "registry.example.com/front:1") {
	deploy(webhookUrl: "https://`+hooksHost+`:8443/acme/tls", webhookToken: $token) { status } } } }`)

// deploy reaches an HTTPS webhook signed by a private CA when, and only when, --webhook-ca-cert names that CA.
// +check
func (t *Tests) DeployTrustsPrivateCA(ctx context.Context) error {
	tls, err := newPrivateCA(hooksHost)
	if err != nil {
		return err
	}
	vars := map[string]any{}
	if vars["token"], err = dag.SetSecret("webhook-token-tls", "engine-check-tls-token").ID(ctx); err != nil {
		return err
	}
	if vars["cert"], err = dag.File("tls.crt", tls.Cert).ID(ctx); err != nil {
		return err
	}
	if vars["key"], err = dag.SetSecret("webhook-tls-key", tls.Key).ID(ctx); err != nil {
		return err
	}
	var svc struct {
		LowcodePipeline struct {
			WebhookReceiver struct{ ID string }
		}
	}
	if err := t.run(ctx, qTLSReceiver, vars, &svc); err != nil {
		return err
	}
	receiver, err := dag.LoadServiceFromID(dagger.ServiceID(svc.LowcodePipeline.WebhookReceiver.ID)).WithHostname(hooksHost).Start(ctx)
	if err != nil {
		return err
	}
	defer receiver.Stop(ctx)
	untrusted := map[string]any{"token": vars["token"]}
	if err := t.fails(ctx, qDeployTLSUntrusted, untrusted, "certificate"); err != nil {
		return fmt.Errorf("without --webhook-ca-cert: %w", err)
	}
	if vars["ca"], err = dag.File("ca.pem", tls.CA).ID(ctx); err != nil {
		return err
	}
	delete(vars, "cert")
	delete(vars, "key")
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
	return nil
}
