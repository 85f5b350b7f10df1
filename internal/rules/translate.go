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
func translate(pattern string) (string, error) {
	if !utf8.ValidString(pattern) {
		return "", errors.New("not valid UTF-8")
	}
	t := &translator{src: []rune(pattern), names: map[string]string{}, declared: map[string]bool{}, nameCount: map[string]int{}}
	t.scanGroups()
	t.frames = []*frame{{startAlive: map[string]bool{}, alive: map[string]bool{}, declaredHere: map[string]bool{}}}
	if err := t.run(); err != nil {
		return "", err
	}
	for _, name := range t.refs {
		if !t.declared[name] {
			return "", fmt.Errorf(`\k<%s> names no group of the pattern`, fielderr.Cut(name, fielderr.MaxValue))
		}
	}
	return t.out.String(), nil
}

const (
	lineTerminators = `\n\r\u2028\u2029`
	wordClass       = `[A-Za-z0-9_]`
)

type translator struct {
	src        []rune
	i          int
	out        strings.Builder
	captures   int               // capture groups in the pattern, for \N
	groups     []string          // each capture group's JavaScript name ("" when unnamed), left to right
	nameCount  map[string]int    // how many groups carry each name
	hasNames   bool              // whether any named group exists: then \k must name one
	names      map[string]string // JavaScript group name → regexp2 name
	declared   map[string]bool   // names of the groups the pattern has
	refs       []string          // names \k refers to
	frames     []*frame
	atom       bool // the last thing written can take a quantifier
	assertion  bool // the last thing written is an assertion JavaScript may not quantify
	quantified bool // the last thing written is a quantifier (a lazy ? may follow)
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
		c := t.src[t.i]
		switch c {
		case '\\':
			if err := t.escape(); err != nil {
				return err
			}
			continue
		case '[':
			if err := t.class(); err != nil {
				return err
			}
			continue
		case '(':
			if err := t.open(); err != nil {
				return err
			}
			continue
		case ')':
			if err := t.close(); err != nil {
				return err
			}
			continue
		case '|':
			f := t.top()
			f.alive = maps.Clone(f.startAlive)
			f.laterAlt = true
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
				continue
			}
			t.write(`\{`, true)
		case '}', ']':
			t.write(`\`+string(c), true)
		case '.':
			if t.dotAll() {
				t.write(`[\s\S]`, true)
			} else {
				t.write(`[^`+lineTerminators+`]`, true)
			}
		case '^':
			if t.multiline() {
				t.writeAssertion(`(?<![^` + lineTerminators + `])`)
			} else {
				t.writeAssertion(`^`)
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
	if len(t.frames) > 1 {
		return errors.New("unterminated group: a ( has no )")
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
		if t.ignoreCase() {
			b.WriteString(folds().unitText(u))
		} else {
			b.WriteString(unitText(u))
		}
	}
	t.write(b.String(), true)
}

// writeBackref writes a back-reference; in a case-insensitive part, regexp2
// compares it by its own folding (Go's unicode.ToLower), the one place that
// can differ from JavaScript's: a case-insensitive back-reference to text
// with the Kelvin or Angstrom sign, ς, ϑ, µ or İ.
func (t *translator) writeBackref(s string) {
	if t.ignoreCase() {
		s = "(?i:" + s + ")"
	}
	t.write(s, true)
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
	return nil
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

// escape reads a backslash sequence outside a class.
func (t *translator) escape() error {
	t.i++
	if t.i >= len(t.src) {
		return errors.New(`\ at end of pattern`)
	}
	c := t.src[t.i]
	t.i++
	switch c {
	case 'b':
		t.writeAssertion(`(?:(?<=` + wordClass + `)(?!` + wordClass + `)|(?<!` + wordClass + `)(?=` + wordClass + `))`)
	case 'B':
		t.writeAssertion(`(?:(?<=` + wordClass + `)(?=` + wordClass + `)|(?<!` + wordClass + `)(?!` + wordClass + `))`)
	case 'k':
		return t.backrefName()
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		t.i--
		return t.decimalEscape()
	case 'd', 'D', 'w', 'W', 's', 'S', 't', 'n', 'v', 'f', 'r':
		// sets and controls JavaScript's case folding leaves as they are
		s, _ := t.characterEscape(c, false)
		t.write(s, true)
	default:
		s, err := t.characterEscape(c, false)
		if err != nil {
			return err
		}
		var units []rune
		for _, it := range unitsOf(s) {
			units = append(units, it.unit)
		}
		t.writeUnits(units...)
	}
	return nil
}

// characterEscape is the regexp2 text of \c (the backslash and c read) where
// inside a class and outside it agree.
func (t *translator) characterEscape(c rune, inClass bool) (string, error) {
	switch c {
	case 'd', 'D', 'w', 'W', 's', 'S':
		return `\` + string(c), nil
	case 't', 'n', 'v', 'f', 'r':
		return `\` + string(c), nil
	case '0':
		if d := t.peek(0); d >= '0' && d <= '7' {
			return t.legacyOctal('0'), nil
		}
		if d := t.peek(0); d == '8' || d == '9' {
			return `\u0000`, nil
		}
		return `\u0000`, nil
	case 'c':
		if l := t.peek(0); l >= 'a' && l <= 'z' || l >= 'A' && l <= 'Z' {
			t.i++
			return fmt.Sprintf(`\u%04X`, l%32), nil
		}
		if inClass {
			if l := t.peek(0); l >= '0' && l <= '9' || l == '_' {
				t.i++
				return fmt.Sprintf(`\u%04X`, l%32), nil
			}
		}
		return `\\c`, nil // Annex B: a backslash and a c
	case 'x':
		if h := t.hex(2); h >= 0 {
			return fmt.Sprintf(`\u%04X`, h), nil
		}
		return "x", nil
	case 'u':
		if h := t.hex(4); h >= 0 {
			return fmt.Sprintf(`\u%04X`, h), nil
		}
		return "u", nil
	}
	return unitText(c), nil // Annex B identity escape: the character itself
}

// hex reads n hex digits at the cursor, or returns -1 and reads nothing.
func (t *translator) hex(n int) int {
	if t.i+n > len(t.src) {
		return -1
	}
	v, err := strconv.ParseUint(string(t.src[t.i:t.i+n]), 16, 32)
	if err != nil || strings.ContainsAny(string(t.src[t.i:t.i+n]), "+-") {
		return -1
	}
	t.i += n
	return int(v)
}

// legacyOctal reads Annex B's \NNN octal escape (first digit already read).
func (t *translator) legacyOctal(first rune) string {
	v := int(first - '0')
	max := 2
	if first > '3' {
		max = 1
	}
	for k := 0; k < max; k++ {
		d := t.peek(0)
		if d < '0' || d > '7' {
			break
		}
		v = v*8 + int(d-'0')
		t.i++
	}
	return fmt.Sprintf(`\u%04X`, v)
}

// decimalEscape is \N: a back-reference when the pattern has N groups,
// else Annex B's octal escape or the digit itself.
func (t *translator) decimalEscape() error {
	start := t.i
	for t.i < len(t.src) && t.src[t.i] >= '0' && t.src[t.i] <= '9' {
		t.i++
	}
	if n, err := strconv.Atoi(string(t.src[start:t.i])); err == nil && n <= t.captures {
		return t.numberedBackref(n)
	}
	t.i = start + 1
	d := t.src[start]
	if d >= '8' {
		t.writeUnits(d)
		return nil
	}
	t.writeUnits(t.octalUnit(d))
	return nil
}

// numberedBackref writes \N, JavaScript's N-th capture group counted left
// to right. regexp2 numbers its groups otherwise (the unnamed ones first,
// then the named ones), so \N becomes the number regexp2 gives an unnamed
// group, or \k<name> for a named one: `(?<n>a)(b)\1` refers to (?<n>a).
// A name the pattern gives more than one group (in different alternatives)
// is one group to regexp2, and \N means only one of them to JavaScript: refused.
func (t *translator) numberedBackref(n int) error {
	name := t.groups[n-1]
	if name == "" {
		unnamed := 0
		for _, g := range t.groups[:n] {
			if g == "" {
				unnamed++
			}
		}
		// (?:…) keeps a digit the translation writes next from joining the number
		t.writeBackref(fmt.Sprintf(`(?:\%d)`, unnamed))
		return nil
	}
	if t.nameCount[name] > 1 {
		return t.fail(`\%d refers to one of the groups named %q, a name the pattern gives more than one group: the module matches such a name as one group, so write \k<%s>, which refers to whichever of them took part`, n, name, name)
	}
	t.writeBackref(`\k<` + t.internalName(name) + `>`)
	return nil
}

func (t *translator) backrefName() error {
	if !t.hasNames {
		t.writeUnits('k') // Annex B: \k is a k when the pattern names no group
		return nil
	}
	if t.peek(0) != '<' {
		return t.fail(`\k must name a group: \k<name>`)
	}
	end := slices.Index(t.src[t.i:], '>')
	if end < 0 {
		return t.fail(`\k<… has no >`)
	}
	name, ok := groupName(t.src[t.i+1 : t.i+end])
	if !ok {
		return t.fail(`\k<%s>: a group's name is an identifier`, fielderr.Cut(string(t.src[t.i+1:t.i+end]), fielderr.MaxValue))
	}
	t.i += end + 1
	t.refs = append(t.refs, name)
	internal, ok := t.names[name]
	if !ok {
		internal = t.internalName(name)
	}
	t.writeBackref(`\k<` + internal + `>`)
	return nil
}

func (t *translator) internalName(name string) string {
	if n, ok := t.names[name]; ok {
		return n
	}
	n := fmt.Sprintf("g%d", len(t.names))
	t.names[name] = n
	return n
}

// open reads a group opening.
// groupHeadWindow is how much of what follows a ( open reads: a group's
// header, (?<name>, is shorter (a longer name is refused as unterminated).
const groupHeadWindow = 512

func (t *translator) open() error {
	parent := t.top()
	f := &frame{startAlive: maps.Clone(parent.alive), declaredHere: map[string]bool{}, dotAll: parent.dotAll, multiline: parent.multiline, ignoreCase: parent.ignoreCase}
	f.alive = maps.Clone(f.startAlive)
	// What follows the ( decides the group's kind: a bounded window of it,
	// so that reading a pattern stays linear in its length.
	rest := string(t.src[t.i+1 : min(len(t.src), t.i+1+groupHeadWindow)])
	text := "("
	switch {
	case !strings.HasPrefix(rest, "?"):
		f.kind = "("
		t.i++
	case strings.HasPrefix(rest, "?:"):
		f.kind, text = ":", "(?:"
		t.i += 3
	case strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "?!"):
		f.kind, text = rest[1:2], "(?"+rest[1:2]
		t.i += 3
	case strings.HasPrefix(rest, "?<="), strings.HasPrefix(rest, "?<!"):
		f.kind, text = rest[1:3], "(?"+rest[1:3]
		t.i += 4
	case strings.HasPrefix(rest, "?<"):
		end := strings.IndexByte(rest, '>')
		name, ok := "", false
		if end >= 0 {
			name, ok = groupName([]rune(rest[2:end]))
		}
		if !ok {
			return t.fail(`group "(%s": a JavaScript named group is (?<name>…) with an identifier name`, shorten(rest))
		}
		if parent.alive[name] {
			return t.fail(`duplicate group name %q: a name repeats only in different alternatives of one | list`, name)
		}
		parent.alive[name] = true
		parent.declaredHere[name] = true
		// the group's own name is taken in each of its alternatives
		f.startAlive[name] = true
		f.alive[name] = true
		t.declared[name] = true
		f.kind, text = "name", "(?<"+t.internalName(name)+">"
		t.i += 1 + len([]rune(rest[:end+1]))
	default:
		var err error
		if text, err = t.modifiers(rest, f); err != nil {
			return err
		}
		f.kind = ":"
	}
	t.frames = append(t.frames, f)
	t.write(text, false)
	return nil
}

// modifiers reads (?ims-ims:…), the only other group JavaScript has.
func (t *translator) modifiers(rest string, f *frame) (string, error) {
	colon := strings.IndexByte(rest, ':')
	spec := ""
	if colon > 0 {
		spec = rest[1:colon]
	}
	on, off, _ := strings.Cut(spec, "-")
	valid := colon > 0 && (on != "" || off != "")
	seen := map[rune]bool{}
	for _, r := range on + off {
		if !strings.ContainsRune("ims", r) || seen[r] {
			valid = false
		}
		seen[r] = true
	}
	if !valid {
		switch {
		case strings.HasPrefix(rest, "?>"):
			return "", t.fail(`atomic group "(?>" is not JavaScript syntax`)
		case strings.HasPrefix(rest, "?#"):
			return "", t.fail(`comment group "(?#" is not JavaScript syntax`)
		case strings.HasPrefix(rest, "?("):
			return "", t.fail(`conditional group "(?(" is not JavaScript syntax`)
		case strings.HasPrefix(rest, "?'"):
			return "", t.fail(`named group "(?'" is .NET syntax; JavaScript writes (?<name>…)`)
		case len(rest) > 1 && strings.ContainsRune("imsnx-", rune(rest[1])):
			return "", t.fail(`flags "(%s" are not JavaScript syntax: JavaScript takes (?ims-ims:…) around a part of the pattern, and no inline (?i)`, shorten(rest))
		}
		return "", t.fail(`group "(%s" is not JavaScript syntax`, shorten(rest))
	}
	t.i += 1 + len(spec) + 2
	f.ignoreCase = (f.ignoreCase || strings.Contains(on, "i")) && !strings.Contains(off, "i")
	f.dotAll = (f.dotAll || strings.Contains(on, "s")) && !strings.Contains(off, "s")
	f.multiline = (f.multiline || strings.Contains(on, "m")) && !strings.Contains(off, "m")
	f.caseStart = f.ignoreCase && !t.top().ignoreCase
	return "(?:", nil
}

// close reads a ).
func (t *translator) close() error {
	if len(t.frames) == 1 {
		return t.fail(`unmatched ")"`)
	}
	f := t.top()
	t.frames = t.frames[:len(t.frames)-1]
	parent := t.top()
	for name := range f.declaredHere {
		parent.alive[name] = true
		parent.declaredHere[name] = true
	}
	t.i++
	t.write(")", true)
	if f.kind == "<=" || f.kind == "<!" {
		t.atom, t.assertion = false, true // JavaScript may not repeat a look-behind
	}
	return nil
}

// classItem is one element of a character class: a UTF-16 unit, or a class
// escape such as \d.
type classItem struct {
	unit rune
	set  string
}

// class reads [...] and writes the regexp2 class for the same UTF-16 units.
func (t *translator) class() error {
	start := t.i
	t.i++
	negate := t.peek(0) == '^'
	if negate {
		t.i++
	}
	if t.peek(0) == ']' {
		t.i++
		if negate {
			t.write(`[\s\S]`, true) // [^]: any unit
		} else {
			t.write(`(?!)`, true) // []: no unit
		}
		return nil
	}
	var b strings.Builder
	b.WriteString("[")
	if negate {
		b.WriteString("^")
	}
	var ranges []unitRange // what the class holds beside its sets, for case folding
	add := func(items ...classItem) {
		for _, it := range items {
			b.WriteString(it.text())
			if it.set == "" {
				ranges = append(ranges, unitRange{it.unit, it.unit})
			}
		}
	}
	for {
		if t.i >= len(t.src) {
			return errors.New("unterminated character class: a [ has no ]")
		}
		if t.src[t.i] == ']' {
			t.i++
			break
		}
		items, err := t.classAtom()
		if err != nil {
			return err
		}
		if t.peek(0) == '-' && t.peek(1) != ']' && t.peek(1) != -1 {
			t.i++
			right, err := t.classAtom()
			if err != nil {
				return err
			}
			left := items[len(items)-1]
			add(items[:len(items)-1]...)
			if left.set != "" || right[0].set != "" {
				// Annex B: a range next to a class escape is the three parts.
				add(left, classItem{unit: '-'}, right[0])
			} else {
				if left.unit > right[0].unit {
					return t.fail("range out of order in character class")
				}
				b.WriteString(left.text() + "-" + right[0].text())
				ranges = append(ranges, unitRange{left.unit, right[0].unit})
			}
			add(right[1:]...)
			continue
		}
		add(items...)
	}
	if t.ignoreCase() {
		// a unit matches when its canonical value is that of a unit the
		// class holds: the class holds their case variants too
		extra := folds().extra(ranges)
		if extra != "" && t.v8CaseInsensitiveClass() {
			return fmt.Errorf("at offset %d: character class %s after a | inside a (?i:…) group: %w; give each alternative its own group, e.g. (?i:api)|(?i:[w]orker) rather than (?i:api|[w]orker), or spell out both cases in the class, e.g. [wW]",
				start, fielderr.Quote(string(t.src[start:t.i])), errV8CaseClass)
		}
		b.WriteString(extra)
	}
	b.WriteString("]")
	t.write(b.String(), true)
	return nil
}

// errV8CaseClass marks a pattern refused because Node and the standard
// read it differently (v8CaseInsensitiveClass).
var errV8CaseClass = errors.New("there Node's V8 matches it case-sensitively, unlike the ECMAScript standard, so where the rule sends an image would depend on the engine")

// v8CaseInsensitiveClass says whether V8 (Node 24) would match a class at
// the cursor case-sensitively although it is in a (?i:…) group: when it
// follows a | of that group or of a group inside it (V8 sets up the case
// folding of classes from the first alternative's end, where the (?i:…)
// group is already closed). ECMAScript, and the i flag in V8, fold it.
// V8 gets some of these right (a class in a + or * loop), by how it walks
// the pattern: all are refused, the rule's author can always rewrite them.
func (t *translator) v8CaseInsensitiveClass() bool {
	for k := len(t.frames) - 1; k > 0; k-- {
		f := t.frames[k]
		if f.laterAlt {
			return true
		}
		if f.caseStart {
			return false
		}
	}
	return false
}

func (it classItem) text() string {
	if it.set != "" {
		return it.set
	}
	return fmt.Sprintf(`\u%04X`, it.unit)
}

// classAtom reads one class character or escape; a character beyond the
// BMP is two units, as JavaScript without the u flag sees it.
func (t *translator) classAtom() ([]classItem, error) {
	c := t.src[t.i]
	t.i++
	if c != '\\' {
		if c > 0xFFFF {
			hi, lo := utf16.EncodeRune(c)
			return []classItem{{unit: hi}, {unit: lo}}, nil
		}
		return []classItem{{unit: c}}, nil
	}
	if t.i >= len(t.src) {
		return nil, errors.New(`\ at end of pattern`)
	}
	e := t.src[t.i]
	t.i++
	switch e {
	case 'd', 'D', 'w', 'W', 's', 'S':
		return []classItem{{set: `\` + string(e)}}, nil
	case 'b':
		return []classItem{{unit: 8}}, nil
	case '-':
		return []classItem{{unit: '-'}}, nil
	case 't':
		return []classItem{{unit: '\t'}}, nil
	case 'n':
		return []classItem{{unit: '\n'}}, nil
	case 'v':
		return []classItem{{unit: '\v'}}, nil
	case 'f':
		return []classItem{{unit: '\f'}}, nil
	case 'r':
		return []classItem{{unit: '\r'}}, nil
	case '1', '2', '3', '4', '5', '6', '7':
		return []classItem{{unit: t.octalUnit(e)}}, nil
	case 'k':
		if t.hasNames {
			// JavaScript reads \k as a back-reference wherever the pattern
			// names a group, and a class holds no back-reference
			return nil, t.fail(`\k in a character class: in a pattern with named groups \k only refers to a group (\k<name>), which a class cannot hold; write k for the letter`)
		}
	}
	s, err := t.characterEscape(e, true)
	if err != nil {
		return nil, err
	}
	return unitsOf(s), nil
}

func (t *translator) octalUnit(first rune) rune {
	s := t.legacyOctal(first)
	v, _ := strconv.ParseUint(s[2:], 16, 32)
	return rune(v)
}

// unitsOf turns characterEscape's text back into class items.
func unitsOf(s string) []classItem {
	var out []classItem
	for len(s) > 0 {
		if strings.HasPrefix(s, `\u`) && len(s) >= 6 {
			v, _ := strconv.ParseUint(s[2:6], 16, 32)
			out = append(out, classItem{unit: rune(v)})
			s = s[6:]
			continue
		}
		if strings.HasPrefix(s, `\\`) {
			out = append(out, classItem{unit: '\\'})
			s = s[2:]
			continue
		}
		r, n := utf8.DecodeRuneInString(s)
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			out = append(out, classItem{unit: hi}, classItem{unit: lo})
		} else {
			out = append(out, classItem{unit: r})
		}
		s = s[n:]
	}
	return out
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
