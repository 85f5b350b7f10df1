package ciexamples

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mattn/go-shellwords"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"gopkg.in/yaml.v3"
)

// apiSchema is the module's API and examples/go's, as the engine serves them.
func apiSchema(t *testing.T) *ast.Schema {
	t.Helper()
	var sources []*ast.Source
	for _, name := range []string{"dagger-core.v0.21.8.graphql", "lowcode-pipeline.graphql", "lowcode-pipeline-example.graphql"} {
		data, err := os.ReadFile("../../tests/" + name)
		require.NoError(t, err)
		sources = append(sources, &ast.Source{Name: name, Input: string(data)})
	}
	s, err := gqlparser.LoadSchema(sources...)
	require.NoError(t, err)
	return s
}

// command is one documented `dagger call`, its words after "call".
type command struct {
	where string
	words []string
}

// The `dagger call` flags that take a value; the rest take none.
var cliValueFlags = map[string]bool{"-m": true, "--mod": true, "--progress": true, "-o": true, "--output": true}

var ciSubstitution = regexp.MustCompile(`\$\((?:[^()]|\([^()]*\))*\)|\$\{\{[^}]*\}\}|<< [^>]* >>`)

var placeholder = regexp.MustCompile(`<[A-Za-z][A-Za-z ._-]*>`)

var fencedBlock = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")

// documentedCommands finds every `dagger call` of the README files (in their
// code blocks) and of the CI examples (in their YAML strings, or the
// Jenkinsfile's text), with Tekton's `call` parameter read as the words after
// the module.
func documentedCommands(t *testing.T) []command {
	t.Helper()
	var out []command
	for _, readme := range []string{"../../README.md", "../../examples/app/README.md"} {
		data, err := os.ReadFile(readme)
		require.NoError(t, err)
		for _, block := range fencedBlock.FindAllStringSubmatch(string(data), -1) {
			out = append(out, commandsIn(t, filepath.Base(filepath.Dir(readme))+"/README.md", block[1])...)
		}
	}
	for _, e := range examples {
		text := read(t, e.file)
		if !e.yaml {
			out = append(out, commandsIn(t, e.file, text)...)
			continue
		}
		dec := yaml.NewDecoder(strings.NewReader(text))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				break
			}
			walkStrings(&doc, func(s string) {
				if rest, ok := strings.CutPrefix(s, "call="); ok {
					s = `dagger call -m "$LOWCODE_PIPELINE" ` + rest
				}
				out = append(out, commandsIn(t, e.file, s)...)
			}, func(name, value string) {
				if name == "call" {
					out = append(out, commandsIn(t, e.file, `dagger call -m "$LOWCODE_PIPELINE" `+value)...)
				}
			})
		}
	}
	return out
}

// walkStrings calls each for every string scalar, and param for every
// {name: N, value: V} mapping (Tekton's parameters).
func walkStrings(n *yaml.Node, each func(string), param func(name, value string)) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		each(n.Value)
	}
	if n.Kind == yaml.MappingNode {
		var name, value string
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "description" { // prose
				n.Content[i+1].Tag = "!!prose"
			}
			switch n.Content[i].Value {
			case "name":
				name = n.Content[i+1].Value
			case "value":
				value = n.Content[i+1].Value
			}
		}
		if name != "" && value != "" {
			param(name, value)
		}
	}
	for _, c := range n.Content {
		walkStrings(c, each, param)
	}
}

// commandsIn reads every `dagger call` in a shell text: continuation lines
// joined, the command ending where the shell would end it (;, &&, |, a
// line break).
func commandsIn(t *testing.T, where, text string) []command {
	t.Helper()
	text = strings.ReplaceAll(text, "\\\n", " ")
	var out []command
	for {
		i := strings.Index(text, "dagger call ")
		if i < 0 {
			return out
		}
		text = text[i+len("dagger call "):]
		line, _, _ := strings.Cut(text, "\n")
		if strings.Contains(line, `\"`) { // inside a quoted eval: the words come from a parameter
			continue
		}
		if strings.Contains(line, "…") { // an elided command, for its flags only
			continue
		}
		// A CI system's own substitutions ($(…), ${{ … }}) and the README's
		// <placeholders> stand for one word; a shell comment ends the line.
		line = ciSubstitution.ReplaceAllString(line, "CI_VALUE")
		line = placeholder.ReplaceAllStringFunc(line, func(m string) string { return strings.NewReplacer("<", "", ">", "", " ", "_").Replace(m) })
		line, _, _ = strings.Cut(line, " # ")
		p := shellwords.NewParser()
		words, err := p.Parse(line)
		require.NoError(t, err, "%s: %s", where, line)
		out = append(out, command{where: where, words: words})
	}
}

// resultType walks a command through the schema: the module, the
// constructor's flags, then each function and its flags. It returns the
// type of the last step.
func resultType(s *ast.Schema, words []string) (*ast.Type, error) {
	constructor := "lowcodePipeline"
	i := 0
	for i < len(words) && strings.HasPrefix(words[i], "-") && !isModuleFlag(words[i]) {
		if cliValueFlags[words[i]] {
			if (words[i] == "-m" || words[i] == "--mod") && i+1 < len(words) && strings.Contains(words[i+1], "examples/go") {
				constructor = "lowcodePipelineExample"
			}
			i++
		}
		i++
	}
	field := s.Query.Fields.ForName(constructor)
	if field == nil {
		return nil, fmt.Errorf("no constructor %s", constructor)
	}
	typ := field.Type
	args := field.Arguments
	for i < len(words) {
		w := words[i]
		i++
		if strings.HasPrefix(w, "--") {
			name, _, hasValue := strings.Cut(strings.TrimPrefix(w, "--"), "=")
			arg := args.ForName(camel(name))
			if arg == nil {
				return nil, fmt.Errorf("%s is not a flag of the step before it", w)
			}
			if !hasValue && arg.Type.Name() != "Boolean" {
				i++ // its value
			}
			continue
		}
		def := s.Types[typ.Name()]
		if def == nil || def.Kind != ast.Object {
			return nil, fmt.Errorf("%q follows a %s, which has no functions", w, typ.String())
		}
		f := def.Fields.ForName(camel(w))
		if f == nil {
			return nil, fmt.Errorf("%s has no function or field %q", typ.Name(), w)
		}
		typ, args = f.Type, f.Arguments
	}
	return typ, nil
}

// isModuleFlag: the CLI's own flags come first; a module flag is any other.
func isModuleFlag(w string) bool {
	name, _, _ := strings.Cut(w, "=")
	switch name {
	case "-m", "--mod", "--progress", "-o", "--output", "--json", "-j", "-q", "--quiet", "-s", "--silent", "-v", "-vv", "-vvv", "--debug":
		return false
	}
	return true
}

// camel turns a CLI name (code-as-data) into the API's (codeAsData).
func camel(s string) string {
	parts := strings.Split(s, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// printable: what `dagger call` v0.21.8 prints as itself, not as an ID; or
// a shell opened on a container (terminal), which a person reads as it runs.
func printable(s *ast.Schema, typ *ast.Type) bool {
	def := s.Types[typ.Name()]
	return def != nil && (def.Kind == ast.Scalar || def.Kind == ast.Enum)
}

// Every documented command ends in something a person can read: a scalar or
// a list of scalars. On v0.21.8 an object prints as its ID
// (tests/engine-facts.md, fact 1).
func TestEveryDocumentedCommandEndsInSomethingPrintable(t *testing.T) {
	s := apiSchema(t)
	cmds := documentedCommands(t)
	require.GreaterOrEqual(t, len(cmds), 15, "the README and the CI examples are read")
	for _, c := range cmds {
		if c.words[len(c.words)-1] == "terminal" {
			continue
		}
		typ, err := resultType(s, c.words)
		if !assert.NoError(t, err, "%s: dagger call %s", c.where, strings.Join(c.words, " ")) {
			continue
		}
		assert.True(t, printable(s, typ), "%s: `dagger call %s` ends in a %s, which prints as an ID; end it in summary, json or another field",
			c.where, strings.Join(c.words, " "), typ.String())
	}
}

// The walk is what catches a command ending in an object.
func TestTheWalkFindsTheLastStepsType(t *testing.T) {
	s := apiSchema(t)
	for _, tc := range []struct {
		words     []string
		want      string
		printable bool
	}{
		{[]string{"demo"}, "String!", true},
		{[]string{"-m", "x", "--source", ".", "payload", "--from", "p.json", "deploy", "--webhook-url", "u", "--webhook-token", "env://T", "--allow-http"},
			"LowcodePipelineReceipt!", false},
		{[]string{"payload", "deploy", "--webhook-url", "u", "--webhook-token", "env://T", "summary"}, "String!", true},
		{[]string{"build", "--code-as-data", "publish", "--registry", "r", "--frontend-repository", "f", "--backend-repository", "b", "--tag", "1", "json"},
			"String!", true},
		{[]string{"-m", "examples/go", "plan", "--backend-image", "r/api:1", "--deploy-rule", "a -> b", "--backend", "api"}, "String!", true},
	} {
		typ, err := resultType(s, tc.words)
		require.NoError(t, err, tc.words)
		assert.Equal(t, tc.want, typ.String(), tc.words)
		assert.Equal(t, tc.printable, printable(s, typ), tc.words)
	}
	_, err := resultType(s, []string{"build", "--no-such-flag", "x"})
	assert.ErrorContains(t, err, "--no-such-flag is not a flag")
}
