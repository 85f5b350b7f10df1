package rules

import (
	"fmt"
	"slices"
	"strings"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// sccs gives each of n states its strongly connected component (Tarjan's,
// without recursion); components are numbered in reverse topological order.
func sccs(n int, next [][]int) (comp []int, count int) {
	comp = make([]int, n)
	index := make([]int, n)
	low := make([]int, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	counter := 0
	type frame struct{ v, i int }
	for root := range n {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = counter, counter
		counter++
		stack = append(stack, root)
		on[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			succ := next[f.v]
			if f.i < len(succ) {
				w := succ[f.i]
				f.i++
				if index[w] < 0 {
					index[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					on[w] = true
					call = append(call, frame{w, 0})
				} else if on[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					comp[w] = count
					if w == v {
						break
					}
				}
				count++
			}
		}
	}
	return comp, count
}

func (a *automaton) succ() [][]int {
	out := make([][]int, len(a.next))
	for i, es := range a.next {
		for _, e := range es {
			out[i] = append(out[i], e.to)
		}
	}
	return out
}

// exponential refuses a state that can come back to itself in two ways
// on the same text.
func (c *backtracker) exponential(a *automaton) error {
	n := len(a.pos)
	comp, _ := sccs(n, a.succ())
	members := make([][]int, n)
	for i := range n {
		members[comp[i]] = append(members[comp[i]], i)
		for _, e := range a.next[i] {
			if e.count > 1 && comp[e.to] == comp[i] {
				return c.refusal(e.via, "it can read the same text in more than one way (a repetition inside a repetition), so a backtracking engine such as Node's takes time exponential in the text's length to find it does not match; repeat once, e.g. a+ rather than (a+)+")
			}
		}
	}
	for _, ms := range members {
		if len(ms) < 2 {
			continue // one state comes back to itself in one way at most
		}
		if err := c.splitCycle(a, comp, ms); err != nil {
			return err
		}
	}
	return nil
}

// splitCycle looks, in the product of a loop's states with themselves,
// for a component holding a pair of equal states and a pair of different
// ones: two paths from a state back to it on the same text.
func (c *backtracker) splitCycle(a *automaton, comp []int, ms []int) error {
	local := map[int]int{}
	for k, s := range ms {
		local[s] = k
	}
	m := len(ms)
	id := func(x, y int) int { return local[x]*m + local[y] }
	seen := map[int]bool{}
	var order []int
	var queue []int
	for _, s := range ms {
		p := id(s, s)
		seen[p] = true
		queue = append(queue, p)
	}
	succ := map[int][]int{}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		order = append(order, p)
		x, y := ms[p/m], ms[p%m]
		for _, ex := range a.next[x] {
			if comp[ex.to] != comp[x] {
				continue
			}
			for _, ey := range a.next[y] {
				c.work++
				if c.work > maxWork {
					return errTooComplex
				}
				if comp[ey.to] != comp[y] || !a.pos[ex.to].set.meets(a.pos[ey.to].set) {
					continue
				}
				q := id(ex.to, ey.to)
				succ[p] = append(succ[p], q)
				if !seen[q] {
					seen[q] = true
					queue = append(queue, q)
				}
			}
		}
	}
	index := map[int]int{}
	for k, p := range order {
		index[p] = k
	}
	adj := make([][]int, len(order))
	for k, p := range order {
		for _, q := range succ[p] {
			adj[k] = append(adj[k], index[q])
		}
	}
	pc, _ := sccs(len(order), adj)
	diag := map[int]int{}
	for k, p := range order {
		if p/m == p%m {
			diag[pc[k]] = p
		}
	}
	for k, p := range order {
		if d, ok := diag[pc[k]]; ok && p/m != p%m {
			loop := commonLoop(a, ms[d/m], ms[p/m], ms[p%m])
			return c.refusal(loop, "it can read the same text in more than one way (its alternatives or parts overlap, as \\w and \\d both read a digit), so a backtracking engine such as Node's takes time exponential in the text's length to find it does not match; make the parts exclusive, e.g. \\w+ rather than (\\w|\\d)+")
		}
	}
	return nil
}

// commonLoop is the innermost repeated part around all the states.
func commonLoop(a *automaton, states ...int) *shape {
	for _, l := range a.loops[states[0]] {
		if !slices.ContainsFunc(states[1:], func(s int) bool { return !slices.Contains(a.loops[s], l) }) {
			return l
		}
	}
	return nil
}

// polynomial gives the longest chain of repeated parts that can take the
// same text one after the other, each its own loop of states: matching a
// text that does not match costs its length to the power of the chain's
// length. search adds the engine's search for a start at each place of
// the text (a pattern that does not begin with ^). A state after which
// the match surely succeeds costs nothing more: the engine stops there.
func (c *backtracker) polynomial(a *automaton, search bool) (int, []*shape, error) {
	n := len(a.pos)
	sets := make([]unitSet, n, n+1)
	next := make([][]int, n, n+1)
	for i := range n {
		sets[i] = a.pos[i].set
		if a.final[i] {
			continue
		}
		for _, e := range a.next[i] {
			if !a.final[e.to] {
				next[i] = append(next[i], e.to)
			}
		}
	}
	if search {
		s := n
		sets = append(sets, anyUnit)
		next = append(next, []int{s})
		for _, e := range a.first {
			if !a.final[e.to] {
				next[s] = append(next[s], e.to)
			}
		}
		n++
	}
	comp, count := sccs(n, next)
	members := make([][]int, count)
	loop := make([]bool, count)
	for i := range n {
		members[comp[i]] = append(members[comp[i]], i)
		if slices.Contains(next[i], i) {
			loop[comp[i]] = true
		}
	}
	for k, ms := range members {
		loop[k] = loop[k] || len(ms) > 1
	}
	// components in topological order are count-1 down to 0; best[k] is the
	// longest chain starting at k, through what k reaches
	compNext := make([][]int, count)
	for i := range n {
		for _, t := range next[i] {
			if comp[t] != comp[i] {
				compNext[comp[i]] = append(compNext[comp[i]], comp[t])
			}
		}
	}
	best := make([]int, count)
	via := make([]int, count)
	for k := 0; k < count; k++ {
		via[k] = -1
		if !loop[k] {
			continue
		}
		best[k] = 1
		seen := map[int]bool{k: true}
		stack := []int{k}
		var reached []int
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, y := range compNext[x] {
				c.work++
				if c.work > maxWork {
					return 0, nil, errTooComplex
				}
				if !seen[y] {
					seen[y] = true
					stack = append(stack, y)
					if loop[y] {
						reached = append(reached, y)
					}
				}
			}
		}
		slices.Sort(reached)
		for _, r := range reached {
			if best[r]+1 <= best[k] {
				continue
			}
			ok, err := c.sameText(members[k], members[r], comp, next, sets)
			if err != nil {
				return 0, nil, err
			}
			if ok {
				best[k], via[k] = best[r]+1, r
			}
		}
	}
	top := -1
	for k := range count {
		if loop[k] && (top < 0 || best[k] > best[top]) {
			top = k
		}
	}
	if top < 0 {
		return 0, nil, nil
	}
	var chain []*shape
	for k := top; k >= 0; k = via[k] {
		s := members[k][0]
		if s >= len(a.pos) {
			chain = append(chain, nil) // the search for a start
		} else if ls := a.loops[s]; len(ls) > 0 {
			chain = append(chain, ls[0])
		}
	}
	return best[top], chain, nil
}

// sameText says whether states p of loop A and q of loop B, reached from
// A, take one text the three ways p→p, p→q and q→q.
func (c *backtracker) sameText(A, B []int, comp []int, next [][]int, sets []unitSet) (bool, error) {
	ca, cb := comp[A[0]], comp[B[0]]
	type triple struct{ x, y, z int }
	for _, p := range A {
		for _, q := range B {
			start := triple{p, p, q}
			seen := map[triple]bool{start: true}
			queue := []triple{start}
			for len(queue) > 0 {
				t := queue[0]
				queue = queue[1:]
				for _, x := range next[t.x] {
					if comp[x] != ca {
						continue
					}
					for _, y := range next[t.y] {
						for _, z := range next[t.z] {
							c.work++
							if c.work > maxWork {
								return false, errTooComplex
							}
							if comp[z] != cb || !sets[x].meets(sets[z]) || !sets[y].intersect(sets[x]).meets(sets[z]) {
								continue
							}
							u := triple{x, y, z}
							if x == p && y == q && z == q {
								return true, nil
							}
							if !seen[u] {
								seen[u] = true
								queue = append(queue, u)
							}
						}
					}
				}
			}
		}
	}
	return false, nil
}

// overlappingAlternatives refuses a repeated group whose alternatives can
// begin with the same unit, such as (a|ab)*.
func (c *backtracker) overlappingAlternatives(q *shape) error {
	body := q.kids[0]
	for body.kind == shapeGroup {
		body = body.kids[0]
	}
	if body.kind != shapeAlt {
		return nil
	}
	var seen unitSet
	for _, alt := range body.kids {
		f, _ := firstUnits(alt)
		if f.meets(seen) {
			return c.refusal(q, "two of its alternatives can begin with the same character, so a backtracking engine such as Node's tries both at each repetition; make the alternatives begin differently, e.g. (ab?)* rather than (a|ab)*")
		}
		seen = seen.union(f)
	}
	return nil
}

// firstUnits is the units a part can begin with, and whether it can be empty.
func firstUnits(n *shape) (unitSet, bool) {
	switch n.kind {
	case shapeUnit, shapeClass:
		return n.set, false
	case shapeBackref:
		return anyUnit, true
	case shapeGroup:
		return firstUnits(n.kids[0])
	case shapeQuant:
		if n.max == 0 {
			return nil, true
		}
		f, empty := firstUnits(n.kids[0])
		return f, empty || n.min == 0
	case shapeSeq:
		var out unitSet
		for _, k := range n.kids {
			f, empty := firstUnits(k)
			out = out.union(f)
			if !empty {
				return out, false
			}
		}
		return out, true
	case shapeAlt:
		var out unitSet
		empty := false
		for _, k := range n.kids {
			f, e := firstUnits(k)
			out, empty = out.union(f), empty || e
		}
		return out, empty
	}
	return nil, true // assertions, look-arounds
}

// anchored says whether every match must begin at the start of the text.
func anchored(n *shape) bool {
	switch n.kind {
	case shapeAssert:
		return n.anchor
	case shapeGroup:
		return anchored(n.kids[0])
	case shapeSeq:
		for _, k := range n.kids {
			if k.kind == shapeAssert && k.anchor {
				return true
			}
			if f, empty := firstUnits(k); !empty || len(f) > 0 {
				return anchored(k)
			}
		}
	case shapeAlt:
		return !slices.ContainsFunc(n.kids, func(k *shape) bool { return !anchored(k) })
	}
	return false
}

func (c *backtracker) text(n *shape) string {
	return fielderr.Quote(string(c.src[n.start:n.end]))
}

func (c *backtracker) refusal(loop *shape, why string) error {
	if loop == nil {
		return fmt.Errorf("a repeated part: %s", why)
	}
	return fmt.Errorf("at offset %d: the repeated part %s: %s", loop.start, c.text(loop), why)
}

func (c *backtracker) degreeRefusal(chain []*shape, degree int) error {
	var parts []string
	for _, l := range chain {
		if l == nil {
			parts = append(parts, "the search for a start at each place (no leading ^)")
			continue
		}
		parts = append(parts, c.text(l))
	}
	return fmt.Errorf("its repeated parts can each take the same text in turn (%s), so a backtracking engine such as Node's takes time to the power %d of the text's length to find it does not match (at most %d is accepted); make each exclude what ends it, e.g. [^-]*- rather than .*-",
		strings.Join(parts, ", "), degree, maxDegree)
}
