package rules

import (
	"errors"
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
