// Package schemagen writes the GraphQL schema a Dagger v0.21 engine serves
// for a Go module, read from the module's source: objects reachable from the
// main object, their exported fields and methods, enums, and the constructor.
// It follows the engine's conventions (learnt from a schema a real engine
// served, kept in testdata): types named with the module's prefix, object
// arguments typed ID, every object a Node with an XID scalar and a
// loadXFromID query. The engine checks' queries are validated against it.
package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	gql "github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
)

// Module is a Go Dagger module's source as the generator needs it.
type Module struct {
	Name    string // dagger.json's name, e.g. lowcode-pipeline
	prefix  string // LowcodePipeline
	structs map[string]*ast.StructType
	docs    map[string]string // type name → doc
	methods map[string][]*ast.FuncDecl
	enums   map[string][]enumValue
	ctor    *ast.FuncDecl
	fset    *token.FileSet
	comment map[string]map[int]*ast.CommentGroup // file → end line → comment
	files   map[*ast.FuncDecl]string
	// expected is the object type an ID argument stands for (the engine's
	// @expectedType), set by Schema
	expected map[*gql.ArgumentDefinition]string
}

type enumValue struct{ name, value, doc string }

// Load reads the module's Go files in dir (name.go, or name.go.txt for
// fixtures), leaving out tests and generated code.
func Load(name, dir string) (*Module, error) {
	m := &Module{
		Name: name, prefix: camel(name), structs: map[string]*ast.StructType{}, docs: map[string]string{},
		methods: map[string][]*ast.FuncDecl{}, enums: map[string][]enumValue{}, fset: token.NewFileSet(),
		comment: map[string]map[int]*ast.CommentGroup{}, files: map[*ast.FuncDecl]string{},
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		n := e.Name()
		if !(strings.HasSuffix(n, ".go") || strings.HasSuffix(n, ".go.txt")) || strings.Contains(n, "_test.go") || strings.HasPrefix(n, "dagger.gen.go") {
			continue
		}
		f, err := parser.ParseFile(m.fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		m.add(n, f)
	}
	if m.structs[m.prefix] == nil {
		return nil, fmt.Errorf("no main object %s in %s", m.prefix, dir)
	}
	return m, nil
}

func (m *Module) add(file string, f *ast.File) {
	byLine := map[int]*ast.CommentGroup{}
	for _, c := range f.Comments {
		byLine[m.fset.Position(c.End()).Line] = c
	}
	m.comment[file] = byLine
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			m.files[d] = file
			if d.Recv == nil {
				if d.Name.Name == "New" {
					m.ctor = d
				}
				continue
			}
			if d.Name.IsExported() {
				recv := strings.TrimPrefix(exprString(d.Recv.List[0].Type), "*")
				m.methods[recv] = append(m.methods[recv], d)
			}
		case *ast.GenDecl:
			m.addGen(d)
		}
	}
}

func (m *Module) addGen(d *ast.GenDecl) {
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			doc := d.Doc
			if s.Doc != nil {
				doc = s.Doc
			}
			m.docs[s.Name.Name] = text(doc)
			if st, ok := s.Type.(*ast.StructType); ok {
				m.structs[s.Name.Name] = st
			} else if id, ok := s.Type.(*ast.Ident); ok && id.Name == "string" {
				m.enums[s.Name.Name] = nil
			}
		case *ast.ValueSpec:
			id, ok := s.Type.(*ast.Ident)
			if !ok || d.Tok != token.CONST {
				continue
			}
			for i, n := range s.Names {
				var value string
				if i < len(s.Values) {
					if lit, ok := s.Values[i].(*ast.BasicLit); ok {
						value, _ = strconv.Unquote(lit.Value)
					}
				}
				m.enums[id.Name] = append(m.enums[id.Name], enumValue{strings.ToUpper(strings.TrimPrefix(n.Name, id.Name)), value, text(s.Doc)})
			}
		}
	}
}

// Schema is the module's part of the schema the engine serves.
func (m *Module) Schema() (*gql.SchemaDocument, error) {
	m.expected = map[*gql.ArgumentDefinition]string{}
	doc := &gql.SchemaDocument{}
	query := &gql.Definition{Kind: gql.Object, Name: "Query"}
	seen := map[string]bool{}
	var walk func(name string) error
	var objects []string
	walk = func(name string) error {
		if seen[name] {
			return nil
		}
		seen[name] = true
		objects = append(objects, name)
		for _, dep := range m.references(name) {
			if err := walk(dep); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(m.prefix); err != nil {
		return nil, err
	}
	enums := map[string]bool{}
	for _, name := range objects {
		def, used, err := m.object(name)
		if err != nil {
			return nil, err
		}
		for _, e := range used {
			enums[e] = true
		}
		doc.Definitions = append(doc.Definitions, def, &gql.Definition{
			Kind: gql.Scalar, Name: m.typeName(name) + "ID", Description: "A unique identifier for an object.",
		})
		query.Fields = append(query.Fields, &gql.FieldDefinition{
			Name:      "load" + m.typeName(name) + "FromID",
			Arguments: gql.ArgumentDefinitionList{{Name: "id", Type: gql.NonNullNamedType(m.typeName(name)+"ID", nil)}},
			Type:      gql.NonNullNamedType(m.typeName(name), nil),
		})
	}
	ctor, used, err := m.constructor()
	if err != nil {
		return nil, err
	}
	for _, e := range used {
		enums[e] = true
	}
	query.Fields = append(query.Fields, ctor)
	for name := range enums {
		def := &gql.Definition{Kind: gql.Enum, Name: m.typeName(name), Description: m.docs[name]}
		for _, v := range m.enums[name] {
			def.EnumValues = append(def.EnumValues, &gql.EnumValueDefinition{Name: v.name, Description: v.doc})
		}
		slices.SortFunc(def.EnumValues, func(a, b *gql.EnumValueDefinition) int { return strings.Compare(a.Name, b.Name) })
		doc.Definitions = append(doc.Definitions, def)
	}
	slices.SortFunc(doc.Definitions, func(a, b *gql.Definition) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(query.Fields, func(a, b *gql.FieldDefinition) int { return strings.Compare(a.Name, b.Name) })
	doc.Extensions = gql.DefinitionList{query}
	return doc, nil
}

// SDL renders the schema as the repository keeps it.
func (m *Module) SDL() ([]byte, error) {
	doc, err := m.Schema()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The GraphQL schema a Dagger v0.21.8 engine serves for the %s module, generated from its Go\n"+
		"# source by internal/devtools/schemagen (UPDATE_SDL=1 go test ./internal/devtools/schemagen rewrites it). The engine\n"+
		"# checks' queries in tests/ are validated against it together with the core API.\n\n", m.Name)
	formatter.NewFormatter(&b, formatter.WithIndent("  ")).FormatSchemaDocument(doc)
	return b.Bytes(), nil
}

// references are the module's own types an object's fields and methods return.
func (m *Module) references(name string) []string {
	var out []string
	add := func(e ast.Expr) {
		base := strings.TrimLeft(exprString(e), "[]*")
		if _, ok := m.structs[base]; ok {
			out = append(out, base)
		}
	}
	for _, f := range m.structs[name].Fields.List {
		if exported(f) && !pragma(f.Doc, "private") {
			add(f.Type)
		}
	}
	for _, fn := range m.methods[name] {
		if fn.Type.Results != nil {
			add(fn.Type.Results.List[0].Type)
		}
	}
	return out
}

func (m *Module) object(name string) (*gql.Definition, []string, error) {
	tn := m.typeName(name)
	def := &gql.Definition{Kind: gql.Object, Name: tn, Description: m.docs[name], Interfaces: []string{"Node"}}
	def.Fields = append(def.Fields, &gql.FieldDefinition{Name: "id", Description: "A unique identifier for this " + tn + ".", Type: gql.NonNullNamedType("ID", nil)})
	var enums []string
	for _, f := range m.structs[name].Fields.List {
		if !exported(f) || pragma(f.Doc, "private") {
			continue
		}
		t, e, err := m.gqlType(f.Type, false)
		if err != nil {
			return nil, nil, fmt.Errorf("%s.%s: %w", name, f.Names[0].Name, err)
		}
		enums = append(enums, e...)
		t.NonNull = true
		def.Fields = append(def.Fields, &gql.FieldDefinition{Name: lowerFirst(f.Names[0].Name), Description: text(f.Doc), Type: t})
	}
	for _, fn := range m.methods[name] {
		fd, e, err := m.function(fn)
		if err != nil {
			return nil, nil, fmt.Errorf("%s.%s: %w", name, fn.Name.Name, err)
		}
		enums = append(enums, e...)
		def.Fields = append(def.Fields, fd)
	}
	slices.SortFunc(def.Fields, func(a, b *gql.FieldDefinition) int { return strings.Compare(a.Name, b.Name) })
	return def, enums, nil
}

func (m *Module) constructor() (*gql.FieldDefinition, []string, error) {
	fd := &gql.FieldDefinition{Name: lowerFirst(m.prefix), Type: gql.NonNullNamedType(m.prefix, nil)}
	if m.ctor == nil {
		return fd, nil, nil
	}
	args, enums, err := m.arguments(m.ctor)
	fd.Arguments = args
	return fd, enums, err
}

func (m *Module) function(fn *ast.FuncDecl) (*gql.FieldDefinition, []string, error) {
	fd := &gql.FieldDefinition{Name: lowerFirst(fn.Name.Name), Description: text(fn.Doc)}
	args, enums, err := m.arguments(fn)
	if err != nil {
		return nil, nil, err
	}
	fd.Arguments = args
	if fn.Type.Results == nil || len(fn.Type.Results.List) == 0 || exprString(fn.Type.Results.List[0].Type) == "error" {
		fd.Type = gql.NamedType("Void", nil)
		return fd, enums, nil
	}
	t, e, err := m.gqlType(fn.Type.Results.List[0].Type, false)
	if err != nil {
		return nil, nil, err
	}
	t.NonNull = true
	fd.Type = t
	return fd, append(enums, e...), nil
}

func (m *Module) arguments(fn *ast.FuncDecl) (gql.ArgumentDefinitionList, []string, error) {
	var args gql.ArgumentDefinitionList
	var enums []string
	for _, p := range fn.Type.Params.List {
		if exprString(p.Type) == "context.Context" {
			continue
		}
		doc := m.comment[m.files[fn]][m.fset.Position(p.Pos()).Line-1]
		t, e, err := m.gqlType(p.Type, true)
		if err != nil {
			return nil, nil, fmt.Errorf("argument %s: %w", p.Names[0].Name, err)
		}
		enums = append(enums, e...)
		a := &gql.ArgumentDefinition{Name: p.Names[0].Name, Description: text(doc), Type: t}
		if named(t) == "ID" { // gqlType's word: an object, passed by ID
			m.expected[a] = m.objectName(p.Type)
		}
		optional := pragma(doc, "optional") || pragma(doc, "defaultPath")
		if v, ok := pragmaValue(doc, "default"); ok {
			optional = true
			if a.DefaultValue, err = literal(v); err != nil {
				return nil, nil, fmt.Errorf("argument %s: +default=%s: %w", a.Name, v, err)
			}
		}
		t.NonNull = !optional
		args = append(args, a)
	}
	return args, enums, nil
}

// gqlType maps a Go type to the engine's: object arguments are ID, object
// results their type; the caller sets NonNull on the outer type.
func (m *Module) gqlType(e ast.Expr, arg bool) (*gql.Type, []string, error) {
	switch e := e.(type) {
	case *ast.ArrayType:
		elem, enums, err := m.gqlType(e.Elt, arg)
		if err != nil {
			return nil, nil, err
		}
		elem.NonNull = true
		return gql.ListType(elem, nil), enums, nil
	case *ast.StarExpr:
		return m.gqlType(e.X, arg)
	}
	s := exprString(e)
	switch s {
	case "string":
		return gql.NamedType("String", nil), nil, nil
	case "int":
		return gql.NamedType("Int", nil), nil, nil
	case "bool":
		return gql.NamedType("Boolean", nil), nil, nil
	case "float64":
		return gql.NamedType("Float", nil), nil, nil
	case "dagger.Platform":
		return gql.NamedType("Platform", nil), nil, nil
	}
	if core, ok := strings.CutPrefix(s, "dagger."); ok {
		if arg {
			return gql.NamedType("ID", nil), nil, nil
		}
		return gql.NamedType(core, nil), nil, nil
	}
	if _, ok := m.enums[s]; ok {
		return gql.NamedType(m.typeName(s), nil), []string{s}, nil
	}
	if _, ok := m.structs[s]; ok {
		if arg {
			return gql.NamedType("ID", nil), nil, nil
		}
		return gql.NamedType(m.typeName(s), nil), nil, nil
	}
	return nil, nil, fmt.Errorf("type %s has no GraphQL counterpart here", s)
}

// objectName is the engine's name of the object type of Go type e (a core
// type or one of the module's), leaving out pointers and slices.
func (m *Module) objectName(e ast.Expr) string {
	base := strings.TrimLeft(exprString(e), "[]*")
	if core, ok := strings.CutPrefix(base, "dagger."); ok {
		return core
	}
	return m.typeName(base)
}

// named is the type a GraphQL type wraps, through its lists.
func named(t *gql.Type) string {
	for t.Elem != nil {
		t = t.Elem
	}
	return t.NamedType
}

// typeName is the engine's name for one of the module's types: prefixed
// with the module's name unless it already starts with it.
func (m *Module) typeName(goName string) string {
	if strings.HasPrefix(goName, m.prefix) {
		return goName
	}
	return m.prefix + goName
}

// literal turns a +default pragma's JSON value into a GraphQL value.
func literal(v string) (*gql.Value, error) {
	var x any
	if err := json.Unmarshal([]byte(v), &x); err != nil {
		return nil, err
	}
	return value(x), nil
}

func value(x any) *gql.Value {
	switch x := x.(type) {
	case string:
		return &gql.Value{Kind: gql.StringValue, Raw: x}
	case bool:
		return &gql.Value{Kind: gql.BooleanValue, Raw: strconv.FormatBool(x)}
	case float64:
		if x == float64(int64(x)) {
			return &gql.Value{Kind: gql.IntValue, Raw: strconv.FormatInt(int64(x), 10)}
		}
		return &gql.Value{Kind: gql.FloatValue, Raw: strconv.FormatFloat(x, 'g', -1, 64)}
	case []any:
		v := &gql.Value{Kind: gql.ListValue}
		for _, e := range x {
			v.Children = append(v.Children, &gql.ChildValue{Value: value(e)})
		}
		return v
	}
	return &gql.Value{Kind: gql.NullValue, Raw: "null"}
}

// text is a doc comment without its pragma lines.
func text(c *ast.CommentGroup) string {
	if c == nil {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(c.Text(), "\n") {
		if !strings.HasPrefix(l, "+") {
			lines = append(lines, l)
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func pragma(c *ast.CommentGroup, name string) bool {
	_, ok := pragmaValue(c, name)
	return ok
}

// pragmaValue finds +name or +name=value in a doc comment.
func pragmaValue(c *ast.CommentGroup, name string) (string, bool) {
	if c == nil {
		return "", false
	}
	for _, l := range strings.Split(c.Text(), "\n") {
		if l == "+"+name {
			return "", true
		}
		if v, ok := strings.CutPrefix(l, "+"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func exported(f *ast.Field) bool { return len(f.Names) == 1 && f.Names[0].IsExported() }

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.ArrayType:
		return "[]" + exprString(e.Elt)
	}
	return fmt.Sprintf("%T", e)
}

// camel turns a module name (lowcode-pipeline) into its type name (LowcodePipeline).
func camel(name string) string {
	var b strings.Builder
	up := true
	for _, r := range name {
		if r == '-' || r == '_' || r == ' ' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
