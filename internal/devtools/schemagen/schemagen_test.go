package schemagen

import (
	"fmt"
	"go/ast"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	gql "github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// canonical renders the object, enum and scalar definitions of a schema
// document one line per item, sorted as the engine sorts them, so that two
// printers' output can be compared as data.
func canonical(doc *gql.SchemaDocument) string { return render(doc, true) }

// shape is canonical without the descriptions: names, types, arguments and
// defaults only.
func shape(doc *gql.SchemaDocument) string { return render(doc, false) }

func render(doc *gql.SchemaDocument, descriptions bool) string {
	desc := func(s string) string {
		if !descriptions {
			return ""
		}
		return fmt.Sprintf(" %q", strings.TrimSpace(s))
	}
	var b strings.Builder
	for _, d := range doc.Definitions {
		fmt.Fprintf(&b, "%s %s implements %v:%s\n", d.Kind, d.Name, d.Interfaces, desc(d.Description))
		for _, f := range d.Fields {
			fmt.Fprintf(&b, "  %s: %s%s\n", f.Name, f.Type, desc(f.Description))
			for _, a := range f.Arguments {
				def := ""
				if a.DefaultValue != nil {
					def = " = " + a.DefaultValue.String()
				}
				fmt.Fprintf(&b, "    %s: %s%s%s\n", a.Name, a.Type, def, desc(a.Description))
			}
		}
		for _, v := range d.EnumValues {
			fmt.Fprintf(&b, "  %s%s\n", v.Name, desc(v.Description))
		}
	}
	return b.String()
}

func parse(t *testing.T, sdl []byte) *gql.SchemaDocument {
	t.Helper()
	doc, err := parser.ParseSchema(&gql.Source{Input: string(sdl)})
	require.NoError(t, err)
	return doc
}

// The generator reproduces what a real v0.21.8 engine served for this
// module's source at commit 47be188: the conventions are learnt, not guessed.
func TestSchemaIsWhatTheEngineServedForTheSameSource(t *testing.T) {
	m, err := Load("lowcode-pipeline", "testdata/engine-47be188")
	require.NoError(t, err)
	doc, err := m.Schema()
	require.NoError(t, err)
	served, err := os.ReadFile("testdata/engine-47be188/served.graphql")
	require.NoError(t, err)
	assert.Equal(t, canonical(parse(t, served)), canonical(doc))
}

// The modules' SDL in the repository is the generator's output for their
// source as it is now: this module's, and examples/go's (whose functions
// the engine checks call too).
func TestRepositorySDLFollowsTheSource(t *testing.T) {
	for _, tc := range []struct{ name, dir, path string }{
		{"lowcode-pipeline", "../../..", "../../../tests/lowcode-pipeline.graphql"},
		{"lowcode-pipeline-example", "../../../examples/go", "../../../tests/lowcode-pipeline-example.graphql"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(tc.name, tc.dir)
			require.NoError(t, err)
			sdl, err := m.SDL()
			require.NoError(t, err)
			if os.Getenv("UPDATE_SDL") != "" {
				require.NoError(t, os.WriteFile(tc.path, sdl, 0o644))
			}
			committed, err := os.ReadFile(tc.path)
			require.NoError(t, err, "generate it with UPDATE_SDL=1 go test ./internal/devtools/schemagen")
			assert.Equal(t, string(committed), string(sdl), "the API changed: regenerate with UPDATE_SDL=1 go test ./internal/devtools/schemagen")
		})
	}
}

// The core API's SDL that tests/ validates queries with is the engine's own
// introspection of v0.21.8, converted.
func TestCoreSDLIsTheEnginesIntrospection(t *testing.T) {
	data, err := os.ReadFile("testdata/introspection-v0.21.8.json")
	require.NoError(t, err)
	sdl, err := CoreSDL(data, CoreHeader)
	require.NoError(t, err)
	const path = "../../../tests/dagger-core.v0.21.8.graphql"
	if os.Getenv("UPDATE_SDL") != "" {
		require.NoError(t, os.WriteFile(path, sdl, 0o644))
	}
	committed, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(committed), string(sdl))
	assert.Contains(t, string(sdl), "withDirectory(path: String!, source: ID!", "object arguments of the core API are ID too")
}

// The two SDL files make one valid schema, as the engine serves it.
func TestModuleAndCoreSDLLoadTogether(t *testing.T) {
	var sources []*gql.Source
	for _, name := range []string{"dagger-core.v0.21.8.graphql", "lowcode-pipeline.graphql", "lowcode-pipeline-example.graphql"} {
		data, err := os.ReadFile("../../../tests/" + name)
		require.NoError(t, err)
		sources = append(sources, &gql.Source{Name: name, Input: string(data)})
	}
	schema, err := gqlparser.LoadSchema(sources...)
	require.NoError(t, err)
	require.NotNil(t, schema.Query.Fields.ForName("lowcodePipeline"), "the constructor is a Query field")
	assert.Equal(t, "ID", schema.Types["LowcodePipelineBuild"].Fields.ForName("publish").Arguments.ForName("registryPassword").Type.Name())
	require.NotNil(t, schema.Query.Fields.ForName("lowcodePipelineExample"), "the example module's constructor too")
}

// The README's "Use from another module" shows examples/go's source as it
// is, so the code a reader copies is the code CI compiles.
func TestReadmeShowsTheGoExample(t *testing.T) {
	src, err := os.ReadFile("../../../examples/go/main.go")
	require.NoError(t, err)
	readmeBlock(t, "example-go", "```go\n"+string(src)+"```\n", "examples/go changed")
}

// readmeBlock asserts that the README holds content between its
// "<!-- name: start -->" and "<!-- name: end -->" lines, and writes it there
// with UPDATE_SDL=1.
func readmeBlock(t *testing.T, name, content, why string) {
	t.Helper()
	const path = "../../../README.md"
	start, end := "<!-- "+name+": start -->\n", "<!-- "+name+": end -->"
	readme, err := os.ReadFile(path)
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(readme), start)
	require.True(t, ok, "README.md has no %q marker", start)
	_, after, ok := strings.Cut(rest, end)
	require.True(t, ok, "README.md has no %q marker", end)
	want := before + start + content + end + after
	if os.Getenv("UPDATE_SDL") != "" {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		readme = []byte(want)
	}
	assert.Equal(t, want, string(readme), "%s: regenerate with UPDATE_SDL=1 go test ./internal/devtools/schemagen", why)
}

func TestKebabSpellsFlagsAsTheCLIDoes(t *testing.T) {
	for in, want := range map[string]string{
		"codeAsDataRepository": "code-as-data-repository", "fromJson": "from-json", "vcsUrl": "vcs-url",
		"WithDeployRules": "with-deploy-rules", "tag": "tag",
	} {
		assert.Equal(t, want, kebab(in))
	}
}

// Every function that pushes, deploys, publishes or signs, or reads the
// platform (snapshot), or calls one that does, carries +cache="session": a
// result kept in the engine's function cache (tests/engine-facts.md, fact
// 26) would skip the side effect, or give last week's snapshot, and one run
// on every call ("never") would repeat it for each field another module reads.
func TestSideEffectsRunOncePerSession(t *testing.T) {
	effects := map[string]bool{"Publish": true, "Sign": true, "Deploy": true, "Deliver": true, "Demo": true,
		"Snapshot": true, "Push": true, "ToolkitSnapshot": true}
	for _, tc := range []struct{ name, dir string }{
		{"lowcode-pipeline", "../../.."},
		{"lowcode-pipeline-example", "../../../examples/go"},
	} {
		m, err := Load(tc.name, tc.dir)
		require.NoError(t, err)
		checked := 0
		for _, fns := range m.methods {
			for _, fn := range fns {
				calls := effects[fn.Name.Name]
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok {
						if sel, ok := call.Fun.(*ast.SelectorExpr); ok && effects[sel.Sel.Name] {
							calls = true
						}
					}
					return true
				})
				if !calls {
					continue
				}
				checked++
				v, _ := pragmaValue(fn.Doc, "cache")
				assert.Equal(t, `"session"`, v, "%s: %s has a side effect and must carry +cache=\"session\"", tc.name, fn.Name.Name)
			}
		}
		assert.NotZero(t, checked, "%s has side-effecting functions", tc.name)
	}
}

// Every project argument (a Directory read from the caller's disk by
// default) leaves out what must never reach a container: node_modules at any
// depth (a workspace's or a sub-project's, installed for the host, would be
// laid over the install; the patterns follow .dockerignore, so a bare
// "node_modules" is the root one only), the build output, git's folder.
func TestProjectArgumentsLeaveOutInstalledAndBuiltFiles(t *testing.T) {
	m, err := Load("lowcode-pipeline", "../../..")
	require.NoError(t, err)
	checked := 0
	for _, fns := range m.methods {
		for _, fn := range fns {
			for _, p := range fn.Type.Params.List {
				doc := m.comment[m.files[fn]][m.fset.Position(p.Pos()).Line-1]
				if exprString(p.Type) != "*dagger.Directory" || !pragma(doc, "defaultPath") {
					continue
				}
				checked++
				v, _ := pragmaValue(doc, "ignore")
				assert.Equal(t, `["**/node_modules", "dist", ".git"]`, v, "%s's --%s", fn.Name.Name, kebab(p.Names[0].Name))
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 5, "build, install, deliver, snapshot and toolkit-snapshot take the project")
}
