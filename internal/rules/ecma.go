// Package rules evaluates deploy rules the way the platform does: each rule's
// source and target are JavaScript regular expressions, tested (unanchored)
// against image references and backend names.
package rules

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dlclark/regexp2"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// MaxPatternLength caps a deploy-rule pattern, in characters: real rules are
// a few dozen; a long one costs compiling time, not expressiveness.
const MaxPatternLength = 4096

// Compile reads pattern as JavaScript's `new RegExp(pattern)` does (no
// flags) and compiles the regexp2 pattern that matches the same UTF-16 code
// units (see translate). A pattern whose matching could take time without
// end is refused (backtrack.go), so no match needs a time limit of its own.
// The translation of a pattern is kept (a few thousand of them), so
// checking a payload and planning it compile each pattern once.
func Compile(pattern string) (*Pattern, error) {
	if n := utf8.RuneCountInString(pattern); n > MaxPatternLength {
		return nil, fmt.Errorf("%d characters: a pattern has at most %d", n, MaxPatternLength)
	}
	translated, err := translated(pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexp2.Compile(translated, regexp2.ECMAScript)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		if k := strings.LastIndex(msg, " in `"); k >= 0 {
			msg = msg[:k]
		}
		return nil, errors.New(msg)
	}
	p := &Pattern{source: pattern}
	p.engines.New = func() any {
		re, _ := regexp2.Compile(translated, regexp2.ECMAScript) // compiled once above: no error
		return re
	}
	p.engines.Put(re)
	return p, nil
}

// Pattern is a compiled deploy-rule pattern.
type Pattern struct {
	source string // as the rule wrote it
	// engines are compiled copies, one per concurrent match: the plan's
	// time left is set on its copy (regexp2 reads it from the Regexp).
	engines sync.Pool
}

// errPastPlan is a match stopped because the plan's time ran out.
var errPastPlan = errors.New("stopped by the plan's time limit")

// translations keeps the last patterns' translations.
var translations = struct {
	sync.Mutex
	m map[string]translation
}{m: map[string]translation{}}

type translation struct {
	text string
	err  error
}

const maxTranslations = 4096

func translated(pattern string) (string, error) {
	translations.Lock()
	t, ok := translations.m[pattern]
	translations.Unlock()
	if ok {
		return t.text, t.err
	}
	text, err := translate(pattern)
	translations.Lock()
	if len(translations.m) >= maxTranslations {
		clear(translations.m)
	}
	translations.m[pattern] = translation{text, err}
	translations.Unlock()
	return text, err
}

func shorten(s string) string {
	if end := strings.IndexAny(s, ")"); end >= 0 && end < 12 {
		return s[:end+1]
	}
	if len(s) > 8 {
		return s[:8] + "…"
	}
	return s
}

// Match reports whether p finds a match anywhere in s, as
// RegExp.prototype.test does.
func Match(p *Pattern, s string) bool {
	ok, _ := p.matchUnits(UTF16(s), 0)
	return ok
}

// UTF16 is s as JavaScript sees it: one rune per UTF-16 code unit.
func UTF16(s string) []rune {
	units := utf16.Encode([]rune(s))
	out := make([]rune, len(units))
	for i, u := range units {
		out[i] = rune(u)
	}
	return out
}

// matchUnits tests units within left, when left is positive (what remains
// of a plan's time): a match stopped there is errPastPlan. Without a limit
// a match always ends: the patterns that could backtrack without end are
// refused.
func (p *Pattern) matchUnits(units []rune, left time.Duration) (bool, error) {
	re := p.engines.Get().(*regexp2.Regexp)
	defer p.engines.Put(re)
	re.MatchTimeout = regexp2.DefaultMatchTimeout // none
	if left > 0 {
		// regexp2 stops a match between its timeout plus one and plus two
		// ticks of its clock (DefaultClockPeriod): ask for one tick less.
		re.MatchTimeout = max(left-regexp2.DefaultClockPeriod, time.Millisecond)
	}
	ok, err := re.MatchRunes(units)
	if err != nil {
		return false, errPastPlan
	}
	return ok, nil
}

// RuleSeparator splits a rule given on the command line: "SOURCE -> TARGET".
const RuleSeparator = "->"

// ParseFlag reads a deploy rule written as "SOURCE -> TARGET" (spaces around
// the arrow optional), so rules can be given with flags alone. The patterns
// are checked later, with the rest of the payload.
func ParseFlag(s string) (Rule, error) {
	parts := strings.Split(s, RuleSeparator)
	if len(parts) != 2 {
		return Rule{}, fmt.Errorf("deploy rule %s: want exactly one %q between the source and target patterns, e.g. \"registry/app-.*:.* -> ^(?!backend-a$).*\", found %d", fielderr.Quote(s), RuleSeparator, len(parts)-1)
	}
	r := Rule{Source: strings.TrimSpace(parts[0]), Target: strings.TrimSpace(parts[1])}
	if r.Source == "" || r.Target == "" {
		return Rule{}, fmt.Errorf("deploy rule %s: both the source (before %q) and the target (after it) must be non-empty; use .* to match everything", fielderr.Quote(s), RuleSeparator)
	}
	return r, nil
}

// ParseFlags reads every value of a rule flag (--deploy-rule) and checks
// both patterns of each, all problems at once; at least one rule is needed.
func ParseFlags(flag string, specs []string) ([]Rule, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("%s: give at least one rule, e.g. %s '.* -> .*'", flag, flag)
	}
	var errs []error
	rs := make([]Rule, 0, len(specs))
	for _, s := range specs {
		r, err := ParseFlag(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
		}
		rs = append(rs, r)
	}
	if len(errs) == 0 {
		if _, ruleErrs := CompileRules(flag, rs); len(ruleErrs) > 0 {
			errs = append(errs, ruleErrs)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return rs, nil
}
