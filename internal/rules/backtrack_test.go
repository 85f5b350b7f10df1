package rules

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Patterns whose matching a backtracking engine such as Node's V8 can make
// last without end are refused, each with the part and a way to write it.
func TestCompileRefusesPatternsThatBacktrackWithoutEnd(t *testing.T) {
	const nested, overlap, alts = "a repetition inside a repetition", "its alternatives or parts overlap", "two of its alternatives can begin with the same character"
	for _, tc := range []struct{ pattern, part, want string }{
		{`(a+)+`, `"(a+)+"`, nested},
		{`^(a+)+$`, `"(a+)+"`, nested},
		{`(a*)*`, `"(a*)*"`, nested},
		{`(?:a|b+)*`, `"(?:a|b+)*"`, nested},
		{`(?:a?a?)+b`, `"(?:a?a?)+"`, nested},
		{`^(?:[a-z]{1,3})+$`, `"(?:[a-z]{1,3})+"`, nested},
		{`[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*`, `"(?:(?:[._]|__|[-]*)[a-z0-9]+)*"`, nested},
		{`(x+x+)+y`, `"(x+x+)+"`, overlap},
		{`^(?:\w+\d)+$`, `"(?:\\w+\\d)+"`, overlap},
		{`(a|a)*`, `"(a|a)*"`, alts},
		{`(a|ab)*`, `"(a|ab)*"`, alts},
		{`(\w|\d)+`, `"(\\w|\\d)+"`, alts},
		{`(?i:(k|K)+)`, `"(k|K)+"`, alts},
		{`(?=(a+)+b)`, `"(a+)+"`, nested},
		{`(a)(?:x\1)+`, `"(?:x\\1)+"`, "a back-reference in a repeated part"},
		{`^.*-.*-.*-.*$`, `".*", ".*", ".*", ".*"`, "to the power 4 of the text's length"},
		{`a.*b.*c.*d`, `the search for a start at each place (no leading ^), ".*", ".*", ".*"`, "to the power 4"},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			_, err := Compile(tc.pattern)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.part)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// What deploy rules are made of passes: anchors, classes, .*, repeated
// classes, alternations of names, path segments that end with their /.
func TestCompileAcceptsOrdinaryRules(t *testing.T) {
	for _, p := range []string{
		`.*`, `^(?!backend-a$).*`, `[a-z0-9-]+`, `(frontend|backend)`, `^registry\.example\.com/.+:v\d+$`,
		`^registry\.example\.com/(?:[a-z0-9-]+/)*app:v\d+$`, `.*foo.*bar.*`, `registry/app-.*:.*`, `^a.*b.*c.*d`,
		`@sha256:[0-9a-f]{64}$`, `(?:\d{1,3}\.){3}\d{1,3}`, `^(a|b)*$`, `(?:a|)*b`, `^\d+\.\d+\.\d+$`, `^[a-z]+(-[a-z]+)*$`,
		`(?<=/)(api|jobs):`, `^(?<name>[a-z]+)-\k<name>?`, `(?i:[a-z0-9-]+)`, `^(?:v|release-)\d+(?:\.\d+)*$`,
	} {
		_, err := Compile(p)
		assert.NoError(t, err, p)
	}
}

// The check counts its own steps rather than time: a long pattern is
// judged, or refused as too complex, in a bounded number of them.
func TestTheCheckIsQuickOnLongPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		ok      bool
	}{
		{strings.Repeat(".*x", 1365), false},
		{strings.Repeat("(?:a|b)*", 512), false},
		{"^" + strings.Repeat("a?", 2047), false},
		{strings.Repeat("(a)", 1365), true},
		{strings.Repeat(`[a-z]+/`, 50), true},
		{`^` + strings.Repeat(`(?:v|release-)\d+\.`, 100), true},
	} {
		start := time.Now()
		tr, err := read(tc.pattern)
		require.NoError(t, err)
		err = checkBacktracking(tr.src, tr.root)
		assert.Equal(t, tc.ok, err == nil, "%.40s…: %v", tc.pattern, err)
		assert.Less(t, time.Since(start), 5*time.Second, "%.40s…", tc.pattern)
	}
}

// A plan of 10,000 images and 1,000 ordinary anchored rules ends well
// within the default limit, even with the machine's cores busy twice over:
// the limit is a backstop that a slow machine does not reach.
func TestALargePlanEndsWithinTheDefaultLimitOnABusyMachine(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("a large plan, timed: not under -short or -race")
	}
	in := benchInput(10_000, 1_000, 100, `^registry\.example\.com/team/svc-%d:\d+\.\d+\.\d+$`)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := 0; !stop.Load(); x++ {
			}
		}()
	}
	start := time.Now()
	plan, err := Build(in)
	elapsed := time.Since(start)
	stop.Store(true)
	wg.Wait()
	require.NoError(t, err)
	assert.Len(t, plan.Images, 10_000)
	assert.Less(t, elapsed, DefaultPlanTimeout, "the default limit failed a correct plan: it took %s", elapsed)
	t.Logf("10,000 images × 1,000 rules on a busy machine: %s", elapsed)
}

// The backstop's error names the limit and the plan's size, and blames the
// machine or the plan, not a rule.
func TestThePlansTimeLimitSaysItIsTheTime(t *testing.T) {
	in := benchInput(2_000, 200, 10, `^registry\.example\.com/team/svc-%d:\d+\.\d+\.\d+$`)
	in.PlanTimeout = time.Microsecond
	_, err := Build(in)
	require.Error(t, err)
	assert.Regexp(t, `^the plan ran past its time limit \(--plan-timeout 1µs\) with \d+ of its 2000 images matched against its 200 rules: the machine was slower or the plan larger than the limit allows`, err.Error())
	assert.NotContains(t, err.Error(), "simplify")
}

// The checks are deterministic: the same pattern gets the same verdict, from
// a fresh read or from the kept translation, and never panics.
func FuzzBacktrackingCheckIsStable(f *testing.F) {
	for _, s := range []string{`(a+)+`, `(a|ab)*`, `^(?:[a-z0-9-]+/)*x$`, `.*a.*b.*c.*d`, `(?=(a|a)*)`, `(a)\1*`, `(?i:(?:x|[a])+)`, `[^]*(?:.|\n)*`, `^(?:(a)|b)+\1$`, `[(](?<n>x)[]](a)\2`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		if len([]rune(pattern)) > MaxPatternLength {
			return
		}
		tr, err := read(pattern)
		if err != nil {
			return
		}
		first := fmt.Sprint(checkBacktracking(tr.src, tr.root), checkRepeatedCaptures(tr.src, tr.root))
		again, err := read(pattern)
		require.NoError(t, err)
		assert.Equal(t, first, fmt.Sprint(checkBacktracking(again.src, again.root), checkRepeatedCaptures(again.src, again.root)), pattern)
		// the groups the shape numbers are those \N counts
		assert.Equal(t, tr.captures, tr.opened, pattern)
	})
}
