package rules

import "slices"

// shape is a pattern as the translator read it: the tree the checks that
// look at a pattern whole walk (backtrack.go, v8flags.go). The translator
// builds it as it writes, so the checks see what the translation matches.
type shape struct {
	kind     shapeKind
	set      unitSet  // leafUnit, leafClass: the units one step may read
	kids     []*shape // seq, alt, group, look, quant: the parts, in order
	min, max int      // quant: the counts; max is unbounded when negative
	lazy     bool     // quant: takes as few as it can
	// start and end are the rune offsets of the part in the pattern.
	start, end int
	// ignoreCase is the case-insensitivity the standard gives the part: a
	// leaf's, or a group's inside it.
	ignoreCase bool
	unit       rune        // shapeUnit: the unit as written
	ranges     []unitRange // shapeClass: the units written beside class escapes, before case folding
	negate     bool        // shapeClass: [^…]
	// flagsChange says a modifier group sets flags other than its parent's.
	flagsChange bool
	outerCase   bool  // group: the case-insensitivity around it
	capture     bool  // group: a capture group
	group       int   // group: a capture group's number, as JavaScript counts them
	refs        []int // shapeBackref: the groups it may refer to (a name may be several groups')
	behind      bool  // look: a look-behind, read right to left
	negative    bool  // look: a negative one
	anchor      bool  // leafAssert: ^ outside a multiline part
}

type shapeKind int

const (
	shapeSeq     shapeKind = iota // kids one after the other
	shapeAlt                      // kids are the alternatives of a | list
	shapeGroup                    // (…), (?:…), (?<n>…), (?ims-ims:…): kids[0] is the body
	shapeLook                     // a look-around: kids[0] is the body
	shapeQuant                    // kids[0] repeated min to max times
	shapeUnit                     // one literal UTF-16 unit (with its case variants)
	shapeClass                    // a class, a class escape or .
	shapeAssert                   // ^, $, \b, \B
	shapeBackref                  // \N or \k<name>
)

// repeats says whether a quantifier may take its body more than once.
func (s *shape) repeats() bool { return s.kind == shapeQuant && (s.max < 0 || s.max > 1) }

// shapeBuilder collects the parts of one open group: the alternatives
// read so far and the one being read.
type shapeBuilder struct {
	group *shape
	alts  []*shape
	cur   *shape
}

func newShapeBuilder(group *shape, start int) *shapeBuilder {
	return &shapeBuilder{group: group, cur: &shape{kind: shapeSeq, start: start}}
}

func (b *shapeBuilder) add(s *shape) { b.cur.kids = append(b.cur.kids, s) }

// last is the part a quantifier applies to.
func (b *shapeBuilder) last() *shape {
	if n := len(b.cur.kids); n > 0 {
		return b.cur.kids[n-1]
	}
	return nil
}

// bar ends the current alternative at offset at.
func (b *shapeBuilder) bar(at int) {
	b.cur.end = at
	b.alts = append(b.alts, b.cur)
	b.cur = &shape{kind: shapeSeq, start: at + 1}
}

// body is what the group holds once it closes at offset at.
func (b *shapeBuilder) body(at int) *shape {
	b.cur.end = at
	if len(b.alts) == 0 {
		return b.cur
	}
	alts := append(b.alts, b.cur)
	return &shape{kind: shapeAlt, kids: alts, start: alts[0].start, end: at}
}

// unitSet is a set of UTF-16 units: sorted, disjoint, non-adjacent ranges.
type unitSet []unitRange

var (
	anyUnit   = unitSet{{0, 0xFFFF}}
	digitSet  = unitSet{{'0', '9'}}
	wordSet   = unitSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	spaceSet  = newUnitSet([]unitRange{{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}})
	lineTerms = unitSet{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}
)

func newUnitSet(ranges []unitRange) unitSet { return unitSet(merged(ranges)) }

func unitsSet(units ...rune) unitSet {
	r := make([]unitRange, len(units))
	for i, u := range units {
		r[i] = unitRange{u, u}
	}
	return newUnitSet(r)
}

func (s unitSet) union(o unitSet) unitSet { return newUnitSet(append(slices.Clone(s), o...)) }

func (s unitSet) complement() unitSet {
	var out unitSet
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, unitRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= 0xFFFF {
		out = append(out, unitRange{next, 0xFFFF})
	}
	return out
}

// meets says whether some unit is in both sets.
func (s unitSet) meets(o unitSet) bool {
	i, j := 0, 0
	for i < len(s) && j < len(o) {
		switch {
		case s[i].hi < o[j].lo:
			i++
		case o[j].hi < s[i].lo:
			j++
		default:
			return true
		}
	}
	return false
}

// classEscapeSet is the units of \d, \D, \w, \W, \s or \S.
func classEscapeSet(e rune) unitSet {
	switch e {
	case 'd':
		return digitSet
	case 'D':
		return digitSet.complement()
	case 'w':
		return wordSet
	case 'W':
		return wordSet.complement()
	case 's':
		return spaceSet
	}
	return spaceSet.complement()
}

// intersect is the units in both sets.
func (s unitSet) intersect(o unitSet) unitSet {
	var out unitSet
	i, j := 0, 0
	for i < len(s) && j < len(o) {
		lo, hi := max(s[i].lo, o[j].lo), min(s[i].hi, o[j].hi)
		if lo <= hi {
			out = append(out, unitRange{lo, hi})
		}
		if s[i].hi < o[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}
