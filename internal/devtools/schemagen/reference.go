package schemagen

// The module's names as `dagger call` spells them: the flags and functions
// that the documented commands are checked against (internal/devtools/ciexamples).

import (
	"go/ast"
	"strings"
	"unicode"
)

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
