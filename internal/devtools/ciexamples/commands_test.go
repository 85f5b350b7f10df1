package ciexamples

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/mattn/go-shellwords"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"gopkg.in/yaml.v3"

	"dagger/lowcode-pipeline/internal/devtools/schemagen"
	"dagger/lowcode-pipeline/internal/supplychain"
)

// apiSchema is the module's API and examples/go's, as the engine serves them.
func apiSchema(t *testing.T) *ast.Schema {
	t.Helper()
	s, err := schemagen.LoadSDL("../../../tests", "dagger-core.v0.21.8.graphql", "lowcode-pipeline.graphql", "lowcode-pipeline-example.graphql")
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
	for _, readme := range []string{"../../../README.md", "../../../examples/app/README.md"} {
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
			if n.Content[i].Value == "call" && n.Content[i+1].Kind == yaml.ScalarNode { // dagger-for-github's call:
				param("call", n.Content[i+1].Value)
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
	typ, _, err := walk(s, nil, words)
	return typ, err
}

// walk is resultType, counting the module calls: each function of functions
// ("Type.field") is one, a field none, and a constructor one when the module
// has one.
func walk(s *ast.Schema, functions map[string]bool, words []string) (*ast.Type, int, error) {
	calls := 0
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
		return nil, 0, fmt.Errorf("no constructor %s", constructor)
	}
	if len(field.Arguments) > 0 {
		calls++ // a constructor of its own: a module call on every dagger call
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
				return nil, 0, fmt.Errorf("%s is not a flag of the step before it", w)
			}
			if !hasValue && arg.Type.Name() != "Boolean" {
				i++ // its value
			}
			continue
		}
		def := s.Types[typ.Name()]
		if def == nil || def.Kind != ast.Object {
			return nil, 0, fmt.Errorf("%q follows a %s, which has no functions", w, typ.String())
		}
		f := def.Fields.ForName(camel(w))
		if f == nil {
			return nil, 0, fmt.Errorf("%s has no function or field %q", typ.Name(), w)
		}
		if functions[def.Name+"."+f.Name] {
			calls++
		}
		typ, args = f.Type, f.Arguments
	}
	return typ, calls, nil
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
		{[]string{"-m", "x", "payload", "--from", "p.json", "deploy", "--webhook-url", "u", "--webhook-token", "env://T", "--allow-http"},
			"LowcodePipelineReceipt!", false},
		{[]string{"payload", "deploy", "--webhook-url", "u", "--webhook-token", "env://T", "summary"}, "String!", true},
		{[]string{"build", "--code-as-data", "project", "publish", "--repository", "r/{kind}", "--tag", "1", "json"}, "String!", true},
		{[]string{"deliver", "--source", ".", "--repository", "r/{kind}", "--tag", "1", "--webhook-url", "u", "--webhook-token", "env://T", "--allow-http", "summary"},
			"String!", true},
		{[]string{"-m", "examples/go", "plan", "--backend-ref", "r/api:1", "--deploy-rule", "a -> b", "--backend", "api"}, "String!", true},
	} {
		typ, err := resultType(s, tc.words)
		require.NoError(t, err, tc.words)
		assert.Equal(t, tc.want, typ.String(), tc.words)
		assert.Equal(t, tc.printable, printable(s, typ), tc.words)
	}
	_, err := resultType(s, []string{"build", "--no-such-flag", "x"})
	assert.ErrorContains(t, err, "--no-such-flag is not a flag")
}

// moduleFunctions are both modules' functions, "Type.field".
func moduleFunctions(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for name, dir := range map[string]string{"lowcode-pipeline": "../../..", "lowcode-pipeline-example": "../../../examples/go"} {
		m, err := schemagen.Load(name, dir)
		require.NoError(t, err)
		_, err = m.Schema()
		require.NoError(t, err)
		for f := range m.Functions() {
			out[f] = true
		}
	}
	return out
}

// The call budget (CONTRIBUTING.md, "One call per run: the call budget"):
// every module call costs about 1.5 s on a real engine (tests/engine-facts.md,
// fact 2), so a CI run's delivery is one call and its snapshot two.
func TestEveryCIRunKeepsToTheCallBudget(t *testing.T) {
	s, functions := apiSchema(t), moduleFunctions(t)
	budget := map[string]int{"deliver": 1, "snapshot": 2}
	counted := map[string]int{}
	for _, c := range documentedCommands(t) {
		if c.where == "README.md" || c.where == "app/README.md" || c.where == "../README.md" {
			continue
		}
		_, calls, err := walk(s, functions, c.words)
		require.NoError(t, err, c.words)
		job := ""
		for _, w := range c.words {
			if _, ok := budget[w]; ok {
				job = w
				break
			}
		}
		require.NotEmpty(t, job, "%s: a CI command is a delivery or a snapshot: %v", c.where, c.words)
		assert.LessOrEqual(t, calls, budget[job], "%s: the %s job makes %d module calls: %v", c.where, job, calls, c.words)
		counted[c.where+" "+job]++
	}
	for _, e := range examples {
		assert.Equal(t, 1, counted[e.file+" deliver"], "%s has one delivery command", e.file)
		assert.Equal(t, 1, counted[e.file+" snapshot"], "%s has one snapshot command", e.file)
	}
}

// The counting is what catches a chain of steps.
func TestTheWalkCountsModuleCalls(t *testing.T) {
	s, functions := apiSchema(t), moduleFunctions(t)
	for _, tc := range []struct {
		words []string
		calls int
	}{
		{[]string{"deliver", "--repository", "r/{kind}", "--tag", "1", "--webhook-url", "u", "--webhook-token", "env://T", "summary"}, 1},
		{[]string{"deliver", "--repository", "r/{kind}", "--tag", "1", "--webhook-url", "u", "--webhook-token", "env://T", "receipt", "status"}, 1},
		{[]string{"build", "publish", "--repository", "r/{kind}", "--tag", "1", "payload", "deploy", "--webhook-url", "u", "--webhook-token", "env://T", "summary"}, 4},
		{[]string{"snapshot", "--toolkit", "t", "push", "summary"}, 2},
		{[]string{"-m", "examples/go", "plan", "--backend-ref", "r/api:1", "--deploy-rule", "a -> b", "--backend", "api"}, 1},
	} {
		_, calls, err := walk(s, functions, tc.words)
		require.NoError(t, err, tc.words)
		assert.Equal(t, tc.calls, calls, tc.words)
	}
}

// deliver takes the steps' flags: each of its flags says exactly what the
// same flag of the step it is passed to says, so the copies cannot drift.
func TestDeliverTakesTheStepsFlagsAsTheySayThem(t *testing.T) {
	s := apiSchema(t)
	deliver := s.Types["LowcodePipeline"].Fields.ForName("deliver")
	require.NotNil(t, deliver)
	steps := []*ast.FieldDefinition{
		s.Types["LowcodePipeline"].Fields.ForName("build"),
		s.Types["LowcodePipelineBuild"].Fields.ForName("publish"),
		s.Types["LowcodePipelinePayload"].Fields.ForName("deploy"),
	}
	renamed := map[string]string{"payload": "from"} // deliver --payload is the payload step's --from
	from := s.Types["LowcodePipelineRelease"].Fields.ForName("payload").Arguments.ForName("from")
	for _, a := range deliver.Arguments {
		var same *ast.ArgumentDefinition
		for _, step := range steps {
			if same = step.Arguments.ForName(a.Name); same != nil {
				break
			}
		}
		if renamed[a.Name] != "" {
			same = from
		}
		if !assert.NotNil(t, same, "deliver --%s is no step's flag", a.Name) {
			continue
		}
		assert.Equal(t, same.Description, a.Description, "deliver --%s says what the step says", a.Name)
		assert.Equal(t, same.Type.String(), a.Type.String(), "deliver --%s has the step's type", a.Name)
		assert.Equal(t, same.DefaultValue.String(), a.DefaultValue.String(), "deliver --%s has the step's default", a.Name)
	}
	assert.Greater(t, len(deliver.Arguments), 8, "deliver is the documented exception to the eight-flag rule")
}

// No function takes more than eight flags but deliver (CONTRIBUTING.md, "One
// call per run: the call budget").
func TestNoFunctionTakesMoreThanEightFlags(t *testing.T) {
	s := apiSchema(t)
	for name, def := range s.Types {
		if !strings.HasPrefix(name, "LowcodePipeline") || strings.HasPrefix(name, "LowcodePipelineExample") || def.Kind != ast.Object {
			continue
		}
		for _, f := range def.Fields {
			if name == "LowcodePipeline" && f.Name == "deliver" {
				continue
			}
			assert.LessOrEqual(t, len(f.Arguments), 8, "%s.%s takes %d flags", name, f.Name, len(f.Arguments))
		}
	}
}

// Loading the module uploads what it needs and not the rest (its tests,
// their data, the docs): dagger.json's include list, whose patterns here are
// all exclusions of a folder ("x/", "**/x/") or of files ("**/*_test.go", a
// name), read after the module's source as the engine does
// (tests/engine-facts.md, fact 25). Every file the module reads at run time
// stays.
func TestLoadingTheModuleUploadsWhatItNeeds(t *testing.T) {
	var cfg struct {
		Include []string `json:"include"`
	}
	data, err := os.ReadFile("../../../dagger.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &cfg))
	excluded := func(path string) bool {
		for _, p := range cfg.Include {
			pattern, ok := strings.CutPrefix(p, "!")
			require.True(t, ok, "only exclusions: %s", p)
			if strings.HasSuffix(pattern, "/") {
				pattern += "**"
			}
			if m, err := doublestar.Match(pattern, path); err == nil && m {
				return true
			}
			if m, err := doublestar.Match(pattern, filepath.Base(path)); err == nil && m && !strings.Contains(pattern, "/") {
				return true
			}
		}
		return false
	}
	out, err := exec.Command("git", "-C", "../../..", "ls-files").Output()
	require.NoError(t, err)
	var size int64
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if excluded(f) {
			continue
		}
		info, err := os.Stat(filepath.Join("../../..", f))
		require.NoError(t, err)
		size += info.Size()
	}
	for _, needed := range []string{"main.go", "go.mod", "go.sum", "internal/ocipublish/publish.go", "internal/commands/ocipublish.go", "internal/busybox/busybox.go",
		"docker/frontend.Dockerfile", "examples/app/package.json", "examples/app/package-lock.json", "dagger.json"} {
		assert.False(t, excluded(needed), "%s is needed at run time", needed)
	}
	for _, left := range []string{"tests/main.go", "internal/rules/testdata/node-verdicts.json", "internal/images/images_test.go", "README.md",
		"go.work", "internal/devtools/deps.go", "internal/testsupport/registrytest/registrytest.go"} {
		assert.True(t, excluded(left), "%s is not needed at run time", left)
	}
	assert.Less(t, size, int64(2<<20), "a load uploads %d bytes", size)
	t.Logf("a load uploads %d bytes of tracked files", size)
}

// The supply-chain tools' default images are the versions supplychain pins,
// each pinned by digest, and the from-source build is of the same versions.
func TestToolImagesAreThePinnedVersions(t *testing.T) {
	s := apiSchema(t)
	release := s.Types["LowcodePipelineRelease"]
	for _, tc := range []struct{ fn, arg, image, pkg string }{
		{"sboms", "syftImage", supplychain.SyftImage, supplychain.Syft},
		{"sign", "syftImage", supplychain.SyftImage, supplychain.Syft},
		{"sign", "cosignImage", supplychain.CosignImage, supplychain.Cosign},
	} {
		arg := release.Fields.ForName(tc.fn).Arguments.ForName(tc.arg)
		require.NotNil(t, arg, "%s --%s", tc.fn, tc.arg)
		if arg.DefaultValue == nil { // a default applied in code, so that a flag given in vain can be refused: its help names it
			assert.Contains(t, arg.Description, "(default: "+tc.image+")", "%s --%s", tc.fn, tc.arg)
		} else {
			assert.Equal(t, strconv.Quote(tc.image), arg.DefaultValue.String(), "%s --%s defaults to the pinned image", tc.fn, tc.arg)
		}
		_, version, _ := strings.Cut(tc.pkg, "@")
		tagged, digest, pinned := strings.Cut(tc.image, "@")
		assert.True(t, strings.HasSuffix(tagged, ":"+version), "%s is the version built from source, %s", tc.image, version)
		assert.True(t, pinned, "%s is pinned by digest", tc.image)
		assert.Regexp(t, "^sha256:[0-9a-f]{64}$", digest, "%s is pinned by a whole digest", tc.image)
	}
}

// toolkit-snapshot shares snapshot's flags: each says the same.
func TestToolkitSnapshotTakesSnapshotsFlagsAsItSaysThem(t *testing.T) {
	s := apiSchema(t)
	snapshot := s.Types["LowcodePipeline"].Fields.ForName("snapshot")
	shared := 0
	for _, a := range s.Types["LowcodePipeline"].Fields.ForName("toolkitSnapshot").Arguments {
		same := snapshot.Arguments.ForName(a.Name)
		if same == nil {
			continue
		}
		shared++
		assert.Equal(t, same.Description, a.Description, "toolkit-snapshot --%s says what snapshot's says", a.Name)
		assert.Equal(t, same.DefaultValue.String(), a.DefaultValue.String(), "toolkit-snapshot --%s has snapshot's default", a.Name)
	}
	assert.GreaterOrEqual(t, shared, 6)
}
