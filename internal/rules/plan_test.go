package rules

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	imgA = "registry.example.com/team/app-a:1.0"
	imgB = "registry.example.com/team/app-b:1.0"
)

// routes flattens a plan to backend -> images for compact assertions.
func routes(p *Plan) map[string][]string {
	out := map[string][]string{}
	for _, a := range p.Backends {
		out[a.Backend] = a.Images
	}
	return out
}

func TestBuildPlans(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       Input
		want     map[string][]string
		errors   []string
		warnings []string
	}{
		{
			name: "a catch-all sends the image to every backend",
			in:   Input{Images: []string{imgA}, Rules: []Rule{{".*", ".*"}}, Backends: []string{"backend-a", "backend-b"}},
			want: map[string][]string{"backend-a": {imgA}, "backend-b": {imgA}},
		},
		{
			name: "one rule per code base",
			in: Input{Images: []string{imgA, imgB},
				Rules:    []Rule{{"app-a:", "^backend-a$"}, {"app-b:", "^backend-b$"}},
				Backends: []string{"backend-a", "backend-b"}},
			want: map[string][]string{"backend-a": {imgA}, "backend-b": {imgB}},
		},
		{
			name: "negative look-ahead sends one image to all backends but one",
			in: Input{Images: []string{imgA, imgB},
				Rules:    []Rule{{"app-a", "^backend-a$"}, {"app-b", "^(?!backend-a$).*"}},
				Backends: []string{"backend-a", "backend-b", "backend-c"}},
			want: map[string][]string{"backend-a": {imgA}, "backend-b": {imgB}, "backend-c": {imgB}},
		},
		{
			name: "an image matching several rules goes to the union of their targets",
			in: Input{Images: []string{imgA},
				Rules:    []Rule{{"app-a", "^backend-a$"}, {"team/", "^backend-b$"}},
				Backends: []string{"backend-a", "backend-b", "backend-c"}},
			want:     map[string][]string{"backend-a": {imgA}, "backend-b": {imgA}, "backend-c": {}},
			warnings: []string{`backend "backend-c" receives no image`},
		},
		{
			name: "a backend receiving two different images is a conflict",
			in: Input{Images: []string{imgA, imgB},
				Rules:    []Rule{{".*", ".*"}},
				Backends: []string{"backend-a"}},
			want:   map[string][]string{"backend-a": {imgA, imgB}},
			errors: []string{`backend "backend-a" would receive 2 different images`},
		},
		{
			name: "an image no rule's source matches is an error",
			in: Input{Images: []string{imgA, imgB},
				Rules:    []Rule{{"app-a", ".*"}},
				Backends: []string{"backend-a"}},
			want:   map[string][]string{"backend-a": {imgA}},
			errors: []string{`image "` + imgB + `" reaches no backend: no rule's source matches it`},
		},
		{
			name: "an image whose rules target no existing backend is an error",
			in: Input{Images: []string{imgA},
				Rules:    []Rule{{"app-a", "^backend-z$"}},
				Backends: []string{"backend-a"}},
			want:     map[string][]string{"backend-a": {}},
			errors:   []string{`image "` + imgA + `" reaches no backend: rules [0] match it but their targets match none of ["backend-a"]`},
			warnings: []string{`backend "backend-a" receives no image`},
		},
		{
			name: "a rule that matches no image is a warning",
			in: Input{Images: []string{imgA},
				Rules:    []Rule{{"app-a", ".*"}, {"app-zzz", ".*"}},
				Backends: []string{"backend-a"}},
			want:     map[string][]string{"backend-a": {imgA}},
			warnings: []string{`rule 1 (source "app-zzz") matches no image`},
		},
		{
			name: "an image listed twice is planned once",
			in:   Input{Images: []string{imgA, imgA}, Rules: []Rule{{".*", ".*"}}, Backends: []string{"backend-a"}},
			want: map[string][]string{"backend-a": {imgA}},
		},
		{
			name:     "no images leave every backend empty",
			in:       Input{Images: []string{}, Rules: []Rule{{".*", ".*"}}, Backends: []string{"backend-a"}},
			want:     map[string][]string{"backend-a": {}},
			warnings: []string{`backend "backend-a" receives no image`, `rule 0 (source ".*") matches no image`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, routes(p))
			assertLines(t, tc.errors, p.Errors)
			assertLines(t, tc.warnings, p.Warnings)
			assert.Equal(t, len(tc.errors) == 0, p.OK())
		})
	}
}

// assertLines checks that got has one line per wanted prefix, in order.
func assertLines(t *testing.T, want, got []string) {
	t.Helper()
	require.Len(t, got, len(want), "got %q", got)
	for i := range want {
		assert.True(t, strings.HasPrefix(got[i], want[i]), "line %d: %q does not start with %q", i, got[i], want[i])
	}
}

func TestBuildRecordsWhichRulesRouteEachImage(t *testing.T) {
	p, err := Build(Input{Images: []string{imgA}, Rules: []Rule{{"app-b", ".*"}, {"app-a", "a$"}, {"team", "-a"}}, Backends: []string{"backend-a", "backend-b"}})
	require.NoError(t, err)
	require.Len(t, p.Images, 1)
	assert.Equal(t, []int{1, 2}, p.Images[0].Rules)
	assert.Equal(t, []string{"backend-a"}, p.Images[0].Backends)
	assert.Equal(t, []int{1, 2}, p.Backends[0].Rules)
}

func TestBuildRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Input
		want string
	}{
		{"no backend names", Input{Rules: []Rule{{".*", ".*"}}}, "no backend names given"},
		{"an empty backend name", Input{Backends: []string{"a", ""}}, "backends[1]: empty backend name"},
		{"a backend listed twice", Input{Backends: []string{"a", "a"}}, `backends[1]: backend "a" is listed twice`},
		// round-15 probe F2: the plan shows each name
		{"a backend of white space", Input{Backends: []string{"a", "\t"}}, `backends[1]: backend "\t" is white space alone: write the backend's name`},
		{"a backend holding a login", Input{Backends: []string{"https://ci:Pa55wordSecretXY@deploy.example.com", "b"}},
			`backends[0]: backend "…@deploy.example.com" holds a login (user:password@host), which the plan shows: write the backend's name`},
		{"a pattern that is not JavaScript", Input{Backends: []string{"a"}, Rules: []Rule{{".*", "(?i)A"}}}, "backends.deployRules[0].target: invalid regular expression"},
		{"a source that could backtrack without end", Input{Backends: []string{"a"}, Rules: []Rule{{".*", ".*"}, {"^(a+)+$", ".*"}}},
			`backends.deployRules[1].source: invalid regular expression "^(a+)+$": at offset 1: the repeated part "(a+)+"`},
		{"a target that could backtrack without end", Input{Backends: []string{"a"}, Rules: []Rule{{".*", "^(a|ab)*$"}}},
			`backends.deployRules[0].target: invalid regular expression "^(a|ab)*$": at offset 1: the repeated part "(a|ab)*"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestPlanRendersAsJSONAndTable(t *testing.T) {
	p, err := Build(Input{Images: []string{imgA, imgB}, Rules: []Rule{{"app-a", "^backend-a$"}}, Backends: []string{"backend-a", "backend-b"}})
	require.NoError(t, err)

	data, err := json.Marshal(p)
	require.NoError(t, err)
	var back Plan
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, *p, back)
	assert.Contains(t, string(data), `"backend":"backend-a","images":["`+imgA+`"],"rules":[0]`)

	table := p.Table()
	assert.Regexp(t, `(?m)^backend-a\s+`+regexpQuote(imgA)+`\s+0$`, table)
	assert.Regexp(t, `(?m)^backend-b\s+-\s+-$`, table)
	assert.Regexp(t, `(?m)^-\s+`+regexpQuote(imgB)+`\s+-$`, table)
	assert.Contains(t, table, "errors:\n  - image \""+imgB)
	assert.Contains(t, table, "warnings:\n  - backend \"backend-b\" receives no image")
}

func regexpQuote(s string) string {
	return strings.NewReplacer(".", `\.`, "/", `/`).Replace(s)
}

// BenchmarkPlan measures the images × rules matching that dominates a large
// plan: 10 000 images against 1 000 rules and 100 backends.
// benchInput is images × rules × backends, the rules' sources written with
// source (a format taking the service number).
func benchInput(images, rules, backends int, source string) Input {
	in := Input{}
	for i := range images {
		in.Images = append(in.Images, fmt.Sprintf("registry.example.com/team/svc-%d:1.%d.0", i%rules, i))
	}
	for i := range rules {
		in.Rules = append(in.Rules, Rule{Source: fmt.Sprintf(source, i), Target: fmt.Sprintf(`^backend-%d$`, i%backends)})
	}
	for i := range backends {
		in.Backends = append(in.Backends, fmt.Sprintf("backend-%d", i))
	}
	return in
}

func benchmarkPlan(b *testing.B, in Input) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(in); err != nil {
			b.Fatal(err)
		}
	}
}

// 10 000 images × 1 000 literal rules: the README's figure.
func BenchmarkPlan(b *testing.B) { benchmarkPlan(b, benchInput(10_000, 1_000, 100, `/svc-%d:`)) }

// 1 000 images × 100 rules that need the engine.
func BenchmarkPlanRegex(b *testing.B) { benchmarkPlan(b, benchInput(1_000, 100, 100, `/svc-%d:\d+\.`)) }

func TestAPlanErrorListsAtMostFiftyProblems(t *testing.T) {
	in := Input{Backends: []string{"api"}, Rules: []Rule{{Source: "^nothing$", Target: ".*"}}}
	for i := range 10_000 {
		in.Images = append(in.Images, fmt.Sprintf("registry.example.com/%s/svc:%d", strings.Repeat("p", 200), i))
	}
	plan, err := Build(in)
	require.NoError(t, err)
	require.Len(t, plan.Errors, 10_000)
	summary := plan.ErrorSummary()
	assert.Equal(t, 51, strings.Count(summary, "\n")+1)
	assert.Contains(t, summary, "… and 9950 more")
	assert.Less(t, len(summary), 20_000)
}
