package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/payload"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/rules"
)

// These tests call the module's functions directly, with inline JSON instead
// of files, so they need no engine (see .ci/run for the session variables the
// generated client wants at start-up).

var m = &LowcodePipeline{}

const (
	front = "reg.example.com/front:2"
	api   = "reg.example.com/api:2"
	jobs  = "reg.example.com/jobs:2"
)

// chain runs steps on a payload, stopping at the first error.
func chain(t *testing.T, p *Payload, err error, steps ...func(*Payload) (*Payload, error)) (*Payload, error) {
	t.Helper()
	for _, step := range steps {
		if err != nil {
			return nil, err
		}
		p, err = step(p)
	}
	return p, err
}

func TestPayloadChainBuildsTheReferencePayload(t *testing.T) {
	start, err := m.Payload(context.Background(), nil, front, []string{api, jobs}, "")
	p, err := chain(t, start, err,
		func(p *Payload) (*Payload, error) {
			return p.WithDeployRules([]string{"api: -> ^api$", "jobs: -> ^(?!api$).*"})
		},
		func(p *Payload) (*Payload, error) { return p.WithPromotionMode(ApprovalModeAuto) },
		func(p *Payload) (*Payload, error) { return p.WithForceSync() },
	)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"frontend": {"image": "reg.example.com/front:2"},
		"backends": {"images": ["reg.example.com/api:2", "reg.example.com/jobs:2"],
			"deployRules": [{"source": "api:", "target": "^api$"}, {"source": "jobs:", "target": "^(?!api$).*"}]},
		"codeAsData": {"updateMode": "manual"},
		"noDowntime": {"promotionMode": "auto"},
		"extraArgs": ["--force-sync"]}`, p.Json)
	assert.Contains(t, p.Json, `"^(?!api$).*"`, "regular expressions are printed as written, not HTML-escaped")
}

func TestReleasePayloadCarriesTheFirstTagPinnedByDigest(t *testing.T) {
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	r := &Release{
		Frontend:   []*PushedImage{{Ref: "reg.example.com/front:1.4.0" + digest}, {Ref: "reg.example.com/front:latest" + digest}},
		Backend:    []*PushedImage{{Ref: "reg.example.com/api:1.4.0" + digest}},
		CodeAsData: []*PushedImage{{Ref: "reg.example.com/cad:1.4.0" + digest}},
	}
	p, err := newPayload([]byte(`{"frontend":{},"backends":{"images":[],"deployRules":[{"source":".*","target":"^api$"}]}}`), r.payloadOptions())
	require.NoError(t, err)
	assert.JSONEq(t, `{"frontend":{"image":"reg.example.com/front:1.4.0`+digest+`"},
		"backends":{"images":["reg.example.com/api:1.4.0`+digest+`"],"deployRules":[{"source":".*","target":"^api$"}]},
		"codeAsData":{"image":"reg.example.com/cad:1.4.0`+digest+`"}}`, p.Json)

	p, err = (&Release{Frontend: r.Frontend, Backend: r.Backend}).Payload(context.Background(), nil)
	require.NoError(t, err)
	assert.NotContains(t, p.Json, `"image": "reg.example.com/cad`, "no code-as-data image when the release has none")
}

func TestPayloadStartsFromAGivenPayload(t *testing.T) {
	given := `{"backends":{"images":[],"deployRules":[{"source":"api","target":"api"}]}}`
	p, err := newPayload([]byte(given), payload.Options{BackendImages: []string{"reg.example.com/api:3"}, CodeAsDataImage: "reg.example.com/cad:3"})
	p, err = chain(t, p, err, func(p *Payload) (*Payload, error) { return p.WithSkipUpdateVersions() })
	require.NoError(t, err)
	assert.JSONEq(t, `{"backends":{"images":["reg.example.com/api:3"],"deployRules":[{"source":"api","target":"api"}]},
		"codeAsData":{"image":"reg.example.com/cad:3"},"skipUpdateVersions":true}`, p.Json)

	unchanged := "{\"frontend\": {\"image\": \"" + front + "\"}}"
	p, err = newPayload([]byte(unchanged), payload.Options{})
	require.NoError(t, err)
	assert.Equal(t, unchanged, p.Json, "a payload given whole is kept byte for byte")
}

func TestPayloadRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	valid, err := m.Payload(ctx, nil, front, nil, "")
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		call  func() (*Payload, error)
		wants []string
	}{
		{"invalid images name their JSON paths", func() (*Payload, error) {
			return m.Payload(ctx, nil, "Front:1", []string{"api"}, "")
		}, []string{"frontend.image", "backends.images[0]"}},
		{"a bad starting payload names its path", func() (*Payload, error) {
			return newPayload([]byte(`{"frontend":{"img":"a:1"}}`), payload.Options{})
		}, []string{"starting payload", "frontend.img", `did you mean "image"?`}},
		{"every malformed rule is reported", func() (*Payload, error) {
			return valid.WithDeployRules([]string{"no arrow", "a -> b -> c"})
		}, []string{`--deploy-rule: deploy rule "no arrow"`, `"a -> b -> c"`}},
		{"a non-JavaScript rule is refused", func() (*Payload, error) {
			return valid.WithDeployRules([]string{"(?i)api -> .*"})
		}, []string{"--deploy-rule[0].source", `flags "(?i)" are not JavaScript syntax`}},
		{"no rule at all", func() (*Payload, error) { return valid.WithDeployRules(nil) }, []string{"--deploy-rule: give at least one rule"}},
		{"a mode that is neither auto nor manual", func() (*Payload, error) {
			return valid.WithUpdateMode("sometimes")
		}, []string{`--mode: invalid value "sometimes"`, `"auto" and "manual"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.call()
			require.Error(t, err)
			for _, w := range tc.wants {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	_, err = m.Payload(ctx, nil, "", nil, "")
	assert.NoError(t, err, "the reference default alone is a valid payload")
}

func TestPayloadSummary(t *testing.T) {
	p, err := newPayload([]byte(`{"frontend":{"image":"reg.example.com/front:2"},"noDowntime":{"promotionMode":"manual"}}`), payload.Options{})
	require.NoError(t, err)
	assert.Equal(t, "frontend reg.example.com/front:2; no-downtime promotion manual", p.Summary)
	edited, err := p.WithForceSync()
	require.NoError(t, err)
	assert.Contains(t, edited.Summary, "extra args --force-sync", "an edit renders its own summary")
}

const planPayloadJSON = `{"backends":{"images":["reg/api:1","reg/jobs:1"],
	"deployRules":[{"source":"api","target":"^api$"},{"source":"jobs","target":"^(?!api$).*"}]}}`

func TestPlanSaysWhereEachImageGoes(t *testing.T) {
	p, err := newPayload([]byte(planPayloadJSON), payload.Options{})
	require.NoError(t, err)
	plan, err := p.Plan([]string{"api", "worker", "cron"}, "")
	require.NoError(t, err)
	assert.Equal(t, []*PlanImage{
		{Image: "reg/api:1", Rules: []int{0}, Backends: []string{"api"}},
		{Image: "reg/jobs:1", Rules: []int{1}, Backends: []string{"worker", "cron"}},
	}, plan.Images)
	assert.Equal(t, &PlanBackend{Name: "worker", Images: []string{"reg/jobs:1"}, Rules: []int{1}}, plan.Backends[1])

	table := plan.Summary
	assert.Regexp(t, `(?m)^api\s+reg/api:1\s+0$`, table)
	assert.Regexp(t, `(?m)^cron\s+reg/jobs:1\s+1$`, table)

	data, err := json.Marshal(plan)
	require.NoError(t, err)
	var back Plan
	require.NoError(t, json.Unmarshal(data, &back), "the plan is plain data, as dagger call --json prints it")
	assert.Equal(t, *plan, back)
}

func TestPlanFailsOnAnUndeployablePlan(t *testing.T) {
	p, err := newPayload([]byte(planPayloadJSON), payload.Options{})
	require.NoError(t, err)
	_, err = p.Plan([]string{"api"}, "5s")
	require.ErrorIs(t, err, rules.ErrPlan)
	assert.Contains(t, err.Error(), `image "reg/jobs:1" reaches no backend`)
}

// A plan's fields hold names and warnings printable, as its table does: a
// warning quotes a rule of the payload file, and dagger call prints a field
// as it is.
func TestAPlansFieldsArePrintable(t *testing.T) {
	p := newPlan(results.Plan{Warnings: []string{"rule 0 (source \"x\u202e\") matches no image"},
		Images:   []results.PlanImage{{Image: "reg.example.com/b:1", Backends: []string{"api\x1b[2J"}}},
		Backends: []results.PlanBackend{{Name: "api\x1b[2J", Images: []string{"reg.example.com/b:1"}}}}, "")
	assert.Equal(t, []string{`rule 0 (source "x\u202e") matches no image`}, p.Warnings)
	assert.Equal(t, `api\x1b[2J`, p.Backends[0].Name)
	assert.Equal(t, []string{`api\x1b[2J`}, p.Images[0].Backends)
}
