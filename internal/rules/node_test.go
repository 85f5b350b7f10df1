package rules

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nodeVerdicts is testdata/node-verdicts.json: Node 24's own answers.
type nodeVerdicts struct {
	Node   string   `json:"node"`
	Inputs []string `json:"inputs"`
	// Canonical is ECMAScript's Canonicalize without the u flag, as Node's
	// toUpperCase gives it: [unit, canonical unit] for each unit it changes.
	Canonical [][2]rune `json:"canonical"`
	Cases     []struct {
		Pattern string `json:"pattern"`
		Valid   bool   `json:"valid"`
		Matches string `json:"matches"` // "0" or "1" per input
	} `json:"cases"`
}

// Every pattern is accepted or refused as Node 24 does, and every accepted
// one matches each input as RegExp.prototype.test does there.
//
// One kind of verdict is V8's, not ECMAScript's, and the module keeps the
// standard's: in a (?i:…) part (ES2025 modifiers; the i flag does it right),
// V8 never matches a pattern unit above U+00FF against a subject whose
// units all are U+00FF or below, so µ is not μ there, nor ÿ Ÿ, although
// Canonicalize makes them equal (and "µ€" does match). Only image references
// (ASCII, and µ and ÿ are not) and backend names are matched here.
//
// And some patterns Node accepts are refused, each for a reason that says
// why: where V8 reads them otherwise than the standard, or regexp2 does
// (refusedAsV8Departs).
func TestRulesAgreeWithNode(t *testing.T) {
	golden := readNodeVerdicts(t)
	var diffs []string
	refused := map[string]error{}
	for _, c := range golden.Cases {
		re, err := Compile(c.Pattern)
		if err != nil && c.Valid {
			if _, ok := refusedAsV8Departs[c.Pattern]; ok {
				refused[c.Pattern] = err
				continue
			}
		}
		if (err == nil) != c.Valid {
			diffs = append(diffs, fmt.Sprintf("%q: Node says valid=%v, here %v", c.Pattern, c.Valid, err))
			continue
		}
		if err != nil {
			continue
		}
		require.Len(t, c.Matches, len(golden.Inputs), c.Pattern)
		for i, in := range golden.Inputs {
			got := Match(re, in)
			want := c.Matches[i] == '1'
			switch {
			case got == want:
			default:
				diffs = append(diffs, fmt.Sprintf("%q on %q: Node %v, here %v", c.Pattern, in, want, got))
			}
		}
	}
	for pattern, why := range refusedAsV8Departs {
		err, ok := refused[pattern]
		if assert.True(t, ok, "%q: in the corpus, accepted by Node and refused here", pattern) {
			assert.ErrorContains(t, err, why, pattern)
		}
	}
	cases := len(golden.Cases) * len(golden.Inputs)
	if len(diffs) > 0 {
		t.Errorf("%d of %d verdicts differ from Node:\n%s", len(diffs), cases, strings.Join(diffs[:min(len(diffs), 80)], "\n"))
	}
	t.Logf("%d patterns × %d inputs agree with %s", len(golden.Cases), len(golden.Inputs), golden.Node)
}

// refusedAsV8Departs are the corpus's patterns Node 24 accepts and the
// module refuses, with why: V8 departs from ECMAScript on each, but for the
// last ones, which regexp2 reads otherwise than ECMAScript.
var refusedAsV8Departs = map[string]string{
	// V8 matches these units past Latin-1 against no text of Latin-1
	// characters alone in a (?i:…) part, though µ and ÿ are their case
	// variants (v8OneByteFolds; round-22 probe F1)
	`^(?i:[\u0100-\u017f])$`: "Node's V8 does not match them in a text of Latin-1 characters alone",
	`^(?i:μ)$`:               "Node's V8 does not match them in a text of Latin-1 characters alone",
	`^(?i:[μ])$`:             "Node's V8 does not match them in a text of Latin-1 characters alone",
	`^(?i:[^μ])$`:            "Node's V8 does not match them in a text of Latin-1 characters alone",
	`^(?i:Μ)$`:               "Node's V8 does not match them in a text of Latin-1 characters alone",
	`^(?i:[Μ])$`:             "Node's V8 does not match them in a text of Latin-1 characters alone",
	`^(?i:[^Μ])$`:            "Node's V8 does not match them in a text of Latin-1 characters alone",
	`^(?i:Ÿ)$`:               "Node's V8 does not match them in a text of Latin-1 characters alone",
	`^(?i:[Ÿ])$`:             "Node's V8 does not match them in a text of Latin-1 characters alone",
	`^(?i:[^Ÿ])$`:            "Node's V8 does not match them in a text of Latin-1 characters alone",
	// regexp2, not V8, departs here: it folds a back-reference's case by
	// Go's unicode.ToLower, not by Canonicalize (the Kelvin sign, ß, ς, µ)
	`(?i:(a)\1)`:          errCaseBackref.Error(),
	`(?i:(?<n>a)\k<n>)`:   errCaseBackref.Error(),
	`^(?i:(?<n>a)(b)\1)$`: errCaseBackref.Error(),
	// A group and one inside it share a name: the standard refuses it
	// (both may take part in one match), V8 accepts it when the inner one
	// is in an alternative of the outer.
	`(?<a>(?<a>x)|)`:   `duplicate group name "a"`,
	`(?<a>(?<a>x)|y)`:  `duplicate group name "a"`,
	`(?<a>y|(?<a>x)|)`: `duplicate group name "a"`,
	// A class after a | in (?i:…): V8 matches it case-sensitively
	// ("(?i:x|[a])" does not find "A"); with the i flag it folds it.
	`(?i:x|[a])`:            errV8CaseClass.Error(),
	`(?i:api|[w]orker)`:     errV8CaseClass.Error(),
	`(?i:x|[^a])`:           errV8CaseClass.Error(),
	`(?i:x|[a-c])`:          errV8CaseClass.Error(),
	`(?i:(?:x|[a]))`:        errV8CaseClass.Error(),
	`^(?i:|[a])$`:           errV8CaseClass.Error(),
	`(?i:x|(?i:[a]))`:       errV8CaseClass.Error(),
	`(?i:y|[a]x)`:           errV8CaseClass.Error(),
	`(?i:(?<=x|[a])b)`:      errV8CaseClass.Error(),
	`(?i:(?!x|[a]))`:        errV8CaseClass.Error(),
	`^(?i:(?:x|[a]){1,2})$`: errV8CaseClass.Error(),
	`^(?i:(?:x|[a])+)$`:     errV8CaseClass.Error(), // V8 right here, by chance of how it walks a loop
	// V8 folds a class as the last (?…:…) group it walked left it, and
	// after a | list's first alternative it has walked all that follows
	// the list: "(?i:x|(?m:a))|[k]" finds "K". One-character
	// alternatives are a class to V8.
	`(?i:x|(?-i:a))|[k]`:       errV8CaseCarried.Error(),
	`(?i:x|(?m:a))|[k]`:        errV8CaseCarried.Error(),
	`(?i:y|(?-i:x))|[a-c]`:     errV8CaseCarried.Error(),
	`(?i:[x]|a|K)`:             errV8CaseCarried.Error(),
	`(?i:[k]x|a|b)`:            errV8CaseCarried.Error(),
	`(?i:(?-i:[a]|[x])+)`:      errV8CaseCarried.Error(),
	`(?:[k])(?i:(?s:x)??)|[a]`: errV8CaseCarried.Error(),
	// Not V8's: \N names one of two groups that share a name, which
	// regexp2 holds as one group.
	`(?<a>x)|(?<a>y)|\1`: `a name the pattern gives more than one group`,
	// Not V8's: a back-reference to a group in a quantified part, whose
	// text JavaScript clears at each repetition and regexp2 keeps
	// (checkRepeatedCaptures).
	`^(?:(a)|b)+\1$`:           errCaptureReset.Error(),
	`^(?:(a)|b)*\1$`:           errCaptureReset.Error(),
	`^(?:(a)|b){2}\1$`:         errCaptureReset.Error(),
	`^(?:b|(a))+\1$`:           errCaptureReset.Error(),
	`^(?:(a)|(b))+\1\2$`:       errCaptureReset.Error(),
	`^(?:(a)b|b)+\1$`:          errCaptureReset.Error(),
	`^(?:(?<n>a)|b)+\k<n>$`:    errCaptureReset.Error(),
	`^((a)|b)+\2$`:             errCaptureReset.Error(),
	`^(?:(a)?b)+\1$`:           errCaptureReset.Error(),
	`^(?:(a)|b)+?\1$`:          errCaptureReset.Error(),
	`^(z)((a+)?(b+)?(c))*\4$`:  errCaptureReset.Error(),
	`^(z)((a+)?(b+)?(c))*\3c$`: errCaptureReset.Error(),
	`^r\.io/(?:(api)|b)+:1\1$`: errCaptureReset.Error(),
	`^(a?)?\1$`:                errCaptureReset.Error(),
	`^(?=(a))?a\1$`:            errCaptureReset.Error(),
	`^(?:(?=(a)))?a\1$`:        errCaptureReset.Error(),
	`^(?:(?!(a))b)+\1$`:        errCaptureReset.Error(),
	// and where a look-around keeps the first way its body matches, and
	// the loops in it stop apart
	`^(?=((?:b?|a)+))\1$`:  errCaptureReset.Error(),
	`^(?=(a)(?:b?|a)+)\1$`: errCaptureReset.Error(),
}

func readNodeVerdicts(t *testing.T) nodeVerdicts {
	t.Helper()
	data, err := os.ReadFile("testdata/node-verdicts.json")
	require.NoError(t, err)
	var golden nodeVerdicts
	require.NoError(t, json.Unmarshal(data, &golden))
	require.True(t, strings.HasPrefix(golden.Node, "v24."), "the verdicts come from Node 24, the platform's runtime")
	return golden
}

// Case-insensitive parts make two units equal exactly when Node's
// Canonicalize does, for every unit of the BMP, but where Go's Unicode
// tables are older than Node's: a letter those tables do not case.
func TestCaseFoldingAgreesWithNode(t *testing.T) {
	golden := readNodeVerdicts(t)
	require.NotEmpty(t, golden.Canonical)
	node := map[rune]rune{}
	for _, p := range golden.Canonical {
		node[p[0]] = p[1]
	}
	canon := func(u rune) rune {
		if c, ok := node[u]; ok {
			return c
		}
		return u
	}
	members := map[rune][]rune{}
	for u := rune(0); u <= 0xFFFF; u++ {
		members[canon(u)] = append(members[canon(u)], u)
	}
	var diffs, newer []string
	for u := rune(0); u <= 0xFFFF; u++ {
		want := members[canon(u)]
		got := folds().class[u]
		if got == nil {
			got = []rune{u}
		}
		if slices.Equal(want, got) {
			continue
		}
		line := fmt.Sprintf("U+%04X: Node %U, here %U", u, want, got)
		if olderTables(want, got) {
			newer = append(newer, line)
			continue
		}
		diffs = append(diffs, line)
	}
	assert.Empty(t, diffs, "units folded otherwise than by Node's Canonicalize")
	assert.Less(t, len(newer), 40, "letters Go's Unicode %s does not case: %s", unicode.Version, strings.Join(newer, "; "))
	t.Logf("%d units fold apart from Node only as Unicode %s lacks their case mappings: %s", len(newer), unicode.Version, strings.Join(newer, "; "))
}

// olderTables says whether the units Node and the module fold together
// differ only by letters whose case Go's Unicode tables do not know.
func olderTables(node, here []rune) bool {
	for _, u := range append(slices.Clone(node), here...) {
		if slices.Contains(node, u) != slices.Contains(here, u) && unicode.SimpleFold(u) != u {
			return false
		}
	}
	return true
}
