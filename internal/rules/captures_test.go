package rules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Round-4 probe R1 (#65): JavaScript clears a quantified part's groups at
// each repetition and drops a repetition that takes no text; regexp2 keeps
// both, so a back-reference after such a group read otherwise than Node,
// both ways (`^(?:(a)|b)+\1$`: Node finds "ab", not "aba"). Such a
// back-reference is refused, naming it, its group and the part.
func TestCapturesOfAQuantifiedGroupAreResetAsNodeResetsThem(t *testing.T) {
	for _, tc := range []struct{ name, pattern, want string }{
		{"a group a repetition may skip", `^(?:(a)|b)+\1$`, `back-reference "\\1" to the group "(a)" in the quantified part "(?:(a)|b)+"`},
		{"a named group and \\k", `^(?:(?<n>a)|b)+\k<n>$`, `back-reference "\\k<n>" to the group "(?<n>a)" in the quantified part "(?:(?<n>a)|b)+"`},
		{"a group of a group", `^((a)|b)+\2$`, `the group "(a)" in the quantified part "((a)|b)+"`},
		{"counted repetitions", `^(?:(a)|b){2}\1$`, `in the quantified part "(?:(a)|b){2}"`},
		{"a lazy repetition", `^(?:(a)|b)+?\1$`, `in the quantified part "(?:(a)|b)+?"`},
		{"an optional group in the repeated part", `^(?:(a)?b)+\1$`, `the group "(a)" in the quantified part "(?:(a)?b)+"`},
		{"the standard's own example", `^(z)((a+)?(b+)?(c))*\4$`, `the group "(b+)" in the quantified part "((a+)?(b+)?(c))*"`},
		{"as a deploy rule writes it", `^r\.io/(?:(api)|b)+:1\1$`, `the group "(api)" in the quantified part "(?:(api)|b)+"`},
		{"a ? part that can take no text", `^(a?)?\1$`, `the group "(a?)" in the quantified part "(a?)?"`},
		{"a quantified look-ahead", `^(?=(a))?a\1$`, `the group "(a)" in the quantified part "(?=(a))?"`},
		{"a group in a look-around whose loop may take no text", `^(?=((?:b?|a)+))\1$`, `the group "((?:b?|a)+)" in a look-around whose quantified part "(?:b?|a)+" can repeat on no text`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.pattern)
			require.ErrorIs(t, err, errCaptureReset)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("a group that may take no text repeated is refused as backtracking", func(t *testing.T) {
		_, err := Compile(`^(a*)+\1$`) // Node: false on "a", regexp2 true
		require.Error(t, err)
	})
}

// Groups whose text JavaScript and regexp2 agree on stay accepted and match
// as Node 24 does (the verdicts are Node's): a group every repetition sets,
// a ? part that takes text, the rewrite the refusal suggests, no
// back-reference at all, and captures in look-arounds.
func TestGroupsBothEnginesReadAlikeAreAccepted(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		node    map[string]bool
	}{
		{`^((a)|b)+\1$`, map[string]bool{"ab": false, "aba": false, "abb": true, "bab": false, "bb": true}},
		{`^(?:([a-z]+)-)+\1$`, map[string]bool{"ab-cd-cd": true, "ab-cd-ab": false, "ab-ab": true}},
		{`^(a)?\1$`, map[string]bool{"": true, "a": false, "aa": true}},
		{`^(?:a|b)*(a)\1$`, map[string]bool{"aa": true, "baa": true, "ab": false, "aba": false}},
		{`^(?:(a)|b)+$`, map[string]bool{"ab": true, "aba": true}},
		{`(?=(a+))a*b\1`, map[string]bool{"aaab": false, "aaaba": true, "aaabaaa": true}},
		{`(?<=(a+))b\1`, map[string]bool{"aab": false, "aaba": false, "aabaa": true}},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			re, err := Compile(tc.pattern)
			require.NoError(t, err)
			for in, want := range tc.node {
				assert.Equal(t, want, Match(re, in), "on %q", in)
			}
		})
	}
}

// An error names at most three parts of the pattern, each cut short.
func TestACaptureRefusalIsShortForALongPattern(t *testing.T) {
	long := strings.Repeat("\x01", 500)
	_, err := Compile(`^(?:(` + long + `)|b` + long + `)+\1$`)
	require.ErrorIs(t, err, errCaptureReset)
	assert.Less(t, len(err.Error()), 600)
}
