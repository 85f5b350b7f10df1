package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"dagger/tests/internal/dagger"
)

// The payload function builds the reference payload with the given images.
// +check
func (t *Tests) PayloadBuildsTheReferencePayload(ctx context.Context) error {
	var out struct {
		LowcodePipeline struct{ Payload string }
	}
	err := t.query(ctx, `{ lowcodePipeline { payload(
		frontendImage: "registry.example.com/team/front:1.0.0",
		backendImage: ["registry.example.com/team/api:1.0.0"],
		deployRule: ["/api: -> ^(?!legacy$).*"]) } }`, nil, &out)
	if err != nil {
		return err
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out.LowcodePipeline.Payload), &got); err != nil {
		return fmt.Errorf("payload is not JSON: %w", err)
	}
	want := `{"backends":{"images":["registry.example.com/team/api:1.0.0"],"deployRules":[{"source":"/api:","target":"^(?!legacy$).*"}]},"codeAsData":{"updateMode":"manual"},"frontend":{"image":"registry.example.com/team/front:1.0.0"},"noDowntime":{"promotionMode":"manual"}}`
	if norm, _ := json.Marshal(got); string(norm) != want {
		return fmt.Errorf("payload\n got %s\nwant %s", norm, want)
	}
	return nil
}

// validate-payload fails with every problem and its JSON path.
// +check
func (t *Tests) ValidatePayloadReportsAllProblems(ctx context.Context) error {
	return t.expectFailure(ctx, `query($p: String!) { lowcodePipeline { validatePayload(payloadJson: $p) } }`,
		map[string]any{"p": `{"frontend":{},"noDowntim":{}}`},
		"frontend.image: required", `noDowntim: unknown key (did you mean "noDowntime"?)`)
}

// plan fails on a backend that would receive two images.
// +check
func (t *Tests) PlanFailsOnAConflict(ctx context.Context) error {
	return t.expectFailure(ctx, `query($p: String!) { lowcodePipeline { plan(payloadJson: $p, backends: ["api"]) } }`,
		map[string]any{"p": `{"backends":{"images":["r/a:1","r/b:1"],"deployRules":[{"source":".*","target":".*"}]}}`},
		`backend "api" would receive 2 different images`)
}

// deploy sends the payload once to the webhook receiver, which records it.
// +check
func (t *Tests) DeployReachesTheReceiverOnce(ctx context.Context) error {
	token := dag.SetSecret("webhook-token", "engine-test-token")
	tokenID, err := token.ID(ctx)
	if err != nil {
		return err
	}
	var svc struct {
		LowcodePipeline struct {
			WebhookReceiver struct{ ID dagger.ServiceID }
		}
	}
	if err := t.query(ctx, `query($t: SecretID!) { lowcodePipeline { webhookReceiver(token: $t) { id } } }`,
		map[string]any{"t": tokenID}, &svc); err != nil {
		return err
	}
	receiver, err := dag.LoadServiceFromID(svc.LowcodePipeline.WebhookReceiver.ID).Start(ctx)
	if err != nil {
		return err
	}
	defer receiver.Stop(ctx)
	endpoint, err := receiver.Endpoint(ctx, dagger.ServiceEndpointOpts{Scheme: "http"})
	if err != nil {
		return err
	}
	var out struct {
		LowcodePipeline struct{ Deploy string }
	}
	err = t.query(ctx, `query($u: String!, $t: SecretID!, $p: String!) { lowcodePipeline {
		deploy(webhookUrl: $u, webhookToken: $t, payloadJson: $p, allowHttp: true) } }`,
		map[string]any{"u": endpoint + "/acme/dev", "t": tokenID, "p": `{"frontend":{"image":"registry.example.com/front:1"}}`}, &out)
	if err != nil {
		return err
	}
	if !strings.Contains(out.LowcodePipeline.Deploy, `"message": "success"`) || strings.Contains(out.LowcodePipeline.Deploy, "engine-test-token") {
		return fmt.Errorf("unexpected receipt: %s", out.LowcodePipeline.Deploy)
	}
	deliveries, err := dag.Container().From("alpine:3.22").
		WithServiceBinding("receiver", receiver).
		WithSecretVariable("T", token).
		WithExec([]string{"sh", "-c", `wget -qO- --header "Authorization: Bearer $T" http://receiver:8080/_deliveries`}).
		Stdout(ctx)
	if err != nil {
		return err
	}
	if n := strings.Count(deliveries, `"path":"/acme/dev"`); n != 1 {
		return fmt.Errorf("the receiver recorded %d deliveries, want 1: %s", n, deliveries)
	}
	return nil
}

// deploy refuses a plain-http address unless asked, before anything is sent.
// +check
func (t *Tests) DeployRefusesPlainHTTP(ctx context.Context) error {
	id, err := dag.SetSecret("t", "x").ID(ctx)
	if err != nil {
		return err
	}
	return t.expectFailure(ctx, `query($t: SecretID!) { lowcodePipeline {
		deploy(webhookUrl: "http://hooks.example.com/a", webhookToken: $t, payloadJson: "{}") } }`,
		map[string]any{"t": id}, "uses plain http")
}

// demo runs the whole pipeline on the embedded example and deploys once to the receiver.
// +check
func (t *Tests) DemoRunsTheWholePipeline(ctx context.Context) error {
	var out struct {
		LowcodePipeline struct{ Demo string }
	}
	if err := t.query(ctx, `{ lowcodePipeline { demo } }`, nil, &out); err != nil {
		return err
	}
	for _, want := range []string{"draw_version 2.14.0", `"message": "success"`, `"status": 200`} {
		if !strings.Contains(out.LowcodePipeline.Demo, want) {
			return fmt.Errorf("demo output lacks %q:\n%s", want, out.LowcodePipeline.Demo)
		}
	}
	return nil
}
