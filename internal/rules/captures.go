package rules

import (
	"errors"
	"fmt"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// errCaptureReset marks a pattern refused because JavaScript and regexp2
// may give a back-reference different text (checkRepeatedCaptures).
var errCaptureReset = errors.New("JavaScript clears a group at each repetition of a part around it and drops a repetition that takes no text, the module's engine keeps both, so where the rule sends an image would depend on the engine")

// checkRepeatedCaptures refuses a back-reference to a group whose text
// JavaScript and regexp2 may tell apart. ECMAScript clears the groups of a
// quantified part at the start of each repetition, and fails a repetition
// that takes no text once the minimum count is met (RepeatMatcher);
// regexp2, as .NET, keeps the last text a group took and ends the loop
// with such a repetition: `^(?:(a)|b)+\1$` finds "ab" in Node, not "aba",
// and regexp2 the reverse. Where the loops stop can differ too, and a
// look-around keeps the first way its body matches: `(?=((?:b?|a)+))\1`
// takes "a" in Node, "" in regexp2. Without a back-reference a group's
// text cannot change whether a rule matches (a look-around's own success
// does not depend on which way it found), so only such groups matter.
func checkRepeatedCaptures(src []rune, root *shape) error {
	type hazard struct {
		group, loop *shape
		inLook      bool // the loop is in a look-around that holds the group, not around the group
	}
	hazards := map[int]hazard{}
	var refs []*shape
	// loops are the quantified parts around a part; lookLoops, for each
	// positive look-around around it, a part in it that may repeat on no text
	var walk func(n *shape, loops, lookLoops []*shape)
	walk = func(n *shape, loops, lookLoops []*shape) {
		switch {
		case n.kind == shapeBackref:
			refs = append(refs, n)
		case n.kind == shapeQuant:
			loops = append(loops[:len(loops):len(loops)], n)
		case n.kind == shapeLook && !n.negative:
			if q := emptyRepeat(n.kids[0]); q != nil {
				lookLoops = append(lookLoops[:len(lookLoops):len(lookLoops)], q)
			}
		case n.kind == shapeGroup && n.capture:
			for _, q := range loops {
				if forgets(q, n) {
					hazards[n.group] = hazard{group: n, loop: q}
					break
				}
			}
			if _, ok := hazards[n.group]; !ok && len(lookLoops) > 0 {
				hazards[n.group] = hazard{group: n, loop: lookLoops[0], inLook: true}
			}
		}
		for _, k := range n.kids {
			walk(k, loops, lookLoops)
		}
	}
	walk(root, nil, nil)
	text := func(n *shape) string { return shortQuote(string(src[n.start:n.end])) }
	for _, r := range refs {
		for _, g := range r.refs {
			h, ok := hazards[g]
			switch {
			case !ok:
			case !h.inLook:
				return fmt.Errorf("at offset %d: back-reference %s to the group %s in the quantified part %s: %w; capture outside the quantified part, e.g. (?:a|b)*(a)\\1 rather than (?:(a)|b)+\\1",
					r.start, text(r), text(h.group), text(h.loop), errCaptureReset)
			default:
				return fmt.Errorf("at offset %d: back-reference %s to the group %s in a look-around whose quantified part %s can repeat on no text: %w; make each repetition take text, e.g. (?:b|a)+ rather than (?:b?|a)+",
					r.start, text(r), text(h.group), text(h.loop), errCaptureReset)
			}
		}
	}
	return nil
}

// shortQuote quotes a part of the pattern in at most about 60 bytes: an
// error names up to three.
func shortQuote(s string) string {
	const most = 60
	if q := fielderr.Quote(s); len(q) <= most {
		return q
	}
	r := []rune(s)
	for len(r) > 0 && len(fielderr.Quote(string(r))) > most-3 {
		r = r[:len(r)*3/4]
	}
	return fielderr.Quote(string(r)) + "…"
}

// forgets says whether JavaScript may give group g, inside the quantified
// part q, other text than regexp2 does after q. It does not when every
// repetition that can succeed sets g (`((a)|b)+\1`: \1 is the last
// repetition's text in both) and none can take no text; nor in a ? part
// that cannot take no text (one repetition: nothing to clear).
func forgets(q, g *shape) bool {
	body := q.kids[0]
	switch {
	case q.max == 0:
		return false // never tried: the group is unset in both
	case body.nullable():
		return q.min == 0 || q.repeats()
	}
	return q.repeats() && !setsEachTime(body, g)
}

// emptyRepeat is a quantified part in n that may repeat on no text past
// its minimum count, where JavaScript and regexp2 stop its loop apart.
func emptyRepeat(n *shape) *shape {
	if n.kind == shapeQuant && n.max != 0 && (n.min == 0 || n.repeats()) && n.kids[0].nullable() {
		return n
	}
	for _, k := range n.kids {
		if q := emptyRepeat(k); q != nil {
			return q
		}
	}
	return nil
}

// setsEachTime says whether every way n matches sets the group g.
func setsEachTime(n, g *shape) bool {
	switch n.kind {
	case shapeGroup:
		return n == g || setsEachTime(n.kids[0], g)
	case shapeSeq:
		for _, k := range n.kids {
			if setsEachTime(k, g) {
				return true
			}
		}
		return false
	case shapeAlt:
		for _, k := range n.kids {
			if !setsEachTime(k, g) {
				return false
			}
		}
		return true
	case shapeQuant:
		return n.min > 0 && setsEachTime(n.kids[0], g)
	case shapeLook:
		return !n.negative && setsEachTime(n.kids[0], g)
	}
	return false
}
