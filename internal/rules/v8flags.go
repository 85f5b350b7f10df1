package rules

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"dagger/lowcode-pipeline/internal/fielderr"
)

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

// errV8CaseCarried marks a pattern refused because V8 carries the case
// folding of one part of it into another (checkV8Flags).
var errV8CaseCarried = errors.New("in Node, V8 folds the case as the last (?…:…) group it compiled left it, not as the pattern says, unlike the ECMAScript standard, so where the rule sends an image would depend on the engine")

// checkV8Flags refuses a part of the pattern whose case folding V8 (Node
// 24) decides otherwise than the standard. V8 folds the case of a class
// (and of a run of one-character alternatives, which it makes a class)
// while it walks its compiled pattern depth first: each (?ims-ims:…) group
// that changes the flags sets them on entry and back on exit, and a class
// takes whatever flags the last such step set. After the first alternative
// of a | list, V8 has walked everything that follows the list to the end of
// the pattern, so a class in a later alternative takes the flags that walk
// left: `(?i:x|(?m:a))|[k]` folds [k] (the (?m:…) group exits into (?i:…)),
// `(?i:x|[a])` does not fold [a]. The walk is simulated here, every flag a
// part may get kept; a part whose folding changes it and may get flags
// other than its own is refused. testdata/node-verdicts.mjs holds the cases.
func (t *translator) checkV8Flags() error {
	if !hasFlagsChange(t.root) {
		return nil // V8 sets no flags while it walks: all are the pattern's
	}
	w := &v8Walk{}
	w.node(t.root, caseOff, &v8Cont{}, false)
	if w.bad == nil {
		return nil
	}
	n, text := w.bad, string(t.src[w.bad.start:w.bad.end])
	what := "character class " + fielderr.Quote(text)
	if n.kind == shapeUnit {
		what = fmt.Sprintf("one-character alternative %s (V8 makes a class of such alternatives)", fielderr.Quote(text))
	}
	how := "case-sensitively"
	if !n.ignoreCase {
		how = "case-insensitively"
	}
	return fmt.Errorf("at offset %d: %s: there V8 may match it %s: %w; move its alternative before the (?…:…) group, or write out the cases it should take, e.g. [kK]",
		n.start, what, how, errV8CaseCarried)
}

func hasFlagsChange(n *shape) bool {
	if n.kind == shapeGroup && n.flagsChange {
		return true
	}
	return slices.ContainsFunc(n.kids, hasFlagsChange)
}

// caseFlags is a set of case-insensitivities V8's walk may be in.
type caseFlags uint8

const (
	caseOff caseFlags = 1 << iota
	caseOn
)

func caseOf(ignoreCase bool) caseFlags {
	if ignoreCase {
		return caseOn
	}
	return caseOff
}

// v8Walk simulates V8's walk (its regexp Analysis pass).
type v8Walk struct {
	bad    *shape // the first part refused
	factor int    // how many copies of the part walked V8 makes, as its expansion limit counts them
}

// v8Cont is what follows a part in V8's compiled pattern: walked once, by
// the first path that reaches it.
type v8Cont struct {
	walk func(caseFlags) caseFlags
	done bool
}

func (k *v8Cont) visit(s caseFlags) caseFlags {
	if k.done || k.walk == nil {
		return s
	}
	k.done = true
	return k.walk(s)
}

// check refuses leaf n when flags other than its own may reach it.
func (w *v8Walk) check(n *shape, s caseFlags) {
	if w.bad != nil || s&^caseOf(n.ignoreCase) == 0 {
		return
	}
	var foldable bool
	switch n.kind {
	case shapeClass:
		foldable = len(folds().extraUnits(n.ranges)) > 0
	case shapeUnit:
		foldable = folds().class[n.unit] != nil
	}
	if foldable {
		w.bad = n
	}
}

// node walks n with flags s, then k; it returns the flags after.
func (w *v8Walk) node(n *shape, s caseFlags, k *v8Cont, backward bool) caseFlags {
	switch n.kind {
	case shapeSeq:
		return w.seq(n.kids, s, k, backward)
	case shapeAlt:
		return w.alt(n, s, k, backward)
	case shapeGroup:
		if !n.flagsChange {
			return w.node(n.kids[0], s, k, backward)
		}
		// the group sets its flags, and its parent's back on its way out
		out := &v8Cont{walk: func(caseFlags) caseFlags { return k.visit(caseOf(n.outerCase)) }}
		return w.node(n.kids[0], caseOf(n.ignoreCase), out, backward)
	case shapeLook:
		if n.negative {
			// V8 walks the look-around's body, which ends it, then what follows
			s = w.node(n.kids[0], s, &v8Cont{}, n.behind)
			return k.visit(s)
		}
		return w.node(n.kids[0], s, &v8Cont{walk: k.visit}, n.behind)
	case shapeQuant:
		return w.quant(n, s, k, backward)
	case shapeClass:
		w.check(n, s)
	}
	return k.visit(s)
}

func (w *v8Walk) seq(kids []*shape, s caseFlags, k *v8Cont, backward bool) caseFlags {
	if len(kids) == 0 {
		return k.visit(s)
	}
	first, rest := kids[0], kids[1:]
	if backward { // a look-behind is compiled last part first
		first, rest = kids[len(kids)-1], kids[:len(kids)-1]
	}
	return w.node(first, s, &v8Cont{walk: func(s caseFlags) caseFlags { return w.seq(rest, s, k, backward) }}, backward)
}

// alt walks a | list, one alternative after the other. In a list of three
// or more, V8 sorts each run of literal alternatives and makes a class of
// their one-character ones (and of one-character ends of those that share
// a beginning), which may land at any place of the run: their units are
// checked against the flags of every place of the run, but for a run of
// one-character alternatives that opens the list, which becomes its first.
func (w *v8Walk) alt(n *shape, s caseFlags, k *v8Cont, backward bool) caseFlags {
	var run []*shape
	var runFlags caseFlags
	flush := func(first bool) {
		if len(run) > 1 && mayJoin(run) {
			for _, a := range run {
				if !first || len(a.kids) > 1 {
					for _, u := range a.kids {
						w.check(u, runFlags)
					}
				}
			}
		}
		run, runFlags = nil, 0
	}
	opensList := true
	for i, a := range n.kids {
		if len(n.kids) > 2 && isLiteral(a) {
			if len(run) == 0 {
				opensList = i == 0
			}
			run = append(run, a)
			runFlags |= s
		} else {
			flush(opensList && allSingle(run))
		}
		s = w.node(a, s, k, backward)
	}
	flush(opensList && allSingle(run))
	return s
}

func isLiteral(a *shape) bool {
	return len(a.kids) > 0 && !slices.ContainsFunc(a.kids, func(u *shape) bool { return u.kind != shapeUnit })
}

func allSingle(run []*shape) bool {
	return !slices.ContainsFunc(run, func(a *shape) bool { return len(a.kids) != 1 })
}

// mayJoin says whether V8 may make a class of some of a run's units: two
// of its alternatives are one character, or two begin alike (in any case).
func mayJoin(run []*shape) bool {
	single := 0
	seen := map[rune]bool{}
	for _, a := range run {
		if len(a.kids) == 1 {
			single++
		}
		first := a.kids[0].unit
		if class := folds().class[first]; class != nil {
			first = class[0]
		}
		if seen[first] {
			return true
		}
		seen[first] = true
	}
	return single > 1
}

// quant walks a quantifier as V8 compiles it. V8 unrolls a short one
// (x? and x{2} become choices and copies of x, walked in order) unless its
// body holds a capture or can match nothing; it makes the others loops,
// whose body Node 24 folds as its own flags say (node-verdicts.json).
func (w *v8Walk) quant(n *shape, s caseFlags, k *v8Cont, backward bool) caseFlags {
	body := n.kids[0]
	if n.max == 0 {
		return k.visit(s) // V8 compiles no body
	}
	unroll := !body.nullable() && !body.hasCapture() && n.max > 0 && n.max <= 3 && w.expand(n.max)
	if !unroll {
		after := k.visit(s)
		return after | w.node(body, s, &v8Cont{}, backward)
	}
	defer func(f int) { w.factor = f }(w.factor)
	w.factor = max(w.factor, 1) * n.max
	// min copies of the body, then max-min optional ones, each a choice
	// between the body and what follows
	var copies func(i int) *v8Cont
	copies = func(i int) *v8Cont {
		if i == n.max {
			return k
		}
		return &v8Cont{walk: func(s caseFlags) caseFlags {
			if i >= n.min && n.lazy { // a lazy choice tries what follows first
				s = k.visit(s)
			}
			s = w.node(body, s, copies(i+1), backward)
			if i >= n.min {
				s = k.visit(s)
			}
			return s
		}}
	}
	return copies(0).visit(s)
}

// expand says whether V8's expansion limit lets it make factor copies.
func (w *v8Walk) expand(factor int) bool { return max(w.factor, 1)*factor <= 6 }

func (n *shape) nullable() bool {
	switch n.kind {
	case shapeSeq:
		return !slices.ContainsFunc(n.kids, func(k *shape) bool { return !k.nullable() })
	case shapeAlt:
		return slices.ContainsFunc(n.kids, (*shape).nullable)
	case shapeGroup:
		return n.kids[0].nullable()
	case shapeQuant:
		return n.min == 0 || n.kids[0].nullable()
	case shapeUnit, shapeClass:
		return false
	}
	return true // assertions, look-arounds, back-references
}

func (n *shape) hasCapture() bool {
	return n.capture || slices.ContainsFunc(n.kids, (*shape).hasCapture)
}

// v8OneByteFolds are the units past Latin-1 whose case variants include a
// Latin-1 one: Ÿ (ÿ), Μ and μ (µ). In a (?i:…) part V8 (Node 24) matches
// none of them against a text of Latin-1 characters alone, which it keeps
// one byte a character, though it does against the same character in a
// longer text, and with the i flag: /(?i:μ)/.test("µ") is false,
// /(?i:μ)/.test("µ€") true (probe run against Node 24.21.0). No
// translation agrees with that on every text, so the pattern is refused.
var v8OneByteFolds = []rune{0x178, 0x39C, 0x3BC}

// noteOneByteFold notes, once, a case-insensitive unit or class range lo to
// hi that holds one of v8OneByteFolds; negated says the range is of a class
// that excludes what it holds ([^…]).
func (t *translator) noteOneByteFold(lo, hi rune, negated bool) {
	for _, u := range v8OneByteFolds {
		if t.oneByteFold != nil || u < lo || u > hi {
			continue
		}
		latin1 := folds().class[u][0]
		what, rewrite := "matches", fmt.Sprintf("spell the cases out in a class outside (?i:…), e.g. [%s]", classOf(folds().class[u]))
		if negated {
			var outside []rune // its case variants the range does not hold
			for _, v := range folds().class[u] {
				if v < lo || v > hi {
					outside = append(outside, v)
				}
			}
			what, rewrite = "excludes", fmt.Sprintf("put the class outside (?i:…), spelling out the cases it excludes, e.g. [^…%s]", classOf(outside))
		}
		t.oneByteFold = t.fail("a (?i:…) part %s U+%04X %s, whose case variant in Latin-1 is %s: Node's V8 does not match them in a text "+
			"of Latin-1 characters alone (\"µ-api\"), unlike the ECMAScript standard, so where the rule sends an image would depend on the text; %s",
			what, u, string(u), fielderr.Quote(string(latin1)), rewrite)
	}
}

// classOf is the units as the escapes of a class.
func classOf(units []rune) string {
	var b strings.Builder
	for _, u := range units {
		fmt.Fprintf(&b, `\u%04X`, u)
	}
	return b.String()
}
