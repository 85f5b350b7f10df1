// Package rules evaluates deploy rules the way the platform does: each rule's
// source and target are JavaScript regular expressions, tested (unanchored)
// against image references and backend names.
package rules

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

// DefaultMatchTimeout bounds one match so that no pattern can hang a run.
const DefaultMatchTimeout = 250 * time.Millisecond

// Compile checks that pattern is JavaScript RegExp syntax (as `new RegExp(p)`
// without flags reads it) and compiles it with ECMAScript semantics. timeout
// bounds every later match; zero means DefaultMatchTimeout.
func Compile(pattern string, timeout time.Duration) (*regexp2.Regexp, error) {
	if err := checkJavaScriptSyntax(pattern); err != nil {
		return nil, err
	}
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if timeout <= 0 {
		timeout = DefaultMatchTimeout
	}
	re.MatchTimeout = timeout
	return re, nil
}

// Escapes of letters and digits that mean the same in JavaScript (without the
// u flag) and in regexp2's ECMAScript mode. Any other letter escape is either
// .NET-only (\A \Z \z \G \e \a) or means something else in JavaScript.
const jsLetterEscapes = "dDwWsSbBtnvfr0123456789cxuk"

// checkJavaScriptSyntax rejects the constructs regexp2 accepts in ECMAScript
// mode that a JavaScript engine rejects or reads differently, so a rule never
// behaves one way here and another on the platform.
func checkJavaScriptSyntax(p string) error {
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return errors.New(`trailing backslash: "\" at the end escapes nothing`)
			}
			if err := checkEscape(p, i+1); err != nil {
				return err
			}
			i++
		case inClass && c == ']':
			inClass = false
		case inClass && c == '-' && i+1 < len(p) && p[i+1] == '[':
			return fmt.Errorf(`character class subtraction "-[" at offset %d is .NET syntax, not ECMAScript`, i)
		case inClass:
		case c == '[':
			inClass = true
			start := i
			if i+1 < len(p) && p[i+1] == '^' {
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				return fmt.Errorf(`%q at offset %d: JavaScript reads "[]" as an empty class and "[^]" as any character, other engines differently; write (?!) or [\s\S] instead`, p[start:i+2], start)
			}
		case c == '(' && i+1 < len(p) && p[i+1] == '?':
			if err := checkGroup(p, i); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkEscape(p string, i int) error {
	c := p[i]
	isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	switch {
	case !isAlnum:
		return nil
	case c == 'p' || c == 'P':
		return fmt.Errorf(`property escape "\%c" at offset %d needs the u flag, which deploy rules are not compiled with (JavaScript would read it as the letter %c)`, c, i-1, c)
	case c == 'u' && i+1 < len(p) && p[i+1] == '{':
		return fmt.Errorf(`code point escape "\u{…}" at offset %d needs the u flag; write \uXXXX instead`, i-1)
	case c == 'k' && (i+1 >= len(p) || p[i+1] != '<'):
		return fmt.Errorf(`"\k" at offset %d must name a group: \k<name>`, i-1)
	case !strings.ContainsRune(jsLetterEscapes, rune(c)):
		return fmt.Errorf(`escape "\%c" at offset %d is not ECMAScript syntax (JavaScript would read it as the plain letter %c); allowed letter escapes: \d \D \w \W \s \S \b \B \t \n \v \f \r \0 \cX \xHH \uHHHH \k<name> and back-references \1-\9`, c, i-1, c)
	}
	return nil
}

// checkGroup accepts the JavaScript group forms (?: (?= (?! (?<= (?<! and
// (?<name>, and names the .NET-only form otherwise.
func checkGroup(p string, i int) error {
	rest := p[i+2:]
	switch {
	case strings.HasPrefix(rest, ":"), strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"),
		strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
		return nil
	case strings.HasPrefix(rest, "<"):
		end := strings.IndexByte(rest, '>')
		if end > 1 && isIdentifier(rest[1:end]) {
			return nil
		}
		return fmt.Errorf(`group "(?%s" at offset %d: a JavaScript named group is (?<name>…) with an identifier name (balancing groups are .NET-only)`, shorten(rest), i)
	case strings.HasPrefix(rest, ">"):
		return fmt.Errorf(`atomic group "(?>" at offset %d is not ECMAScript syntax`, i)
	case strings.HasPrefix(rest, "#"):
		return fmt.Errorf(`comment group "(?#" at offset %d is not ECMAScript syntax`, i)
	case strings.HasPrefix(rest, "("):
		return fmt.Errorf(`conditional group "(?(" at offset %d is not ECMAScript syntax`, i)
	case strings.HasPrefix(rest, "'"):
		return fmt.Errorf(`named group "(?'" at offset %d is .NET syntax; JavaScript writes (?<name>…)`, i)
	case len(rest) > 0 && strings.ContainsRune("imnsx-", rune(rest[0])):
		return fmt.Errorf(`inline flags "(?%s" at offset %d are not ECMAScript syntax; JavaScript sets flags on the whole RegExp, and deploy rules take none`, shorten(rest), i)
	}
	return fmt.Errorf(`group "(?%s" at offset %d is not ECMAScript syntax`, shorten(rest), i)
}

func isIdentifier(s string) bool {
	for i, r := range s {
		letter := r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return s != ""
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

// Match reports whether re finds a match anywhere in s, as RegExp.prototype.test
// does. A match that runs past the pattern's time limit is an error naming it.
func Match(re *regexp2.Regexp, s string) (bool, error) {
	ok, err := re.MatchString(s)
	if err != nil {
		return false, fmt.Errorf("pattern %q against %q: %w (limit %s): simplify the pattern", re.String(), s, err, re.MatchTimeout)
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
		return Rule{}, fmt.Errorf("deploy rule %q: want exactly one %q between the source and target patterns, e.g. \"registry/app-.*:.* -> ^(?!backend-a$).*\", found %d", s, RuleSeparator, len(parts)-1)
	}
	r := Rule{Source: strings.TrimSpace(parts[0]), Target: strings.TrimSpace(parts[1])}
	if r.Source == "" || r.Target == "" {
		return Rule{}, fmt.Errorf("deploy rule %q: both the source (before %q) and the target (after it) must be non-empty; use .* to match everything", s, RuleSeparator)
	}
	return r, nil
}
