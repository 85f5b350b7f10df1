package rules

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLiteralPatternsAreTestedWithoutTheEngine(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		kind    literalKind
	}{
		{"", always}, {".*", always}, {"^", always},
		{"/svc-1:", contains}, {"^backend-1$", equal}, {"^registry.example", notLiteral},
		{"^api", prefix}, {"api$", suffix}, {`api\$`, notLiteral}, {"a|b", notLiteral}, {"^$", equal},
		{"a{2}", notLiteral}, {"(?!x)", notLiteral}, {".+", notLiteral}, {"^.*$", notLiteral},
	} {
		re, err := Compile(tc.pattern, 0)
		require.NoError(t, err, tc.pattern)
		assert.Equal(t, tc.kind, newMatcher(tc.pattern, re).kind, "%q", tc.pattern)
	}
}

// Whatever way a pattern is tested, the answer is the engine's.
func FuzzMatcherAgreesWithTheEngine(f *testing.F) {
	for _, s := range [][2]string{{"^api$", "api"}, {"svc-1:", "r/svc-1:2"}, {"^a", "ba"}, {"b$", "ab\n"}, {"", "x"}, {".*", "\n"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		re, err := Compile(pattern, time.Second)
		if err != nil {
			return
		}
		want, err := Match(re, s)
		if err != nil {
			return
		}
		got, err := newMatcher(pattern, re).match(newSubject(s), 0)
		if errors.Is(err, errTimeLimit) {
			// a wall-clock limit: a loaded machine can stop this match where
			// it let the engine's finish (a literal matcher never stops, and
			// one that stops runs the engine itself: nothing to compare)
			t.Skip("the match ran past its time limit on this machine")
		}
		require.NoError(t, err)
		assert.Equal(t, want, got, "pattern %q on %q", pattern, s)
	})
}

func TestAPlanHasATimeLimitThatNamesTheSlowestRule(t *testing.T) {
	in := Input{Backends: []string{"api"}, MatchTimeout: 5 * time.Second, PlanTimeout: 100 * time.Millisecond,
		Rules: []Rule{{Source: "x!", Target: ".*"}, {Source: `^(x+x+)+y`, Target: ".*"}}}
	for i := range 50 {
		in.Images = append(in.Images, fmt.Sprintf("%s!%d", strings.Repeat("x", 20), i))
	}
	start := time.Now()
	_, err := Build(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the plan ran past its time limit (--plan-timeout 100ms): the slowest rule is backends.deployRules[1].source \"^(x+x+)+y\"")
	assert.Less(t, time.Since(start), 5*time.Second, "it stops soon after the limit")
}

func TestAMatchStopsWhenThePlansTimeRunsOut(t *testing.T) {
	in := Input{Backends: []string{"api"}, PlanTimeout: 50 * time.Millisecond, MatchTimeout: 3 * time.Second,
		Rules: []Rule{{Source: `^(x+x+)+y`, Target: ".*"}}}
	for i := range 8 {
		in.Images = append(in.Images, fmt.Sprintf("%s!%d", strings.Repeat("x", 40), i))
	}
	start := time.Now()
	_, err := Build(in)
	elapsed := time.Since(start)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the plan ran past its time limit (--plan-timeout 50ms): the slowest rule is backends.deployRules[0].source")
	// regexp2 stops a match one to two ticks of its 100 ms clock past its
	// limit, about 250 ms here; a match that ran its own 3 s would take 3 s
	// at least. The margin is wide so that a loaded CI machine cannot fail it.
	assert.Less(t, elapsed, 1500*time.Millisecond, "no match outlives the plan by more than regexp2's clock")
}
