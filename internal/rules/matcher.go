package rules

import (
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// DefaultPlanTimeout bounds the matching of a whole plan.
const DefaultPlanTimeout = 5 * time.Second

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
	re    *regexp2.Regexp
	lit   string
	kind  literalKind
	spent atomic.Int64 // nanoseconds in the engine, for the plan's budget
}

func newMatcher(pattern string, re *regexp2.Regexp) *matcher {
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

// match tests s; a regular expression that runs past its time limit is an
// error. validUTF8 says whether s is valid UTF-8 (the caller checks each
// value once, not once per rule).
func (m *matcher) match(s string, validUTF8 bool) (bool, error) {
	kind := m.kind
	if kind != notLiteral && kind != always && !validUTF8 {
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
	start := time.Now()
	ok, err := Match(m.re, s)
	m.spent.Add(int64(time.Since(start)))
	return ok, err
}
