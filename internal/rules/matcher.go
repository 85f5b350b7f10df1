package rules

import (
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultPlanTimeout bounds the matching of a whole plan: a backstop, far
// above what 10,000 images × 1,000 rules take on a busy 2-core machine.
const DefaultPlanTimeout = 60 * time.Second

// literalKind is how a pattern without metacharacters is tested.
type literalKind int

const (
	notLiteral literalKind = iota
	always                 // "", ".*", "^": every string matches
	contains               // lit
	prefix                 // ^lit
	suffix                 // lit$
	equal                  // ^lit$
)

// matcher tests one pattern as RegExp.prototype.test does. A pattern with no
// metacharacter is a plain substring, prefix, suffix or equality test, which
// is what RegExp makes of it (without flags, ^ and $ are the ends of the
// input); any other goes to the regular expression engine.
type matcher struct {
	re   *Pattern
	lit  string
	kind literalKind
}

func newMatcher(pattern string, re *Pattern) *matcher {
	m := &matcher{re: re}
	switch pattern {
	case "", ".*", "^":
		m.kind = always
		return m
	}
	body, kind := pattern, contains
	if b, ok := strings.CutPrefix(body, "^"); ok {
		body, kind = b, prefix
	}
	if b, ok := strings.CutSuffix(body, "$"); ok && !strings.HasSuffix(b, `\`) {
		body = b
		if kind == prefix {
			kind = equal
		} else {
			kind = suffix
		}
	}
	if !strings.ContainsAny(body, `\^$.|?*+()[]{}`) && utf8.ValidString(body) {
		m.lit, m.kind = body, kind
	}
	return m
}

// subject is a value to test, prepared once for every rule: its UTF-16
// units, as JavaScript sees it, and whether it is valid UTF-8.
type subject struct {
	s     string
	units []rune
	valid bool
}

func newSubject(s string) subject { return subject{s: s, units: UTF16(s), valid: utf8.ValidString(s)} }

// match tests a subject within left (none when not positive): a regular
// expression still running when left runs out is errPastPlan.
func (m *matcher) match(subj subject, left time.Duration) (bool, error) {
	s := subj.s
	kind := m.kind
	if kind != notLiteral && kind != always && !subj.valid {
		kind = notLiteral // the engine reads invalid UTF-8 its own way: let it decide
	}
	switch kind {
	case always:
		return true, nil
	case contains:
		return strings.Contains(s, m.lit), nil
	case prefix:
		return strings.HasPrefix(s, m.lit), nil
	case suffix:
		return strings.HasSuffix(s, m.lit), nil
	case equal:
		return s == m.lit, nil
	}
	return m.re.matchUnits(subj.units, left)
}
