package schemagen

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gql "github.com/vektah/gqlparser/v2/ast"
)

// typeJSON is the part of an introspected type the assertions read.
type typeJSON struct {
	Kind, Name string
	Fields     []struct {
		Name string
		Args []struct {
			Name       string
			Directives directiveList
		}
		Directives directiveList
	}
	Directives    directiveList
	PossibleTypes []struct{ Name string }
}

type directiveList []directiveJSON

type directiveJSON struct {
	Name string
	Args []struct{ Name, Value string }
}

func (ds directiveList) arg(directive, name string) string {
	for _, d := range ds {
		if d.Name == directive {
			for _, a := range d.Args {
				if a.Name == name {
					var v string
					_ = json.Unmarshal([]byte(a.Value), &v)
					return v
				}
			}
		}
	}
	return ""
}

func dependencyIntrospection(t *testing.T) (core, deps []byte, m *Module) {
	t.Helper()
	core, err := os.ReadFile("testdata/introspection-v0.21.8.json")
	require.NoError(t, err)
	m, err = Load("lowcode-pipeline", "../../..")
	require.NoError(t, err)
	deps, err = m.DependencyIntrospection(core)
	require.NoError(t, err)
	return core, deps, m
}

func types(t *testing.T, data []byte) map[string]typeJSON {
	t.Helper()
	var in struct {
		Schema struct{ Types []typeJSON } `json:"__schema"`
	}
	require.NoError(t, json.Unmarshal(data, &in))
	out := map[string]typeJSON{}
	for _, ty := range in.Schema.Types {
		out[ty.Name] = ty
	}
	return out
}

// Read back as SDL, the dependency's introspection holds exactly the
// module's schema (names, types, arguments, defaults) on top of the core
// API, which it leaves as it was.
func TestDependencyIntrospectionIsTheModuleOnTheCore(t *testing.T) {
	core, deps, m := dependencyIntrospection(t)
	sdl, err := CoreSDL(deps, "")
	require.NoError(t, err)
	got := parse(t, sdl)
	coreSDL, err := CoreSDL(core, "")
	require.NoError(t, err)
	coreDoc := parse(t, coreSDL)
	want, err := m.Schema()
	require.NoError(t, err)

	var moduleDefs, coreDefs gql.DefinitionList
	for _, d := range got.Definitions {
		if strings.HasPrefix(d.Name, m.prefix) {
			moduleDefs = append(moduleDefs, d)
		} else if d.Name != "Query" && d.Name != "Binding" && d.Name != "Env" && d.Name != "Node" {
			coreDefs = append(coreDefs, d)
		}
	}
	assert.Equal(t, shape(want), shape(&gql.SchemaDocument{Definitions: moduleDefs}))

	var coreWant gql.DefinitionList
	for _, d := range coreDoc.Definitions {
		if d.Name != "Query" && d.Name != "Binding" && d.Name != "Env" && d.Name != "Node" {
			coreWant = append(coreWant, d)
		}
	}
	assert.Equal(t, canonical(&gql.SchemaDocument{Definitions: coreWant}), canonical(&gql.SchemaDocument{Definitions: coreDefs}),
		"the core types are untouched")

	query := got.Definitions.ForName("Query")
	for _, f := range want.Extensions[0].Fields {
		assert.NotNil(t, query.Fields.ForName(f.Name), "Query.%s", f.Name)
	}
	assert.NotNil(t, query.Fields.ForName("container"), "the core's Query fields stay")
}

// What codegen reads to tell the dependency from the core and to type its
// arguments: a @sourceMap naming the module on every type and contributed
// field, an @expectedType on every object argument, and the engine's
// Binding/Env fields for each object.
func TestDependencyIntrospectionMarksWhatTheModuleOwns(t *testing.T) {
	core, deps, _ := dependencyIntrospection(t)
	got, before := types(t, deps), types(t, core)
	var objects []string
	for name, ty := range got {
		if _, isCore := before[name]; isCore {
			assert.Empty(t, ty.Directives.arg("sourceMap", "module"), "core type %s is not the module's", name)
			continue
		}
		assert.Equal(t, "lowcode-pipeline", ty.Directives.arg("sourceMap", "module"), "type %s", name)
		if ty.Kind == "OBJECT" {
			objects = append(objects, name)
		}
		for _, f := range ty.Fields {
			assert.Equal(t, "lowcode-pipeline", f.Directives.arg("sourceMap", "module"), "%s.%s", name, f.Name)
		}
	}
	require.Contains(t, objects, "LowcodePipelineRelease")

	owned := func(typeName string) map[string]bool {
		out := map[string]bool{}
		for _, f := range got[typeName].Fields {
			if f.Directives.arg("sourceMap", "module") == "lowcode-pipeline" {
				out[f.Name] = true
			}
		}
		return out
	}
	for _, o := range objects {
		assert.True(t, owned("Binding")["as"+o], "Binding.as%s", o)
		assert.True(t, owned("Env")["with"+o+"Input"] && owned("Env")["with"+o+"Output"], "Env.with%sInput/Output", o)
		assert.True(t, owned("Query")["load"+o+"FromID"], "Query.load%sFromID", o)
	}
	assert.True(t, owned("Query")["lowcodePipeline"], "the constructor")
	assert.Len(t, got["Query"].Fields, len(before["Query"].Fields)+len(objects)+1)
	var nodes []string
	for _, p := range got["Node"].PossibleTypes {
		nodes = append(nodes, p.Name)
	}
	assert.Subset(t, nodes, objects, "every object is a Node")

	expected := map[string]string{}
	for _, f := range got["LowcodePipeline"].Fields {
		if f.Name == "build" {
			for _, a := range f.Args {
				expected[a.Name] = a.Directives.arg("expectedType", "name")
			}
		}
	}
	assert.Equal(t, "Directory", expected["source"])
	assert.Equal(t, "Secret", expected["npmrc"])
	assert.Empty(t, expected["nodeImage"], "a string is no object")
	for _, f := range got["LowcodePipelineBuild"].Fields {
		if f.Name == "publish" {
			for _, a := range f.Args {
				if a.Name == "registryService" {
					assert.Equal(t, "Service", a.Directives.arg("expectedType", "name"))
				}
			}
		}
	}
}

// The enum members keep their Go values, which the generated constants carry.
func TestDependencyIntrospectionKeepsEnumValues(t *testing.T) {
	_, deps, _ := dependencyIntrospection(t)
	var in struct {
		Schema struct {
			Types []struct {
				Name       string
				EnumValues []struct {
					Name       string
					Directives directiveList
				}
			}
		} `json:"__schema"`
	}
	require.NoError(t, json.Unmarshal(deps, &in))
	found := false
	for _, ty := range in.Schema.Types {
		if ty.Name != "LowcodePipelineApprovalMode" {
			continue
		}
		found = true
		require.NotEmpty(t, ty.EnumValues)
		for _, v := range ty.EnumValues {
			assert.NotEmpty(t, v.Directives.arg("enumValue", "value"), v.Name)
		}
	}
	assert.True(t, found)
}
