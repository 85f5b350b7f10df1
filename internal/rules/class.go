package rules

import (
	"dagger/lowcode-pipeline/internal/fielderr"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

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
			t.leaf(`[\s\S]`, &shape{kind: shapeClass, set: anyUnit}) // [^]: any unit
		} else {
			t.leaf(`(?!)`, &shape{kind: shapeClass}) // []: no unit
		}
		return nil
	}
	var b strings.Builder
	b.WriteString("[")
	if negate {
		b.WriteString("^")
	}
	var ranges []unitRange // what the class holds beside its sets, for case folding
	var sets unitSet       // what its sets (\d…) hold
	add := func(items ...classItem) {
		for _, it := range items {
			b.WriteString(it.text())
			if it.set == "" {
				ranges = append(ranges, unitRange{it.unit, it.unit})
			} else {
				sets = sets.union(classEscapeSet(rune(it.set[1])))
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
		for _, r := range ranges {
			t.noteOneByteFold(r.lo, r.hi, negate)
		}
		// a unit matches when its canonical value is that of a unit the
		// class holds: the class holds their case variants too
		extra := folds().extra(ranges)
		if extra != "" && t.v8CaseInsensitiveClass() {
			return fmt.Errorf("at offset %d: character class %s after a | inside a (?i:…) group: %w; give each alternative its own group, e.g. (?i:api)|(?i:[w]orker) rather than (?i:api|[w]orker), or spell out both cases in the class, e.g. [wW]",
				start, fielderr.Quote(string(t.src[start:t.i])), errV8CaseClass)
		}
		b.WriteString(extra)
		sets = sets.union(unitsSet(folds().extraUnits(ranges)...))
	}
	b.WriteString("]")
	set := sets.union(newUnitSet(ranges))
	if negate {
		set = set.complement()
	}
	t.leaf(b.String(), &shape{kind: shapeClass, set: set, ranges: ranges, negate: negate})
	return nil
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
