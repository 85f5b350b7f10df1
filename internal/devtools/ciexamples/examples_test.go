package ciexamples

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"dagger/lowcode-pipeline/internal/devtools/schemagen"
)

const dir = "../../../examples/ci"

// example is one CI system's file and how it keeps each rule.
type example struct {
	file                                           string
	yaml                                           bool
	mainOnly, noOverlap, scheduled, codeAsDataFlag string // a snippet that shows the rule is kept
}

var examples = []example{
	{"github-actions.yml", true, "github.ref == 'refs/heads/main'", "concurrency:", "schedule:", "--code-as-data ${{ inputs.code_as_data && 'project' || 'none' }}"},
	{"gitlab-ci.yml", true, "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH", "resource_group: production", `$CI_PIPELINE_SOURCE == "schedule"`, `--code-as-data "$CODE_AS_DATA"`},
	{"Jenkinsfile", false, "branch 'main'", "disableConcurrentBuilds()", "cron(env.BRANCH_NAME == 'main' ? 'H 2 * * *' : '')", `--code-as-data "${CODE_AS_DATA:-none}"`},
	{"azure-pipelines.yml", true, "eq(variables['Build.SourceBranch'], 'refs/heads/main')", "lockBehavior: sequential", "schedules:", "--code-as-data ${{ parameters.codeAsData }}"},
	{"circleci-config.yml", true, "only: main", "serial-group:", "when: << pipeline.parameters.snapshot >>", "--code-as-data << pipeline.parameters.code-as-data >>"},
	{"bitbucket-pipelines.yml", true, "  branches:\n    main:", "deployment: production", "snapshot:", `--code-as-data "${CODE_AS_DATA:-none}"`},
	{"tekton.yml", true, `values: ["main"]`, "name: lowcode-pipeline-wait-turn", `schedule: "0 2 * * *"`, "--code-as-data $(params.code-as-data)"},
}

func read(t *testing.T, name string) string {
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(data)
}

func TestEveryExampleIsListed(t *testing.T) {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var listed []string
	for _, e := range examples {
		listed = append(listed, e.file)
	}
	for _, e := range entries {
		assert.Contains(t, listed, e.Name(), "every file in examples/ci is linted")
	}
}

func TestExamplesParse(t *testing.T) {
	for _, e := range examples {
		t.Run(e.file, func(t *testing.T) {
			text := read(t, e.file)
			if e.yaml {
				dec := yaml.NewDecoder(strings.NewReader(text))
				for {
					var doc any
					err := dec.Decode(&doc)
					if err == io.EOF {
						break
					}
					require.NoError(t, err)
					require.NotNil(t, doc)
				}
				return
			}
			// The Jenkinsfile: a declarative pipeline whose braces balance.
			assert.True(t, strings.HasPrefix(strings.TrimSpace(stripComments(text)), "pipeline {"))
			assert.Equal(t, strings.Count(text, "{"), strings.Count(text, "}"))
			assert.Equal(t, strings.Count(text, "("), strings.Count(text, ")"))
			for _, section := range []string{"agent", "triggers", "options", "parameters", "environment", "stages"} {
				assert.Contains(t, text, "\n  "+section+" {", "declarative section %s", section)
			}
		})
	}
}

func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "//") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

var (
	versionRE = regexp.MustCompile(`DAGGER_VERSION(?:\s*[:=]\s*|\s*\n\s*value:\s*)['"]?([0-9][0-9.]*)`)
	secretRE  = regexp.MustCompile(`--(npmrc|git-token|webhook-token|platform-token|registry-password|cosign-key|cosign-password)[ =](\S+)`)
	flagRE    = regexp.MustCompile(`(?:^|[\s>])(--[a-z][a-z0-9-]*)`)
)

// The rules every example keeps: the Dagger CLI pinned to the module's
// engine, secrets passed as env:// or file://, delivery from main only and
// never overlapping, a scheduled snapshot, the code-as-data switch, and
// only flags the module has.
func TestExamplesKeepTheRules(t *testing.T) {
	var module struct {
		EngineVersion string `json:"engineVersion"`
	}
	data, err := os.ReadFile("../../../dagger.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &module))
	mod, err := schemagen.Load("lowcode-pipeline", "../../..")
	require.NoError(t, err)
	flags := mod.Flags()

	for _, e := range examples {
		t.Run(e.file, func(t *testing.T) {
			text := read(t, e.file)
			versions := versionRE.FindAllStringSubmatch(text, -1)
			require.NotEmpty(t, versions, "the Dagger CLI version is pinned")
			for _, v := range versions {
				assert.Equal(t, strings.TrimPrefix(module.EngineVersion, "v"), v[1], "the CLI is the module's engine version")
			}
			secrets := secretRE.FindAllStringSubmatch(text, -1)
			require.NotEmpty(t, secrets)
			for _, s := range secrets {
				value := strings.Trim(s[2], `"'`)
				assert.Regexp(t, `^(env|file)://`, value, "--%s is passed as env:// or file://", s[1])
			}
			assert.NotRegexp(t, `\benv:[A-Z]`, text, "no legacy env:NAME secrets")
			for rule, snippet := range map[string]string{"main only": e.mainOnly, "no overlapping deployments": e.noOverlap,
				"a scheduled snapshot": e.scheduled, "the code-as-data switch": e.codeAsDataFlag} {
				assert.Contains(t, text, snippet, rule)
			}
			assert.Regexp(t, `(?s)snapshot --source \..*push --git-token`, text, "the snapshot job")
			assert.Regexp(t, `(?s)deliver --source \..*--webhook-url`, text, "the delivery, one call")
			for _, m := range flagRE.FindAllStringSubmatch(stripCIFlags(text), -1) {
				assert.True(t, flags[m[1]], "%s is a flag of the module", m[1])
			}
		})
	}
}

// stripCIFlags drops what is not a module flag: the CLI's own, curl's and
// the CI tools'.
func stripCIFlags(text string) string {
	for _, f := range []string{"--source .", "--no-cache", "--format", "--depth", "--branch", "--workspace", "--param", "--quiet", "--silent",
		"--serviceaccount", "--use-param-defaults"} {
		text = strings.ReplaceAll(text, f, "")
	}
	return text
}

// The files with a published schema validate against it, and the schema
// is shown to bite: the same file with one keyword misspelt is refused.
func TestExamplesValidateAgainstTheirCIsSchemas(t *testing.T) {
	for _, tc := range []struct {
		file   string
		schema map[string]string // document kind ("" for the whole file) → schema file
		// strings: the schema reads every scalar as a string, as its YAML
		// language server does (Azure writes true as "true")
		strings bool
		// broken: a piece of the file, and a misspelt or mistyped one its
		// schema refuses
		broken [2]string
	}{
		{"azure-pipelines.yml", map[string]string{"": "azure-pipelines.json"}, true, [2]string{"lockBehavior:", "lockBehaviour:"}},
		{"circleci-config.yml", map[string]string{"": "circleci.json"}, false, [2]string{"version: 2.1", "version: 3"}},
		{"gitlab-ci.yml", map[string]string{"": "gitlab-ci.json"}, false, [2]string{"resource_group:", "resource-group:"}},
		{"bitbucket-pipelines.yml", map[string]string{"": "bitbucket-pipelines.json"}, false, [2]string{"deployment: production", "deployment: [production]"}},
		{"tekton.yml", map[string]string{"Task": "tekton-v1_Task.json", "Pipeline": "tekton-v1_Pipeline.json"}, false, [2]string{"workspaces:", "workspace:"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			text := read(t, tc.file)
			errs, checked := validateDocuments(t, text, tc.schema, tc.strings)
			for _, err := range errs {
				assert.NoError(t, err, "%s", tc.file)
			}
			for kind := range tc.schema {
				assert.Positive(t, checked[kind], "a document of kind %q was checked against its schema", kind)
			}

			require.Contains(t, text, tc.broken[0])
			errs, _ = validateDocuments(t, strings.Replace(text, tc.broken[0], tc.broken[1], 1), tc.schema, tc.strings)
			assert.NotEmpty(t, errs, "%s with %q for %q must be refused by its schema", tc.file, tc.broken[1], tc.broken[0])
		})
	}
}

// validateDocuments checks each YAML document of text against the schema
// its kind names and returns the validation errors and how many documents
// of each kind ("" for a whole-file schema) were checked.
func validateDocuments(t *testing.T, text string, schemas map[string]string, asStrings bool) (errs []error, checked map[string]int) {
	checked = map[string]int{}
	t.Helper()
	c := jsonschema.NewCompiler()
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if err == io.EOF {
			return errs, checked
		}
		require.NoError(t, err)
		var doc map[string]any
		require.NoError(t, node.Decode(&doc))
		kind, _ := doc["kind"].(string)
		name, ok := schemas[""]
		checkedAs := ""
		if !ok {
			if name, ok = schemas[kind]; !ok {
				continue // a Kubernetes object of another API (the ConfigMaps, the CronJob, RBAC)
			}
			checkedAs = kind
		}
		schema, err := c.Compile(filepath.Join("testdata/schemas", name))
		require.NoError(t, err)
		var value any = doc
		if asStrings {
			value = scalarsAsStrings(&node)
		}
		data, err := json.Marshal(value)
		require.NoError(t, err)
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
		require.NoError(t, err)
		if err := schema.Validate(inst); err != nil {
			errs = append(errs, fmt.Errorf("%s against %s: %w", kind, name, err))
		}
		checked[checkedAs]++
	}
}

// scalarsAsStrings turns a YAML document into JSON values whose scalars are
// all strings, as a YAML language server hands them to its schema.
func scalarsAsStrings(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		return scalarsAsStrings(n.Content[0])
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = scalarsAsStrings(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := []any{}
		for _, c := range n.Content {
			l = append(l, scalarsAsStrings(c))
		}
		return l
	case yaml.AliasNode:
		return scalarsAsStrings(n.Alias)
	}
	return n.Value
}
