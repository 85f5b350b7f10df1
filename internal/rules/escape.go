package rules

import (
	"dagger/lowcode-pipeline/internal/fielderr"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

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
	case 'd', 'D', 'w', 'W', 's', 'S':
		// sets JavaScript's case folding leaves as they are
		t.leaf(`\`+string(c), &shape{kind: shapeClass, set: classEscapeSet(c)})
	case 't', 'n', 'v', 'f', 'r':
		t.writeUnits(controlEscapes[c])
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

// controlEscapes are the units of \t, \n, \v, \f and \r.
var controlEscapes = map[rune]rune{'t': '\t', 'n': '\n', 'v': '\v', 'f': '\f', 'r': '\r'}

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
		return t.writeBackref(fmt.Sprintf(`(?:\%d)`, unnamed), []int{n})
	}
	if t.nameCount[name] > 1 {
		return t.fail(`\%d refers to one of the groups named %s, a name the pattern gives more than one group: the module matches such a name as one group, so write \k<%s>, which refers to whichever of them took part`, n, fielderr.Quote(name), fielderr.Printable(name))
	}
	return t.writeBackref(`\k<`+t.internalName(name)+`>`, []int{n})
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
		return t.fail(`\k<%s>: a group's name is an identifier`, fielderr.Cut(fielderr.Printable(string(t.src[t.i+1:t.i+end])), fielderr.MaxValue))
	}
	t.i += end + 1
	t.refs = append(t.refs, name)
	internal, ok := t.names[name]
	if !ok {
		internal = t.internalName(name)
	}
	var refs []int
	for i, g := range t.groups {
		if g == name {
			refs = append(refs, i+1)
		}
	}
	return t.writeBackref(`\k<`+internal+`>`, refs)
}

func (t *translator) internalName(name string) string {
	if n, ok := t.names[name]; ok {
		return n
	}
	n := fmt.Sprintf("g%d", len(t.names))
	t.names[name] = n
	return n
}
