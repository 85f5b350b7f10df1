package schemagen

import (
	"fmt"
	"go/ast"
	"strings"
	"unicode"
)

// Reference renders the module's API as the README's function reference:
// the constructor's options, then each object's fields and functions with
// their flags as `dagger call` spells them. Its text comes from the doc
// comments, so the README cannot drift from the code.
func (m *Module) Reference() (string, error) {
	if _, err := m.Schema(); err != nil {
		return "", err
	}
	var b strings.Builder
	if m.ctor != nil {
		b.WriteString("#### Constructor options\n\n`dagger call [OPTION …] FUNCTION …`; every option may be left out.\n\n| option | meaning |\n|---|---|\n")
		for _, p := range m.ctor.Type.Params.List {
			doc := m.comment[m.files[m.ctor]][m.fset.Position(p.Pos()).Line-1]
			fmt.Fprintf(&b, "| `%s` | %s |\n", m.flag(p, doc, false), cell(text(doc)+defaultNote(doc)))
		}
	}
	for _, name := range m.order {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "#### `%s`\n\n%s\n", name, firstParagraph(m.docs[name]))
		m.fieldTable(&b, name)
		if len(m.methods[name]) == 0 {
			continue
		}
		b.WriteString("\n| function and flags | returns | what it does |\n|---|---|---|\n")
		for _, fn := range m.methods[name] {
			usage := []string{"`" + kebab(fn.Name.Name) + "`"}
			for _, p := range fn.Type.Params.List {
				if exprString(p.Type) == "context.Context" {
					continue
				}
				doc := m.comment[m.files[fn]][m.fset.Position(p.Pos()).Line-1]
				usage = append(usage, "`"+m.flag(p, doc, true)+"`")
			}
			ret := "—"
			if fn.Type.Results != nil && exprString(fn.Type.Results.List[0].Type) != "error" {
				ret = "`" + m.goDisplay(fn.Type.Results.List[0].Type) + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.ReplaceAll(strings.Join(usage, " "), "|", `\|`), ret, cell(firstParagraph(text(fn.Doc))))
		}
	}
	return b.String(), nil
}

func (m *Module) fieldTable(b *strings.Builder, name string) {
	var rows []string
	for _, f := range m.structs[name].Fields.List {
		if exported(f) && !pragma(f.Doc, "private") {
			rows = append(rows, fmt.Sprintf("| `%s` | `%s` | %s |", lowerFirst(f.Names[0].Name), m.goDisplay(f.Type), cell(text(f.Doc))))
		}
	}
	if len(rows) > 0 {
		b.WriteString("\n| field | type | meaning |\n|---|---|---|\n" + strings.Join(rows, "\n") + "\n")
	}
}

// flag is an argument as the CLI takes it: --name VALUE, in brackets when
// optional, with … when repeatable.
func (m *Module) flag(p *ast.Field, doc *ast.CommentGroup, brackets bool) string {
	t := p.Type
	repeat := ""
	if a, ok := t.(*ast.ArrayType); ok {
		t, repeat = a.Elt, " …"
	}
	f := "--" + kebab(p.Names[0].Name)
	if v := m.placeholder(t); v != "" {
		f += " " + v + repeat
	}
	_, hasDefault := pragmaValue(doc, "default")
	if brackets && (pragma(doc, "optional") || hasDefault || pragma(doc, "defaultPath")) {
		f = "[" + f + "]"
	}
	return f
}

func (m *Module) placeholder(t ast.Expr) string {
	s := strings.TrimPrefix(exprString(t), "*")
	switch s {
	case "bool":
		return ""
	case "string", "int":
		return strings.ToUpper(s)
	}
	if core, ok := strings.CutPrefix(s, "dagger."); ok {
		return strings.ToUpper(core)
	}
	if values, ok := m.enums[s]; ok {
		var vs []string
		for _, v := range values {
			vs = append(vs, v.value)
		}
		return strings.Join(vs, "|")
	}
	return strings.ToUpper(s)
}

// goDisplay names a Go type as the reference shows it.
func (m *Module) goDisplay(t ast.Expr) string {
	s := exprString(t)
	list := strings.HasPrefix(s, "[]")
	s = strings.TrimLeft(s, "[]*")
	s = strings.TrimPrefix(s, "dagger.")
	switch s {
	case "string":
		s = "String"
	case "int":
		s = "Int"
	case "bool":
		s = "Boolean"
	}
	if list {
		return "[" + s + "]"
	}
	return s
}

func defaultNote(doc *ast.CommentGroup) string {
	if v, ok := pragmaValue(doc, "default"); ok {
		return " (default: `" + strings.Trim(v, `"`) + "`)"
	}
	return ""
}

func firstParagraph(s string) string {
	before, _, _ := strings.Cut(s, "\n\n")
	return strings.Join(strings.Fields(before), " ")
}

// cell keeps a table cell on one line.
func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

// kebab spells a Go or GraphQL name as the CLI does: codeAsDataRepository → code-as-data-repository.
func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Flags are every flag the module's constructor and functions take, as
// `dagger call` spells them (--code-as-data-repository).
func (m *Module) Flags() map[string]bool {
	flags := map[string]bool{}
	add := func(fn *ast.FuncDecl) {
		for _, p := range fn.Type.Params.List {
			if exprString(p.Type) != "context.Context" {
				flags["--"+kebab(p.Names[0].Name)] = true
			}
		}
	}
	if m.ctor != nil {
		add(m.ctor)
	}
	for _, fns := range m.methods {
		for _, fn := range fns {
			add(fn)
		}
	}
	return flags
}

// Functions are the module's functions as the engine serves them, each
// "Type.field" (LowcodePipelineBuild.publish): calling one is a module call,
// while reading a field of an object is not.
func (m *Module) Functions() map[string]bool {
	out := map[string]bool{}
	for recv, fns := range m.methods {
		for _, fn := range fns {
			out[m.typeName(recv)+"."+lowerFirst(fn.Name.Name)] = true
		}
	}
	return out
}
