package schemagen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	gql "github.com/vektah/gqlparser/v2/ast"
)

// DependencyIntrospection is the introspection a module that depends on this
// one is generated from: the core API's (core, as the engine presents it to a
// module) with this module's types added the way the engine adds a
// dependency's: every type and every field it contributes to Query, Binding
// and Env marked with a @sourceMap naming the module (which is how Dagger's
// codegen tells a dependency's types from the core ones and writes them to
// internal/dagger/<module>.gen.go), object arguments typed ID with an
// @expectedType, every object a Node.
//
// No engine's introspection of a dependency could be captured here, so this
// is a reconstruction: names, arguments, types and defaults are the schema
// that TestSchemaIsWhatTheEngineServedForTheSameSource holds to the engine's;
// source positions are left out (the engine's own shape when an SDK gives
// none). It serves to generate and compile a dependent module in CI, never
// to write committed bindings.
func (m *Module) DependencyIntrospection(core []byte) ([]byte, error) {
	doc, err := m.Schema()
	if err != nil {
		return nil, err
	}
	var in struct {
		Schema struct {
			QueryType  json.RawMessage   `json:"queryType"`
			Types      []json.RawMessage `json:"types"`
			Directives json.RawMessage   `json:"directives"`
		} `json:"__schema"`
		SchemaVersion json.RawMessage `json:"__schemaVersion"`
	}
	if err := json.Unmarshal(core, &in); err != nil {
		return nil, fmt.Errorf("core introspection: %w", err)
	}
	kinds := map[string]string{}
	types := map[string]map[string]any{}
	for _, raw := range in.Schema.Types {
		var t map[string]any
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("core introspection: %w", err)
		}
		name, _ := t["name"].(string)
		kinds[name], _ = t["kind"].(string)
		types[name] = t
	}
	for _, d := range doc.Definitions {
		kinds[d.Name] = map[gql.DefinitionKind]string{gql.Object: "OBJECT", gql.Scalar: "SCALAR", gql.Enum: "ENUM"}[d.Kind]
	}

	conv := &converter{m: m, kinds: kinds, owner: sourceMap(m.Name)}
	var objects []string
	for _, d := range doc.Definitions {
		t, err := conv.definition(d)
		if err != nil {
			return nil, err
		}
		if _, clash := types[d.Name]; clash {
			return nil, fmt.Errorf("type %s is already in the core API", d.Name)
		}
		types[d.Name] = t
		if d.Kind == gql.Object {
			objects = append(objects, d.Name)
		}
	}
	extend := func(typeName string, fields ...map[string]any) error {
		t := types[typeName]
		if t == nil {
			return fmt.Errorf("the core API has no %s", typeName)
		}
		list, _ := t["fields"].([]any)
		for _, f := range fields {
			list = append(list, f)
		}
		slices.SortFunc(list, func(a, b any) int {
			return strings.Compare(a.(map[string]any)["name"].(string), b.(map[string]any)["name"].(string))
		})
		t["fields"] = list
		return nil
	}
	for _, q := range doc.Extensions {
		for _, f := range q.Fields {
			fd, err := conv.field(f)
			if err != nil {
				return nil, err
			}
			if err := extend("Query", fd); err != nil {
				return nil, err
			}
		}
	}
	for _, o := range objects {
		if err := extend("Binding", conv.bindingField(o)); err != nil {
			return nil, err
		}
		if err := extend("Env", conv.envInput(o), conv.envOutput(o)); err != nil {
			return nil, err
		}
		if node := types["Node"]; node != nil {
			possible, _ := node["possibleTypes"].([]any)
			node["possibleTypes"] = append(possible, map[string]any{"kind": "OBJECT", "name": o, "interfaces": nil, "possibleTypes": nil, "directives": nil})
		}
	}
	if node := types["Node"]; node != nil {
		possible, _ := node["possibleTypes"].([]any)
		slices.SortFunc(possible, func(a, b any) int {
			return strings.Compare(a.(map[string]any)["name"].(string), b.(map[string]any)["name"].(string))
		})
	}

	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	slices.Sort(names)
	out := struct {
		Schema struct {
			QueryType  json.RawMessage  `json:"queryType"`
			Types      []map[string]any `json:"types"`
			Directives json.RawMessage  `json:"directives"`
		} `json:"__schema"`
		SchemaVersion json.RawMessage `json:"__schemaVersion,omitempty"`
	}{SchemaVersion: in.SchemaVersion}
	out.Schema.QueryType, out.Schema.Directives = in.Schema.QueryType, in.Schema.Directives
	for _, n := range names {
		out.Schema.Types = append(out.Schema.Types, types[n])
	}
	return json.MarshalIndent(out, "", "  ")
}

type converter struct {
	m     *Module
	kinds map[string]string
	owner map[string]any // the @sourceMap every contributed type and field carries
}

func sourceMap(module string) map[string]any {
	return directive("sourceMap", "module", module)
}

func directive(name, arg, value string) map[string]any {
	v, _ := json.Marshal(value) // a GraphQL string literal is a JSON string here
	return map[string]any{"name": name, "args": []any{map[string]any{"name": arg, "value": string(v)}}}
}

func (c *converter) definition(d *gql.Definition) (map[string]any, error) {
	t := map[string]any{
		"kind": c.kinds[d.Name], "name": d.Name, "description": d.Description,
		"interfaces": []any{}, "possibleTypes": []any{}, "directives": []any{c.owner},
	}
	switch d.Kind {
	case gql.Object:
		var fields []any
		for _, f := range d.Fields {
			fd, err := c.field(f)
			if err != nil {
				return nil, fmt.Errorf("%s.%w", d.Name, err)
			}
			fields = append(fields, fd)
		}
		t["fields"] = fields
		var ifaces []any
		for _, i := range d.Interfaces {
			ifaces = append(ifaces, map[string]any{"kind": "INTERFACE", "name": i, "interfaces": nil, "possibleTypes": nil, "directives": nil})
		}
		t["interfaces"] = ifaces
	case gql.Enum:
		var values []any
		for _, v := range d.EnumValues {
			values = append(values, map[string]any{
				"name": v.Name, "description": v.Description, "isDeprecated": false, "deprecationReason": nil,
				"directives": []any{directive("enumValue", "value", c.m.enumValue(d.Name, v.Name))},
			})
		}
		t["enumValues"] = values
	}
	return t, nil
}

func (c *converter) field(f *gql.FieldDefinition) (map[string]any, error) {
	typ, err := c.ref(f.Type)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	args := []any{}
	for _, a := range f.Arguments {
		at, err := c.ref(a.Type)
		if err != nil {
			return nil, fmt.Errorf("%s(%s): %w", f.Name, a.Name, err)
		}
		var def any
		if a.DefaultValue != nil {
			def = a.DefaultValue.String()
		}
		dirs := []any{}
		if e := c.m.expected[a]; e != "" {
			dirs = append(dirs, directive("expectedType", "name", e))
		}
		dirs = append(dirs, c.owner)
		args = append(args, map[string]any{
			"name": a.Name, "description": a.Description, "defaultValue": def, "type": at,
			"directives": dirs, "isDeprecated": false, "deprecationReason": nil,
		})
	}
	return map[string]any{
		"name": f.Name, "description": f.Description, "type": typ, "args": args,
		"isDeprecated": false, "deprecationReason": nil, "directives": []any{c.owner},
	}, nil
}

func (c *converter) ref(t *gql.Type) (map[string]any, error) {
	var inner map[string]any
	if t.Elem != nil {
		elem, err := c.ref(t.Elem)
		if err != nil {
			return nil, err
		}
		inner = map[string]any{"kind": "LIST", "ofType": elem}
	} else {
		kind := c.kinds[t.NamedType]
		if kind == "" {
			return nil, fmt.Errorf("unknown type %s", t.NamedType)
		}
		inner = map[string]any{"kind": kind, "name": t.NamedType}
	}
	if t.NonNull {
		return map[string]any{"kind": "NON_NULL", "ofType": inner}, nil
	}
	return inner, nil
}

// The fields the engine adds to Binding and Env for each object type, in
// the words it uses for the core types.
func (c *converter) bindingField(object string) map[string]any {
	return c.extension("as"+object, "Retrieve the binding value, as type "+object, nonNull("OBJECT", object))
}

func (c *converter) envInput(object string) map[string]any {
	f := c.extension("with"+object+"Input", "Create or update a binding of type "+object+" in the environment", nonNull("OBJECT", "Env"))
	f["args"] = []any{
		extensionArg("name", "The name of the binding", nil),
		extensionArg("value", "The "+object+" value to assign to the binding", directive("expectedType", "name", object)),
		extensionArg("description", "The purpose of the input", nil),
	}
	f["args"].([]any)[1].(map[string]any)["type"] = nonNull("SCALAR", "ID")
	return f
}

func (c *converter) envOutput(object string) map[string]any {
	f := c.extension("with"+object+"Output", "Declare a desired "+object+" output to be assigned in the environment", nonNull("OBJECT", "Env"))
	f["args"] = []any{
		extensionArg("name", "The name of the binding", nil),
		extensionArg("description", "A description of the desired value of the binding", nil),
	}
	return f
}

func (c *converter) extension(name, description string, typ map[string]any) map[string]any {
	return map[string]any{
		"name": name, "description": description, "type": typ, "args": []any{},
		"isDeprecated": false, "deprecationReason": nil, "directives": []any{c.owner},
	}
}

func extensionArg(name, description string, dir map[string]any) map[string]any {
	dirs := []any{}
	if dir != nil {
		dirs = append(dirs, dir)
	}
	return map[string]any{
		"name": name, "description": description, "defaultValue": nil, "type": nonNull("SCALAR", "String"),
		"directives": dirs, "isDeprecated": false, "deprecationReason": nil,
	}
}

func nonNull(kind, name string) map[string]any {
	return map[string]any{"kind": "NON_NULL", "ofType": map[string]any{"kind": kind, "name": name}}
}

// enumValue is the Go value of an enum member, which the engine keeps as
// @enumValue and the generated Go constants carry.
func (m *Module) enumValue(enumType, member string) string {
	for goName, values := range m.enums {
		if m.typeName(goName) != enumType {
			continue
		}
		for _, v := range values {
			if v.name == member {
				return v.value
			}
		}
	}
	return member
}
