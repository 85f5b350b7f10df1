package rules

import (
	"dagger/lowcode-pipeline/internal/fielderr"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// translate reads a pattern as JavaScript's `new RegExp(pattern)` does (no
// flags: Annex B syntax, strings as UTF-16 code units) and writes the
// regexp2 pattern that matches the same UTF-16 units: characters beyond the
// BMP become their two surrogates, `.` excludes JavaScript's line
// terminators, \b and \B use JavaScript's ASCII word characters, Annex B's
// identity escapes and legacy octal become plain characters, group names
// become regexp2-safe ones, and a (?i:…) part spells out the case variants
// ECMAScript's Canonicalize makes equal (canonicalize.go). What JavaScript
// rejects is an error that says why.
//
// Patterns JavaScript accepts are refused too where Node's V8 departs from
// the standard (v8flags.go), where a backtracking engine such as V8 could
// take time without end (backtrack.go), and where regexp2 keeps a capture
// JavaScript forgets (captures.go).
func translate(pattern string) (string, error) {
	t, err := read(pattern)
	if err != nil {
		return "", err
	}
	if t.oneByteFold != nil {
		return "", t.oneByteFold
	}
	if err := t.checkV8Flags(); err != nil {
		return "", err
	}
	if err := checkBacktracking(t.src, t.root); err != nil {
		return "", err
	}
	if err := checkRepeatedCaptures(t.src, t.root); err != nil {
		return "", err
	}
	return t.out.String(), nil
}

// read translates pattern and keeps its shape in t.root.
func read(pattern string) (*translator, error) {
	if !utf8.ValidString(pattern) {
		return nil, errors.New("not valid UTF-8")
	}
	t := &translator{src: []rune(pattern), names: map[string]string{}, declared: map[string]bool{}, nameCount: map[string]int{}}
	t.scanGroups()
	t.frames = []*frame{{startAlive: map[string]bool{}, alive: map[string]bool{}, declaredHere: map[string]bool{}, b: newShapeBuilder(nil, 0)}}
	if err := t.run(); err != nil {
		return nil, err
	}
	for _, name := range t.refs {
		if !t.declared[name] {
			return nil, fmt.Errorf(`\k<%s> names no group of the pattern`, fielderr.Cut(fielderr.Printable(name), fielderr.MaxValue))
		}
	}
	t.root = t.frames[0].b.body(len(t.src))
	return t, nil
}

const (
	lineTerminators = `\n\r\u2028\u2029`
	wordClass       = `[A-Za-z0-9_]`
)

type translator struct {
	src         []rune
	i           int
	out         strings.Builder
	captures    int               // capture groups in the pattern, for \N
	opened      int               // capture groups opened so far
	groups      []string          // each capture group's JavaScript name ("" when unnamed), left to right
	nameCount   map[string]int    // how many groups carry each name
	hasNames    bool              // whether any named group exists: then \k must name one
	names       map[string]string // JavaScript group name → regexp2 name
	declared    map[string]bool   // names of the groups the pattern has
	refs        []string          // names \k refers to
	frames      []*frame
	atom        bool  // the last thing written can take a quantifier
	assertion   bool  // the last thing written is an assertion JavaScript may not quantify
	quantified  bool  // the last thing written is a quantifier (a lazy ? may follow)
	oneByteFold error // the first case-insensitive unit V8 folds otherwise in a one-byte text (v8OneByteFold)
	tok         int   // where the token being read starts
	root        *shape
}

// frame is one open group: the named groups visible to its current
// alternative, and those declared in any of its alternatives.
type frame struct {
	kind         string // ":", "=", "!", "<=", "<!", "name", "(" for a capture
	startAlive   map[string]bool
	alive        map[string]bool
	declaredHere map[string]bool
	dotAll       bool
	multiline    bool
	ignoreCase   bool // in (?i:…): see canonicalize.go
	// caseStart says this group turned ignoreCase on; laterAlt that its
	// current alternative is not its first (see v8CaseInsensitiveClass).
	caseStart, laterAlt bool
	b                   *shapeBuilder // the group's parts, read so far
}

func (t *translator) top() *frame { return t.frames[len(t.frames)-1] }

func (t *translator) fail(format string, args ...any) error {
	return fmt.Errorf("at offset %d: "+format, append([]any{t.i}, args...)...)
}

// scanGroups counts capture groups and notes whether named ones exist, as
// JavaScript decides \N and \k before reading the pattern.
func (t *translator) scanGroups() {
	inClass := false
	for i := 0; i < len(t.src); i++ {
		switch c := t.src[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
			if i+1 < len(t.src) && t.src[i+1] == ']' {
				i++ // [] is an empty class: its ] closes it
				inClass = false
			}
		case c == '(':
			if i+1 < len(t.src) && t.src[i+1] == '?' {
				if i+2 < len(t.src) && t.src[i+2] == '<' && i+3 < len(t.src) && t.src[i+3] != '=' && t.src[i+3] != '!' {
					t.captures++
					t.hasNames = true
					name := ""
					if end := slices.Index(t.src[i+3:], '>'); end >= 0 {
						name, _ = groupName(t.src[i+3 : i+3+end])
					}
					t.groups = append(t.groups, name)
					t.nameCount[name]++
				}
				continue
			}
			t.captures++
			t.groups = append(t.groups, "")
		}
	}
}

func (t *translator) peek(off int) rune {
	if t.i+off < len(t.src) {
		return t.src[t.i+off]
	}
	return -1
}

func (t *translator) run() error {
	for t.i < len(t.src) {
		t.tok = t.i
		if err := t.token(); err != nil {
			return err
		}
		kids := t.top().b.cur.kids
		for k := len(kids) - 1; k >= 0 && kids[k].end < 0; k-- {
			kids[k].end = t.i
		}
	}
	if len(t.frames) > 1 {
		return errors.New("unterminated group: a ( has no )")
	}
	return nil
}

// token reads one token of the pattern at the cursor.
func (t *translator) token() error {
	{
		c := t.src[t.i]
		switch c {
		case '\\':
			return t.escape()
		case '[':
			return t.class()
		case '(':
			return t.open()
		case ')':
			return t.close()
		case '|':
			f := t.top()
			f.alive = maps.Clone(f.startAlive)
			f.laterAlt = true
			f.b.bar(t.i)
			t.write("|", false)
		case '*', '+', '?':
			if err := t.quantifier(string(c)); err != nil {
				return err
			}
		case '{':
			if n := t.braceQuantifier(); n > 0 {
				q, err := clampCounts(string(t.src[t.i : t.i+n]))
				if err != nil {
					return t.fail("%v", err)
				}
				if err := t.quantifierText(q); err != nil {
					return err
				}
				t.i += n
				return nil
			}
			t.writeUnits('{')
		case '}', ']':
			t.writeUnits(c)
		case '.':
			if t.dotAll() {
				t.leaf(`[\s\S]`, &shape{kind: shapeClass, set: anyUnit})
			} else {
				t.leaf(`[^`+lineTerminators+`]`, &shape{kind: shapeClass, set: lineTerms.complement()})
			}
		case '^':
			if t.multiline() {
				t.writeAssertion(`(?<![^` + lineTerminators + `])`)
			} else {
				t.writeAssertion(`^`)
				t.top().b.last().anchor = true
			}
		case '$':
			if t.multiline() {
				t.writeAssertion(`(?![^` + lineTerminators + `])`)
			} else {
				t.writeAssertion(`(?![\s\S])`)
			}
		default:
			t.literal(c)
		}
		t.i++
	}
	return nil
}

func (t *translator) dotAll() bool     { return t.top().dotAll }
func (t *translator) multiline() bool  { return t.top().multiline }
func (t *translator) ignoreCase() bool { return t.top().ignoreCase }

// write appends regexp2 text; atom says whether a quantifier may follow.
func (t *translator) write(s string, atom bool) {
	t.out.WriteString(s)
	t.atom, t.assertion, t.quantified = atom, false, false
}

func (t *translator) writeAssertion(s string) {
	t.out.WriteString(s)
	t.atom, t.assertion, t.quantified = false, true, false
	t.add(&shape{kind: shapeAssert})
}

// leaf writes the regexp2 text of one part of the pattern that reads input,
// and adds its shape.
func (t *translator) leaf(s string, n *shape) {
	t.write(s, true)
	t.add(n)
}

// add adds a part to the current alternative, spanning the token read.
func (t *translator) add(n *shape) {
	n.start, n.end, n.ignoreCase = t.tok, -1, t.ignoreCase()
	t.top().b.add(n)
}

// literal writes one JavaScript character: a BMP one as itself (escaped
// when regexp2 would read it otherwise), another as its two surrogates.
func (t *translator) literal(c rune) {
	if c > 0xFFFF {
		hi, lo := utf16.EncodeRune(c)
		t.writeUnits(hi, lo)
		return
	}
	t.writeUnits(c)
}

// writeUnits writes UTF-16 units to match, each with its case variants in
// a case-insensitive part.
func (t *translator) writeUnits(units ...rune) {
	var b strings.Builder
	for _, u := range units {
		set := unitsSet(u)
		if t.ignoreCase() {
			t.noteOneByteFold(u, u, false)
			b.WriteString(folds().unitText(u))
			if class := folds().class[u]; class != nil {
				set = unitsSet(class...)
			}
		} else {
			b.WriteString(unitText(u))
		}
		t.add(&shape{kind: shapeUnit, set: set, unit: u})
	}
	t.write(b.String(), true)
}

// errCaseBackref marks a back-reference refused in a case-insensitive part.
var errCaseBackref = errors.New(`a back-reference inside a case-insensitive (?i:…) part: the module would compare the text it refers to by another case folding than JavaScript's (the Kelvin sign, ß, ς, µ, İ), so where the rule sends an image could differ; put the back-reference outside (?i:…)`)

// writeBackref writes a back-reference. One in a case-insensitive part is
// refused: regexp2 compares it by its own folding (Go's unicode.ToLower),
// not by JavaScript's Canonicalize, so text with the Kelvin or Angstrom
// sign, ß, ς, ϑ, µ or İ would get another verdict than Node's.
func (t *translator) writeBackref(s string, refs []int) error {
	if t.ignoreCase() {
		return t.fail("%v", errCaseBackref)
	}
	t.leaf(s, &shape{kind: shapeBackref, refs: refs})
	return nil
}

func unitText(c rune) string {
	if c > 0xFFFF {
		hi, lo := utf16.EncodeRune(c)
		return fmt.Sprintf(`\u%04X\u%04X`, hi, lo)
	}
	if c < 0x20 || c == 0x7f || utf16.IsSurrogate(c) || strings.ContainsRune(`\^$.|?*+()[]{}#- `, c) {
		return fmt.Sprintf(`\u%04X`, c)
	}
	return string(c)
}

func (t *translator) quantifier(q string) error {
	if q == "?" && t.quantified {
		t.out.WriteString("?") // lazy
		t.quantified = false
		last := t.top().b.last()
		last.lazy, last.end = true, -1 // its text takes the ? in
		return nil
	}
	return t.quantifierText(q)
}

func (t *translator) quantifierText(q string) error {
	switch {
	case t.assertion:
		return t.fail("nothing to repeat: JavaScript does not repeat the assertion before %s", q)
	case !t.atom:
		return t.fail("nothing to repeat before %s", q)
	}
	t.out.WriteString(q)
	t.atom, t.quantified = false, true
	t.quantify(q)
	return nil
}

// quantify makes the last part of the current alternative the body of the
// quantifier q (*, +, ?, {n}, {n,} or {n,m}).
func (t *translator) quantify(q string) {
	b := t.top().b
	body := b.last()
	lo, hi := 0, -1
	switch q {
	case "+":
		lo = 1
	case "?":
		hi = 1
	case "*":
	default:
		n, m, comma := strings.Cut(q[1:len(q)-1], ",")
		lo, _ = strconv.Atoi(n)
		switch {
		case !comma:
			hi = lo
		case m != "":
			hi, _ = strconv.Atoi(m)
		}
	}
	b.cur.kids[len(b.cur.kids)-1] = &shape{kind: shapeQuant, kids: []*shape{body}, min: lo, max: hi, start: body.start, end: -1, ignoreCase: body.ignoreCase}
}

// braceQuantifier returns the length of a {n}, {n,} or {n,m} quantifier at
// the cursor, or 0 when the brace is a plain character (Annex B). Counts
// past regexp2's range are clamped: no input comes near them.
func (t *translator) braceQuantifier() int {
	j := t.i + 1
	digits := func() (string, bool) {
		start := j
		for j < len(t.src) && t.src[j] >= '0' && t.src[j] <= '9' {
			j++
		}
		return string(t.src[start:j]), j > start
	}
	if _, ok := digits(); !ok {
		return 0
	}
	if j < len(t.src) && t.src[j] == ',' {
		j++
		digits()
	}
	if j < len(t.src) && t.src[j] == '}' {
		return j + 1 - t.i
	}
	return 0
}

// maxCount is the largest repeat count written for regexp2, which refuses
// JavaScript's larger ones; no image reference or backend name is longer.
const maxCount = 100_000

// clampCounts checks {n,m} as JavaScript does and clamps its counts.
func clampCounts(q string) (string, error) {
	body := q[1 : len(q)-1]
	lo, hi, hasComma := strings.Cut(body, ",")
	clamp := func(s string) (int, string) {
		v, err := strconv.Atoi(s)
		if err != nil || v > maxCount {
			return maxCount + 1, strconv.Itoa(maxCount)
		}
		return v, s
	}
	loN, loS := clamp(lo)
	if !hasComma {
		return "{" + loS + "}", nil
	}
	if hi == "" {
		return "{" + loS + ",}", nil
	}
	hiN, hiS := clamp(hi)
	if loN > hiN || len(strings.TrimLeft(lo, "0")) > len(strings.TrimLeft(hi, "0")) {
		return "", fmt.Errorf("numbers out of order in the %s quantifier", q)
	}
	return "{" + loS + "," + hiS + "}", nil
}
