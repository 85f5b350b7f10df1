package rules

import (
	"maps"
	"strings"

	"dagger/lowcode-pipeline/internal/fielderr"
)

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
			return t.fail(`duplicate group name %s: a name repeats only in different alternatives of one | list`, fielderr.Quote(name))
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
	g := &shape{kind: shapeGroup, start: t.tok, end: -1, ignoreCase: f.ignoreCase, outerCase: parent.ignoreCase,
		flagsChange: f.ignoreCase != parent.ignoreCase || f.multiline != parent.multiline || f.dotAll != parent.dotAll,
		capture:     f.kind == "(" || f.kind == "name"}
	if g.capture {
		t.opened++
		g.group = t.opened
	}
	switch f.kind {
	case "=", "!":
		g.kind, g.negative = shapeLook, f.kind == "!"
	case "<=", "<!":
		g.kind, g.behind, g.negative = shapeLook, true, f.kind == "<!"
	}
	f.b = newShapeBuilder(g, t.i)
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
	g := f.b.group
	g.kids = []*shape{f.b.body(t.i)}
	t.i++
	g.end = t.i
	parent.b.add(g)
	t.write(")", true)
	if f.kind == "<=" || f.kind == "<!" {
		t.atom, t.assertion = false, true // JavaScript may not repeat a look-behind
	}
	return nil
}
