package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/rules"
)

// These tests call the module's functions directly, with inline JSON instead
// of files, so they need no engine (see .ci/run for the session variables the
// generated client wants at start-up).

var m = &LowcodePipeline{}

func TestPayloadFunctionBuildsTheReferencePayload(t *testing.T) {
	out, err := m.Payload(context.Background(), "reg.example.com/front:2", []string{"reg.example.com/api:2", "reg.example.com/jobs:2"},
		"", []string{"api: -> ^api$", "jobs: -> ^(?!api$).*"}, "", ApprovalModeAuto, false, true, nil, "")
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"frontend": {"image": "reg.example.com/front:2"},
		"backends": {"images": ["reg.example.com/api:2", "reg.example.com/jobs:2"],
			"deployRules": [{"source": "api:", "target": "^api$"}, {"source": "jobs:", "target": "^(?!api$).*"}]},
		"codeAsData": {"updateMode": "manual"},
		"noDowntime": {"promotionMode": "auto"},
		"extraArgs": ["--force-sync"]}`, out)
	assert.Contains(t, out, `"^(?!api$).*"`, "regular expressions are printed as written, not HTML-escaped")
}

func TestPayloadFunctionStartsFromAGivenPayload(t *testing.T) {
	out, err := m.Payload(context.Background(), "", []string{"reg.example.com/api:3"}, "reg.example.com/cad:3", nil, "", "", true, false, nil,
		`{"backends":{"images":[],"deployRules":[{"source":"api","target":"api"}]}}`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"backends":{"images":["reg.example.com/api:3"],"deployRules":[{"source":"api","target":"api"}]},
		"codeAsData":{"image":"reg.example.com/cad:3"},"skipUpdateVersions":true}`, out)
}

func TestPayloadFunctionRefusesBadInputWithAllProblems(t *testing.T) {
	for _, tc := range []struct {
		name  string
		call  func() (string, error)
		wants []string
	}{
		{"bad flags are all reported", func() (string, error) {
			return m.Payload(context.Background(), "Front", nil, "", []string{"no arrow"}, "sometimes", "", false, false, nil, "")
		}, []string{`--update-mode: invalid value "sometimes"`, `--deploy-rule: deploy rule "no arrow"`}},
		{"an invalid image is refused after build-up", func() (string, error) {
			return m.Payload(context.Background(), "Front:1", []string{"api"}, "", nil, "", "", false, false, nil, "")
		}, []string{"frontend.image", "backends.images[0]"}},
		{"a non-JavaScript rule is refused", func() (string, error) {
			return m.Payload(context.Background(), "", nil, "", []string{"(?i)api -> .*"}, "", "", false, false, nil, "")
		}, []string{"--deploy-rule[0].source", "inline flags"}},
		{"a bad starting payload names its path", func() (string, error) {
			return m.Payload(context.Background(), "", nil, "", nil, "", "", false, false, nil, `{"frontend":{"img":"a:1"}}`)
		}, []string{"starting payload", "frontend.img", `did you mean "image"?`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.call()
			require.Error(t, err)
			for _, w := range tc.wants {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestValidatePayloadFunction(t *testing.T) {
	out, err := m.ValidatePayload(context.Background(), nil, `{"frontend":{"image":"reg.example.com/front:2"},"noDowntime":{"promotionMode":"manual"}}`)
	require.NoError(t, err)
	assert.Equal(t, "valid payload: frontend reg.example.com/front:2; no-downtime promotion manual", out)

	_, err = m.ValidatePayload(context.Background(), nil, `{"frontend":{},"extraArgs":["--x"],"noDowntim":{}}`)
	require.Error(t, err)
	for _, w := range []string{"3 problems", "frontend.image: required", "extraArgs[0]", "noDowntim: unknown key"} {
		assert.Contains(t, err.Error(), w)
	}

	_, err = m.ValidatePayload(context.Background(), nil, "")
	assert.EqualError(t, err, "no payload: give --payload FILE or --payload-json 'JSON'")
}

const planPayloadJSON = `{"backends":{"images":["reg/api:1","reg/jobs:1"],
	"deployRules":[{"source":"api","target":"^api$"},{"source":"jobs","target":"^(?!api$).*"}]}}`

func TestPlanFunction(t *testing.T) {
	table, err := m.Plan(context.Background(), []string{"api", "worker", "cron"}, nil, planPayloadJSON, "")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^api\s+reg/api:1\s+0$`, table)
	assert.Regexp(t, `(?m)^worker\s+reg/jobs:1\s+1$`, table)
	assert.Regexp(t, `(?m)^cron\s+reg/jobs:1\s+1$`, table)

	out, err := m.Plan(context.Background(), []string{"api", "worker"}, nil, planPayloadJSON, PlanFormatJSON)
	require.NoError(t, err)
	var plan rules.Plan
	require.NoError(t, json.Unmarshal([]byte(out), &plan))
	assert.Equal(t, []string{"worker"}, plan.Images[1].Backends)
}

func TestPlanFunctionFailsOnAnUndeployablePlan(t *testing.T) {
	_, err := m.Plan(context.Background(), []string{"api"}, nil, planPayloadJSON, PlanFormatTable)
	require.ErrorIs(t, err, rules.ErrPlan)
	assert.Contains(t, err.Error(), `image "reg/jobs:1" reaches no backend`)

	_, err = m.Plan(context.Background(), []string{"api"}, nil, planPayloadJSON, "yaml")
	assert.ErrorContains(t, err, `--format: invalid value "yaml"`)
}
