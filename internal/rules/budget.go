package rules

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// The limits on matching count CPU time, not the wall clock's: on a runner
// busier than its cores a trivial match can wait a second for a core, and
// that wait says nothing of its pattern. A pattern that backtracks without
// end uses the CPU time it is given, and is stopped after its limit of it,
// however busy the machine.

// DefaultPlanTimeout bounds the CPU time of a plan's matching, on top of
// PairAllowance for each pair it tests.
const DefaultPlanTimeout = 5 * time.Second

// PairAllowance is the CPU time a plan may take for each image–rule and
// rule–backend pair it tests, on top of its limit: about 300 times what an
// anchored rule takes on a 2-core runner and 40 times a case-insensitive
// one, so that a plan of ordinary rules, however many (a 1 MiB payload
// bounds them), never reaches its limit, while rules that average more are
// stopped.
const PairAllowance = 100 * time.Microsecond

// budget is a plan's limit on the CPU time of its matching.
type budget struct {
	limit time.Duration
	rules []CompiledRule
	cpu   atomic.Int64 // nanoseconds the matching goroutines used, as last read
	pairs atomic.Int64 // pairs tested, as last counted
}

func newBudget(limit time.Duration, rules []CompiledRule) *budget {
	if limit <= 0 {
		limit = DefaultPlanTimeout
	}
	return &budget{limit: limit, rules: rules}
}

// allowed is the plan's limit with the allowance of the pairs tested so far.
func (b *budget) allowed() time.Duration {
	return b.limit + time.Duration(b.pairs.Load())*PairAllowance
}

// left is the CPU time the plan has left, at least a nanosecond.
func (b *budget) left() time.Duration {
	return max(b.allowed()-time.Duration(b.cpu.Load()), time.Nanosecond)
}

// meterPeriod is how often, on the wall clock, a matching goroutine reads
// its thread's CPU clock: a system call, too slow for every match.
const meterPeriod = 10 * time.Millisecond

// meter counts the CPU time of one goroutine that matches for a plan. It
// holds the goroutine to its thread until done, so that the thread's CPU
// clock is the goroutine's.
type meter struct {
	b     *budget
	cpu   time.Duration // the thread's CPU clock at the last reading
	at    time.Time     // when that was
	pairs int64         // pairs tested since
}

func (b *budget) meter() *meter {
	runtime.LockOSThread()
	return &meter{b: b, cpu: threadCPU(), at: time.Now()}
}

// tested counts a pair, by the engine or not, and every meterPeriod adds
// what the thread used to the plan's: then the plan's error if it is past
// its limit.
func (m *meter) tested(engine bool) error {
	m.pairs++
	if !engine && m.pairs%64 != 0 || time.Since(m.at) < meterPeriod {
		return nil // a literal test takes nanoseconds: the clock is read every 64
	}
	return m.read()
}

// read adds the thread's CPU time and pairs since the last reading to the
// plan's, and says whether the plan is past its limit.
func (m *meter) read() error {
	now := threadCPU()
	m.b.cpu.Add(int64(now - m.cpu))
	m.b.pairs.Add(m.pairs)
	m.cpu, m.at, m.pairs = now, time.Now(), 0
	if time.Duration(m.b.cpu.Load()) > m.b.allowed() {
		return m.b.exceeded()
	}
	return nil
}

// failed is the error of a match at path: the plan's own when the match
// ran out of the plan's time.
func (m *meter) failed(err error, path string) error {
	if errors.Is(err, errPastPlan) {
		_ = m.read()
		return m.b.exceeded()
	}
	return fmt.Errorf("%s: %w", path, err)
}

// done counts the rest and lets the goroutine leave its thread.
func (m *meter) done() {
	_ = m.read() // the matching is over: what it used is only counted
	runtime.UnlockOSThread()
}

// exceeded is the plan's time-limit error, naming the rule the matching
// spent most time in.
func (b *budget) exceeded() error {
	slowest, which, spent := 0, "source", time.Duration(0)
	for k, r := range b.rules {
		for _, side := range []struct {
			name string
			m    *matcher
		}{{"source", r.source}, {"target", r.target}} {
			if d := time.Duration(side.m.spent.Load()); d > spent {
				slowest, which, spent = k, side.name, d
			}
		}
	}
	pattern := b.rules[slowest].Source
	if which == "target" {
		pattern = b.rules[slowest].Target
	}
	return fmt.Errorf("the plan ran past its time limit: its matching used %s of CPU time, more than --plan-timeout %s plus %s for each of the %d pairs it tested; the slowest rule is backends.deployRules[%d].%s %s, %s of matching: simplify it",
		time.Duration(b.cpu.Load()).Round(time.Millisecond), b.limit, PairAllowance, b.pairs.Load(), slowest, which, fielderr.Quote(pattern), spent.Round(time.Millisecond))
}

var clockStart = time.Now()

// wallClock is the monotonic clock's time since the package started.
func wallClock() time.Duration { return time.Since(clockStart) }
