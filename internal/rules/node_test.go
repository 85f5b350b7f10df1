package rules

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// nodeVerdicts is testdata/node-verdicts.json: Node 24's own answers.
type nodeVerdicts struct {
	Node   string   `json:"node"`
	Inputs []string `json:"inputs"`
	Cases  []struct {
		Pattern string `json:"pattern"`
		Valid   bool   `json:"valid"`
		Matches string `json:"matches"` // "0" or "1" per input
	} `json:"cases"`
}

// Every pattern is accepted or refused as Node 24 does, and every accepted
// one matches each input as RegExp.prototype.test does there.
func TestRulesAgreeWithNode(t *testing.T) {
	data, err := os.ReadFile("testdata/node-verdicts.json")
	require.NoError(t, err)
	var golden nodeVerdicts
	require.NoError(t, json.Unmarshal(data, &golden))
	require.True(t, strings.HasPrefix(golden.Node, "v24."), "the verdicts come from Node 24, the platform's runtime")
	var diffs []string
	for _, c := range golden.Cases {
		re, err := Compile(c.Pattern, 0)
		if (err == nil) != c.Valid {
			diffs = append(diffs, fmt.Sprintf("%q: Node says valid=%v, here %v", c.Pattern, c.Valid, err))
			continue
		}
		if err != nil {
			continue
		}
		require.Len(t, c.Matches, len(golden.Inputs), c.Pattern)
		for i, in := range golden.Inputs {
			got, err := Match(re, in)
			if want := c.Matches[i] == '1'; err != nil || got != want {
				diffs = append(diffs, fmt.Sprintf("%q on %q: Node %v, here %v (%v)", c.Pattern, in, want, got, err))
			}
		}
	}
	cases := len(golden.Cases) * len(golden.Inputs)
	if len(diffs) > 0 {
		t.Errorf("%d of %d verdicts differ from Node:\n%s", len(diffs), cases, strings.Join(diffs[:min(len(diffs), 80)], "\n"))
	}
	t.Logf("%d patterns × %d inputs agree with %s", len(golden.Cases), len(golden.Inputs), golden.Node)
}
