package rules

import (
	"testing"

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
		re, err := Compile(tc.pattern)
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
		re, err := Compile(pattern)
		if err != nil {
			return
		}
		want := Match(re, s)
		got, err := newMatcher(pattern, re).match(newSubject(s), 0)
		require.NoError(t, err)
		assert.Equal(t, want, got, "pattern %q on %q", pattern, s)
	})
}
