package rules

import (
	"errors"
	"fmt"
	"slices"
)

// A backtracking engine, such as Node's V8, tries the ways a pattern can
// read a text one after the other. Where a repeated part can read the same
// text in two ways, the ways multiply with each repetition: (a+)+$ takes
// 2^40 steps to fail on forty a's and a "!". checkBacktracking refuses such
// patterns when they are compiled, by their shape alone, so that no clock
// has to stop a match: the cost of a pattern it accepts is bounded by a low
// power of the length of the text (image references are at most a few
// hundred characters).
//
// The pattern is read as a position automaton (Glushkov's): one state per
// part that reads a unit, an edge for each way a part may follow another,
// counted (two loops around the same part give it two edges). It is
// refused when
//   - a state can come back to itself in two ways on the same text: an edge
//     counted twice on a cycle, or two paths of a cycle that split and meet
//     again (found in the product of the automaton with itself); that is
//     exponential;
//   - more than maxDegree repeated parts can take the same text one after
//     the other (`.*a.*a.*a.*a` on a text of a's): that is a polynomial of
//     that degree;
//   - a back-reference is repeated (its text is only known while matching);
//   - a repeated group's alternatives can begin with the same unit, such as
//     (a|ab)*: not always exponential, but a shape to write otherwise.
//
// Assertions and look-arounds read nothing, and are taken as always true
// (which can only add ways); the body of a look-around is checked as a
// pattern of its own. Counted repeats ({2,5}) are taken as loops.
func checkBacktracking(src []rune, root *shape) error {
	c := &backtracker{src: src}
	degree, chain, err := c.analyze(root, true)
	if err != nil {
		return err
	}
	if degree > maxDegree {
		return c.degreeRefusal(chain, degree)
	}
	return nil
}

// maxDegree is the highest power of the text's length a pattern may cost:
// 520 (the longest image reference) to the third is 1.4e8 steps at worst.
const maxDegree = 3

// maxWork bounds the steps of the check itself, which is quadratic in the
// states of a loop at worst: a pattern that needs more is refused.
const maxWork = 1_000_000

var errTooComplex = errors.New("too complex to check that matching it ends in time: split the rule, or write its repeated parts more simply")

type backtracker struct {
	src  []rune
	work int
}

// automaton is the position automaton of a pattern.
type automaton struct {
	pos   []*shape   // the parts that read a unit
	loops [][]*shape // per state, the repeated quantifiers around it, innermost first
	next  [][]edge   // per state, where it may go
	first []edge     // where a match may start
	final []bool     // states after which the match surely ends
}

type edge struct {
	to    int
	count int    // ways, capped at 2
	via   *shape // the loop that made it counted twice
}

// ways is a multiset of states: the first or last parts of a pattern.
type ways map[int]int

func (w ways) add(o ways, times int) {
	for k, v := range o {
		w[k] = min(2, w[k]+v*times)
	}
}

// part is what building a sub-pattern gives.
type part struct {
	first, last ways
	nullable    bool
	sureLast    ways // last parts after which nothing can fail (no assertion)
	sureNull    bool // matches empty with no assertion
}

// analyze builds root's automaton, refuses it for the shapes above, and
// gives the degree of its cost: the repeated parts of the longest chain.
func (c *backtracker) analyze(root *shape, top bool) (int, []*shape, error) {
	a := &automaton{}
	var looks []*shape
	var edges map[[2]int]*edge = map[[2]int]*edge{}
	var build func(n *shape, loops []*shape) (part, error)
	link := func(from, to ways, via *shape) error {
		for f, fc := range from {
			for t, tc := range to {
				c.work++
				if c.work > maxWork {
					return errTooComplex
				}
				e := edges[[2]int{f, t}]
				if e == nil {
					e = &edge{to: t}
					edges[[2]int{f, t}] = e
				} else if e.via == nil && via != nil {
					e.via = via
				}
				e.count = min(2, e.count+fc*tc)
			}
		}
		return nil
	}
	build = func(n *shape, loops []*shape) (part, error) {
		switch n.kind {
		case shapeUnit, shapeClass, shapeBackref:
			if n.kind == shapeBackref && len(loops) > 0 {
				return part{}, c.refusal(loops[0], "a back-reference in a repeated part: its text is only known while matching, so nothing bounds the ways to read it; repeat what the group holds instead")
			}
			if n.kind == shapeBackref {
				n.set = anyUnit
			}
			a.pos = append(a.pos, n)
			a.loops = append(a.loops, loops)
			s := ways{len(a.pos) - 1: 1}
			return part{first: s, last: s, sureLast: s}, nil
		case shapeAssert:
			return part{first: ways{}, last: ways{}, sureLast: ways{}, nullable: true}, nil
		case shapeLook:
			looks = append(looks, n.kids[0])
			return part{first: ways{}, last: ways{}, sureLast: ways{}, nullable: true}, nil
		case shapeGroup:
			return build(n.kids[0], loops)
		case shapeSeq:
			p := part{first: ways{}, last: ways{}, sureLast: ways{}, nullable: true, sureNull: true}
			for _, k := range n.kids {
				q, err := build(k, loops)
				if err != nil {
					return part{}, err
				}
				if err := link(p.last, q.first, nil); err != nil {
					return part{}, err
				}
				if p.nullable {
					p.first.add(q.first, 1)
				}
				if q.nullable {
					p.last.add(q.last, 1)
				} else {
					p.last = copyWays(q.last)
				}
				if q.sureNull {
					p.sureLast.add(q.sureLast, 1)
				} else {
					p.sureLast = copyWays(q.sureLast)
				}
				p.nullable = p.nullable && q.nullable
				p.sureNull = p.sureNull && q.sureNull
			}
			return p, nil
		case shapeAlt:
			p := part{first: ways{}, last: ways{}, sureLast: ways{}}
			for _, k := range n.kids {
				q, err := build(k, loops)
				if err != nil {
					return part{}, err
				}
				p.first.add(q.first, 1)
				p.last.add(q.last, 1)
				p.sureLast.add(q.sureLast, 1)
				p.nullable = p.nullable || q.nullable
				p.sureNull = p.sureNull || q.sureNull
			}
			return p, nil
		case shapeQuant:
			if n.max == 0 {
				return part{first: ways{}, last: ways{}, sureLast: ways{}, nullable: true, sureNull: true}, nil
			}
			inner := loops
			if n.repeats() {
				inner = append([]*shape{n}, loops...)
				if err := c.overlappingAlternatives(n); err != nil {
					return part{}, err
				}
			}
			q, err := build(n.kids[0], inner)
			if err != nil {
				return part{}, err
			}
			if n.repeats() {
				if err := link(q.last, q.first, n); err != nil {
					return part{}, err
				}
			}
			q.nullable = q.nullable || n.min == 0
			q.sureNull = q.sureNull || n.min == 0
			return q, nil
		}
		return part{}, fmt.Errorf("unknown part %d", n.kind)
	}
	p, err := build(root, nil)
	if err != nil {
		return 0, nil, err
	}
	a.next = make([][]edge, len(a.pos))
	for k, e := range edges {
		a.next[k[0]] = append(a.next[k[0]], *e)
	}
	for i := range a.next {
		slices.SortFunc(a.next[i], func(x, y edge) int { return x.to - y.to })
	}
	a.final = make([]bool, len(a.pos))
	for s := range p.sureLast {
		a.final[s] = true
	}
	for s, n := range p.first {
		a.first = append(a.first, edge{to: s, count: n})
	}
	if err := c.exponential(a); err != nil {
		return 0, nil, err
	}
	degree, chain, err := c.polynomial(a, top && !anchored(root))
	if err != nil {
		return 0, nil, err
	}
	extra := 0
	for _, l := range looks {
		d, _, err := c.analyze(l, false)
		if err != nil {
			return 0, nil, err
		}
		extra = max(extra, d)
	}
	return degree + extra, chain, nil
}

func copyWays(w ways) ways {
	out := ways{}
	out.add(w, 1)
	return out
}
