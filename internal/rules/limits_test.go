//go:build linux || darwin || freebsd || openbsd

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

// oversubscribe leaves the test one core, shared with spinners goroutines
// that never wait, as on a runner given more work than it has cores: each
// slice of 10 ms a goroutine gets is followed by a wait of about spinners
// slices, and the wall clock runs that many times faster than the CPU time
// the test's own goroutines get.
func oversubscribe(t *testing.T, spinners int) {
	t.Helper()
	prev := runtime.GOMAXPROCS(1)
	var stop atomic.Bool
	var started atomic.Int64
	var wg sync.WaitGroup
	for range spinners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Add(1)
			for n := 0; !stop.Load(); n++ {
			}
		}()
	}
	for started.Load() < int64(spinners) {
		runtime.Gosched() // the test goes on behind them all
	}
	t.Cleanup(func() {
		stop.Store(true)
		wg.Wait()
		runtime.GOMAXPROCS(prev)
	})
}

// ordinary is a correct plan of n images, n anchored rules that need the
// engine and n backends, each image to its own backend: n×n pairs of well
// under a microsecond each.
func ordinary(n int) Input {
	in := Input{}
	for i := range n {
		in.Images = append(in.Images, fmt.Sprintf("registry.example.com/team/svc-%d:1.%d.0", i, i))
		in.Rules = append(in.Rules, Rule{Source: fmt.Sprintf(`^registry\.example\.com/team/svc-%d:`, i), Target: fmt.Sprintf(`^backend-%d$`, i)})
		in.Backends = append(in.Backends, fmt.Sprintf("backend-%d", i))
	}
	return in
}

// The limits count the CPU time the matching uses: a correct plan passes on
// a machine busier than its cores, with limits it would exceed many times
// over on the wall clock.
func TestACorrectPlanPassesOnAnOversubscribedMachine(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spinners int
		in       Input
	}{
		{"a large plan, with a plan limit below its CPU time and far below its wall time", 10,
			withLimits(ordinary(800), 5*time.Millisecond, 20*time.Millisecond)},
		{"slow but finite matches, each within its match limit in CPU time, not on the wall clock", 40,
			withLimits(slow(5, 120), 100*time.Millisecond, time.Hour)},
		{"a slow but finite match, within the plan's limit in CPU time, not on the wall clock", 20,
			withLimits(slow(1, 200), 2*time.Second, 400*time.Millisecond)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oversubscribe(t, tc.spinners)
			start := time.Now()
			plan, err := Build(tc.in)
			require.NoError(t, err)
			assert.True(t, plan.OK(), plan.ErrorSummary())
			t.Logf("%d images × %d rules in %s on the wall clock", len(tc.in.Images), len(tc.in.Rules), time.Since(start).Round(time.Millisecond))
		})
	}
}

// A pattern that backtracks without end is stopped at its limit of CPU
// time, busy machine or not, by an error that names the rule.
func TestACatastrophicPatternIsStoppedOnAnOversubscribedMachine(t *testing.T) {
	oversubscribe(t, 20)
	in := withLimits(Input{Images: []string{strings.Repeat("a", 40) + "b"}, Backends: []string{"api"},
		Rules: []Rule{{Source: "/api:", Target: ".*"}, {Source: `(a+)+$`, Target: ".*"}}}, 50*time.Millisecond, 0)
	start := time.Now()
	_, err := Build(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `backends.deployRules[1].source: pattern "(a+)+$" against "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab" ran past its time limit (50ms of CPU time): simplify the pattern`)
	// given a core a twenty-first of the time, 50 ms of CPU time take about
	// a second, and the tries that found the machine busy as much again
	assert.Less(t, time.Since(start), 30*time.Second, "stopped, however busy the machine")
}

// slow is a correct plan of n images of about length characters whose
// first rule, .*.*=.*, takes a cubic number of steps on each (milliseconds:
// no = to find), and one rule for each that sends it to its own backend.
func slow(n, length int) Input {
	in := Input{Rules: []Rule{{Source: `.*.*=.*`, Target: ".*"}}}
	for i := range n {
		in.Images = append(in.Images, fmt.Sprintf("%s/api-%d:1", strings.Repeat("r", length), i))
		in.Rules = append(in.Rules, Rule{Source: fmt.Sprintf("/api-%d:", i), Target: fmt.Sprintf("^api-%d$", i)})
		in.Backends = append(in.Backends, fmt.Sprintf("api-%d", i))
	}
	return in
}

func withLimits(in Input, match, plan time.Duration) Input {
	in.MatchTimeout, in.PlanTimeout = match, plan
	return in
}

// A plan's limit stops rules that are slow on every pair, with their
// allowance spent, naming the slowest.
func TestAPlanOfRulesSlowOnEveryPairIsStopped(t *testing.T) {
	in := Input{Backends: []string{"api"}, PlanTimeout: 50 * time.Millisecond,
		Rules: []Rule{{Source: "/api:", Target: ".*"}, {Source: `.*.*=.*`, Target: ".*"}}}
	for i := range 200 {
		in.Images = append(in.Images, fmt.Sprintf("%s:%d", strings.Repeat("registry.example.com/team/api", 4), i))
	}
	_, err := Build(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `the slowest rule is backends.deployRules[1].source ".*.*=.*"`)
}

func TestTheThreadClockCountsOnlyThisThreadsWork(t *testing.T) {
	oversubscribe(t, 4)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, cpu := time.Now(), threadCPU()
	for time.Since(start) < 200*time.Millisecond {
	}
	used := threadCPU() - cpu
	assert.Less(t, used, 120*time.Millisecond, "a fifth of the core, not the whole wall-clock time")
	assert.Positive(t, used)
}
