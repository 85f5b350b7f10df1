package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2"
	gql "github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

// introspection is the part of a GraphQL introspection result the core SDL needs.
type introspection struct {
	Schema struct {
		Types []struct {
			Kind, Name    string
			Fields        []ispField
			InputFields   []ispArg
			Interfaces    []ispRef
			PossibleTypes []ispRef
			EnumValues    []struct{ Name string }
		}
	} `json:"__schema"`
}

type ispField struct {
	Name string
	Args []ispArg
	Type ispRef
}

type ispArg struct {
	Name         string
	Type         ispRef
	DefaultValue *string
}

type ispRef struct {
	Kind   string
	Name   string
	OfType *ispRef
}

func (r ispRef) gql() *gql.Type {
	switch r.Kind {
	case "NON_NULL":
		t := r.OfType.gql()
		t.NonNull = true
		return t
	case "LIST":
		return gql.ListType(r.OfType.gql(), nil)
	}
	return gql.NamedType(r.Name, nil)
}

var builtinScalars = []string{"Boolean", "Float", "ID", "Int", "String"}

// CoreSDL turns the engine's introspection of its core API into SDL, without
// descriptions: what a query validator needs.
func CoreSDL(introspectionJSON []byte, header string) ([]byte, error) {
	var in introspection
	if err := json.Unmarshal(introspectionJSON, &in); err != nil {
		return nil, fmt.Errorf("introspection: %w", err)
	}
	doc := &gql.SchemaDocument{}
	for _, t := range in.Schema.Types {
		if strings.HasPrefix(t.Name, "__") || slices.Contains(builtinScalars, t.Name) {
			continue
		}
		def := &gql.Definition{Name: t.Name}
		switch t.Kind {
		case "SCALAR":
			def.Kind = gql.Scalar
		case "ENUM":
			def.Kind = gql.Enum
			for _, v := range t.EnumValues {
				def.EnumValues = append(def.EnumValues, &gql.EnumValueDefinition{Name: v.Name})
			}
		case "UNION":
			def.Kind = gql.Union
			for _, p := range t.PossibleTypes {
				def.Types = append(def.Types, p.Name)
			}
		case "INPUT_OBJECT":
			def.Kind = gql.InputObject
			for _, f := range t.InputFields {
				a, err := argument(f)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", t.Name, f.Name, err)
				}
				def.Fields = append(def.Fields, &gql.FieldDefinition{Name: a.Name, Type: a.Type, DefaultValue: a.DefaultValue})
			}
		case "OBJECT", "INTERFACE":
			def.Kind = gql.Object
			if t.Kind == "INTERFACE" {
				def.Kind = gql.Interface
			}
			for _, i := range t.Interfaces {
				def.Interfaces = append(def.Interfaces, i.Name)
			}
			for _, f := range t.Fields {
				fd := &gql.FieldDefinition{Name: f.Name, Type: f.Type.gql()}
				for _, a := range f.Args {
					arg, err := argument(a)
					if err != nil {
						return nil, fmt.Errorf("%s.%s(%s): %w", t.Name, f.Name, a.Name, err)
					}
					fd.Arguments = append(fd.Arguments, arg)
				}
				def.Fields = append(def.Fields, fd)
			}
		default:
			return nil, fmt.Errorf("type %s: unknown kind %s", t.Name, t.Kind)
		}
		doc.Definitions = append(doc.Definitions, def)
	}
	var b bytes.Buffer
	b.WriteString(header)
	formatter.NewFormatter(&b, formatter.WithIndent("  ")).FormatSchemaDocument(doc)
	return b.Bytes(), nil
}

func argument(a ispArg) (*gql.ArgumentDefinition, error) {
	arg := &gql.ArgumentDefinition{Name: a.Name, Type: a.Type.gql()}
	if a.DefaultValue != nil {
		v, err := parser.ParseQuery(&gql.Source{Input: "{ f(x: " + *a.DefaultValue + ") }"})
		if err != nil {
			return nil, fmt.Errorf("default value %s: %w", *a.DefaultValue, err)
		}
		arg.DefaultValue = v.Operations[0].SelectionSet[0].(*gql.Field).Arguments[0].Value
	}
	return arg, nil
}

// CoreHeader opens the committed core SDL.
const CoreHeader = "# The Dagger v0.21.8 core API as its engine presents it to a Go module (converted from\n" +
	"# ../shared/dagger/introspection-v0.21.8.json by internal/devtools/schemagen, descriptions left out).\n" +
	"# tests/ validates its queries against it together with lowcode-pipeline.graphql.\n\n"

// LoadSDL reads the schema files kept in tests/ (the core API's, then the
// modules') as one schema, as the engine serves them together; dir is the
// tests folder.
func LoadSDL(dir string, names ...string) (*gql.Schema, error) {
	var sources []*gql.Source
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		sources = append(sources, &gql.Source{Name: name, Input: string(data)})
	}
	return gqlparser.LoadSchema(sources...)
}
