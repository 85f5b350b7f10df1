package rules

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// Case-insensitive parts of a pattern, (?i:…), compare UTF-16 units as
// JavaScript does without the u flag: by ECMAScript's Canonicalize, which
// takes a unit's toUpperCase unless that is more than one unit (ß is SS) or
// turns a non-ASCII unit into an ASCII one (ſ is S, the Kelvin sign is not
// k). Go's (?i) folds otherwise (the Kelvin sign is k there, ς is not σ),
// so the translation spells each case-insensitive character and class out
// as the units JavaScript takes for it, and gives regexp2 no (?i).

// foldTable holds, for each BMP unit, the units Canonicalize makes equal to it.
type foldTable struct {
	class map[rune][]rune // unit → its units of equal canonical value, itself included, when more than one
	cased []rune          // the units of class, sorted
}

// folds is computed the first time a pattern has a (?i:…) part.
var folds = sync.OnceValue(func() *foldTable {
	upper := cases.Upper(language.Und)
	byCanon := map[rune][]rune{}
	for u := rune(0); u <= 0xFFFF; u++ {
		if c := canonicalize(u, upper); c != u {
			byCanon[c] = append(byCanon[c], u)
		}
	}
	f := &foldTable{class: map[rune][]rune{}}
	for c, members := range byCanon {
		members = append(members, c)
		slices.Sort(members)
		for _, m := range members {
			f.class[m] = members
			f.cased = append(f.cased, m)
		}
	}
	slices.Sort(f.cased)
	return f
})

// canonicalize is ECMAScript's Canonicalize(rer, u) for a pattern without
// the u flag and with the i flag.
func canonicalize(u rune, upper cases.Caser) rune {
	if utf16.IsSurrogate(u) || unicode.ToUpper(u) == u {
		return u // a unit whose upper case is itself, however long its full mapping
	}
	full := utf16.Encode([]rune(upper.String(string(u))))
	switch {
	case len(full) != 1:
		return u
	case u >= 128 && full[0] < 128:
		return u
	}
	return rune(full[0])
}

// unitText is the regexp2 text that matches u as JavaScript does in a
// case-insensitive part: u alone, or a class of u and its case variants.
func (f *foldTable) unitText(u rune) string {
	class := f.class[u]
	if class == nil {
		return unitText(u)
	}
	var b strings.Builder
	b.WriteString("[")
	for _, m := range class {
		fmt.Fprintf(&b, `\u%04X`, m)
	}
	b.WriteString("]")
	return b.String()
}

// unitRange is the units lo to hi of a character class.
type unitRange struct{ lo, hi rune }

// extra is the class text of the units a case-insensitive class holds beyond
// the ranges it was written with: the case variants of each, outside them.
func (f *foldTable) extra(ranges []unitRange) string {
	add := f.extraUnits(ranges)
	var b strings.Builder
	for i := 0; i < len(add); {
		j := i
		for j+1 < len(add) && add[j+1] == add[j]+1 {
			j++
		}
		fmt.Fprintf(&b, `\u%04X`, add[i])
		if j > i {
			fmt.Fprintf(&b, `-\u%04X`, add[j])
		}
		i = j + 1
	}
	return b.String()
}

// extraUnits is the units of extra, sorted.
func (f *foldTable) extraUnits(ranges []unitRange) []rune {
	ranges = merged(ranges)
	in := func(u rune) bool {
		i, found := slices.BinarySearchFunc(ranges, u, func(r unitRange, u rune) int { return int(r.lo - u) })
		return found || i > 0 && u <= ranges[i-1].hi
	}
	var add []rune
	for _, r := range ranges {
		start, _ := slices.BinarySearch(f.cased, r.lo)
		for _, u := range f.cased[start:] {
			if u > r.hi {
				break
			}
			for _, m := range f.class[u] {
				if !in(m) {
					add = append(add, m)
				}
			}
		}
	}
	slices.Sort(add)
	return slices.Compact(add)
}

// merged is ranges sorted, with those that overlap or touch made one, so
// that a class of many ranges costs no more than the units it holds.
func merged(ranges []unitRange) []unitRange {
	ranges = slices.Clone(ranges)
	slices.SortFunc(ranges, func(a, b unitRange) int { return int(a.lo - b.lo) })
	var out []unitRange
	for _, r := range ranges {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}
