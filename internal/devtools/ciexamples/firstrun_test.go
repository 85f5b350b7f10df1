package ciexamples

import (
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// What makes a file run the first time (issue #64, item 7): its header says
// where it runs and what to set, every site-specific value is set once at
// its top, and every variable a command reads comes from somewhere.

var (
	siteStart = regexp.MustCompile(`(?m)^[ \t]*(?:#|//) ---- site values: set these \(and only these\) for your project ----[ \t]*$`)
	siteEnd   = regexp.MustCompile(`(?m)^[ \t]*(?:#|//) ---- end of site values ----.*$`)
	// NAME: value, NAME = 'value', NAME=value (a ConfigMap, an env block, an export)
	firstCommand = regexp.MustCompile(`(deliver|snapshot) --source`)
	siteAssign   = regexp.MustCompile(`\b([A-Z][A-Z0-9_]*)[ \t]*[:=][ \t]*['"]?([^\s'"#]+)`)
)

// The placeholders a site block holds; outside it they would be a value to
// change in a second place.
var placeholders = []string{"example.com", "your-org"}

// siteBlock cuts a file into its site block (from its first marker line to
// its last) and the rest.
func siteBlock(t *testing.T, text string) (block, outside string, at int) {
	t.Helper()
	starts, ends := siteStart.FindAllStringIndex(text, -1), siteEnd.FindAllStringIndex(text, -1)
	require.Len(t, starts, 1, "one site block begins")
	require.Len(t, ends, 1, "one site block ends")
	require.Less(t, starts[0][0], ends[0][0], "the site block begins before it ends")
	return text[starts[0][0]:ends[0][1]], text[:starts[0][0]] + text[ends[0][1]:], starts[0][0]
}

// header is the file's leading comment, up to its first line of code or
// blank line.
func header(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "//") {
			break
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func TestSiteValuesAreSetInOnePlaceAtTheTop(t *testing.T) {
	base := []string{"LOWCODE_PIPELINE", "IMAGE_REPOSITORY", "ORCHESTRATOR", "DAGGER_VERSION"}
	for _, tc := range []struct {
		file  string
		names []string // the site values the file reads
		runs  string   // what its header says of where it runs, or what it needs
	}{
		{"github-actions.yml", base, "Runs on GitHub-hosted ubuntu-latest runners as it is"},
		{"gitlab-ci.yml", base, "Runs on GitLab.com's hosted Linux runners"},
		{"Jenkinsfile", base, "a Docker whose\n// user may start privileged containers"},
		{"azure-pipelines.yml", base, "Runs on Microsoft-hosted ubuntu-latest agents as it is"},
		{"circleci-config.yml", base, "Runs on CircleCI's cloud machine executor as it is"},
		{"bitbucket-pipelines.yml", base, "Needs a self-hosted runner"},
		{"tekton.yml", append(slices.Clone(base), "GIT_URL", "GIT_USERNAME"), "must admit privileged pods"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			text := read(t, tc.file)
			block, outside, at := siteBlock(t, text)
			first := firstCommand.FindStringIndex(text)
			require.NotNil(t, first)
			assert.Less(t, at, first[0], "the site values come before the commands that read them")
			values := map[string]string{}
			for _, m := range siteAssign.FindAllStringSubmatch(block, -1) {
				values[m[1]] = m[2]
			}
			head := header(text)
			for _, name := range tc.names {
				if !assert.Contains(t, values, name, "the site block sets %s", name) {
					continue
				}
				if name == "DAGGER_VERSION" {
					continue // pinned to the module's engine, not the site's
				}
				assert.NotContains(t, outside, values[name], "%s's value is set in the site block only", name)
				assert.Regexp(t, `\b`+name+`\b`, head, "the header says to set %s", name)
			}
			for _, p := range placeholders {
				assert.NotContains(t, outside, p, "no site-specific %s outside the site block", p)
			}
			assert.NotContains(t, head, "one line to change", "the header says truthfully what to set")
			assert.Contains(t, head, tc.runs, "the header says where the file runs, or what it needs")
		})
	}
}

var ciVariable = regexp.MustCompile(`^(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|CI_VALUE)$`)

// The module reference, the image repository and the orchestrator of every
// CI command are variables: the site block's, or the CI's own.
func TestCommandsTakeSiteValuesFromVariables(t *testing.T) {
	checked := 0
	for _, c := range documentedCommands(t) {
		if strings.HasSuffix(c.where, "README.md") {
			continue
		}
		for i, w := range c.words {
			switch w {
			case "-m", "--mod", "--repository", "--orchestrator":
				require.Less(t, i+1, len(c.words), "%s: %s has a value", c.where, w)
				assert.Regexp(t, ciVariable, c.words[i+1], "%s: %s takes a variable, not a literal", c.where, w)
				checked++
			case "--toolkit", "--draw-package":
				assert.Fail(t, "the module reads the toolkit and the design tool from package.json", "%s passes %s", c.where, w)
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 3*len(examples), "every CI command was read")

	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{`$IMAGE_REPOSITORY`, true},
		{`${ORCHESTRATOR}`, true},
		{`CI_VALUE`, true},
		{`registry.example.com/team/app-{kind}`, false},
		{`github.com/your-org/lowcode-pipeline@v1.0.0`, false},
		{`$IMAGE_REPOSITORY/app`, false},
	} {
		assert.Equal(t, tc.ok, ciVariable.MatchString(tc.value), tc.value)
	}
}

var (
	varUse = regexp.MustCompile(`\$\{?([A-Z_][A-Z0-9_]*)(\.?)|\$\(([A-Z_][A-Z0-9_]*)\)`) // $X ${X} and Azure's $(X); not jq's $ENV.X
	varDef = []*regexp.Regexp{
		regexp.MustCompile(`(?m)^[ \t]*(?:-[ \t]+)?([A-Z_][A-Z0-9_]*)[ \t]*:`),                          // YAML: an env, variables or ConfigMap key
		regexp.MustCompile(`\bname:[ \t]*['"]?([A-Z_][A-Z0-9_]*)\b`),                                    // Tekton env, Bitbucket variables, a Jenkins parameter
		regexp.MustCompile(`(?:variable|usernameVariable|passwordVariable):[ \t]*'([A-Z_][A-Z0-9_]*)'`), // a Jenkins credential binding
		regexp.MustCompile(`(?m)^[ \t]*([A-Z_][A-Z0-9_]*)[ \t]+=[ \t]`),                                 // Jenkins environment
	}
	shellAssign = regexp.MustCompile(`(?:^|[\s;])([A-Z_][A-Z0-9_]*)=("?\$\{?([A-Z_][A-Z0-9_]*))?`)
	headerWord  = regexp.MustCompile(`\b[A-Z_][A-Z0-9_]*\b`)
)

// undefinedVariables lists the variables text reads that nothing defines:
// not the file (an env key, a credential binding, a parameter, a shell
// assignment other than X=$X), not its header (a secret to create), not the
// CI system (builtin) nor the shell.
func undefinedVariables(text string, builtin *regexp.Regexp) []string {
	known := map[string]bool{"HOME": true, "PATH": true}
	for _, re := range varDef {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			known[m[1]] = true
		}
	}
	for _, m := range shellAssign.FindAllStringSubmatch(text, -1) {
		if m[1] != m[3] {
			known[m[1]] = true
		}
	}
	for _, w := range headerWord.FindAllString(header(text), -1) {
		known[w] = true
	}
	var out []string
	for _, m := range varUse.FindAllStringSubmatch(text, -1) {
		name := m[1] + m[3]
		if m[2] == "." || known[name] || builtin.MatchString(name) || slices.Contains(out, name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

func TestEveryVariableACommandReadsIsDefinedOrDocumented(t *testing.T) {
	for _, tc := range []struct {
		file    string
		builtin string // the CI system's own variables
	}{
		{"github-actions.yml", `^GITHUB_`},
		{"gitlab-ci.yml", `^CI_`},
		{"Jenkinsfile", `^(BUILD_NUMBER|GIT_COMMIT|GIT_URL|WORKSPACE|BRANCH_NAME)$`},
		{"azure-pipelines.yml", `^$`}, // Azure's own are macros, $(Build.X)
		{"circleci-config.yml", `^CIRCLE_`},
		{"bitbucket-pipelines.yml", `^BITBUCKET_`},
		{"tekton.yml", `^$`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			assert.Empty(t, undefinedVariables(read(t, tc.file), regexp.MustCompile(tc.builtin)))
		})
	}
}

// The check catches what it is for: a variable nothing sets.
func TestUndefinedVariablesAreFound(t *testing.T) {
	jenkins := regexp.MustCompile(`^(BUILD_NUMBER|WORKSPACE)$`)
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"a Jenkinsfile reading an orchestrator it never sets",
			"// Credentials to create: orchestrator-password (secret text).\npipeline {\n  environment {\n    LOWCODE_PIPELINE = 'x'\n  }\n" +
				"  sh 'dagger call -m \"$LOWCODE_PIPELINE\" snapshot --orchestrator \"$ORCHESTRATOR\"'\n}\n", []string{"ORCHESTRATOR"}},
		{"a credential binding defines its variable",
			"pipeline {\n  withCredentials([string(credentialsId: 'o', variable: 'ORCHESTRATOR')]) { sh 'x \"$ORCHESTRATOR\"' }\n}\n", nil},
		{"a secret the header names is documented", "# Secrets to create: WEBHOOK_URL.\nrun: curl \"$WEBHOOK_URL\"\n", nil},
		{"X=$X defines nothing", "run: DAGGER_VERSION=\"$DAGGER_VERSION\" sh\n", []string{"DAGGER_VERSION"}},
		{"the CI's own and jq's $ENV are not the file's", "run: echo \"$BUILD_NUMBER\" | jq '$ENV.RUN' \"$WORKSPACE\"\n", nil},
		{"an Azure macro is read too", "script: echo $(NPMRC)\n", []string{"NPMRC"}},
	} {
		assert.Equal(t, tc.want, undefinedVariables(tc.text, jenkins), tc.name)
	}
}

// checkoutTooOld says why a `uses:` runs on a deprecated Node.js: the
// actions whose current major runs on node24, and that major.
func checkoutTooOld(uses string) (string, bool) {
	for action, major := range map[string]int{"actions/checkout": 5} {
		ref, ok := strings.CutPrefix(uses, action+"@v")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.SplitN(ref, ".", 2)[0])
		if err != nil || n < major {
			return action + " before v" + strconv.Itoa(major) + " runs on a deprecated Node.js", true
		}
	}
	return "", false
}

func TestGitHubActionsRunOnTheCurrentNode(t *testing.T) {
	var workflow struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string `yaml:"uses"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(read(t, "github-actions.yml")), &workflow))
	checkouts := 0
	for job, j := range workflow.Jobs {
		for _, s := range j.Steps {
			why, old := checkoutTooOld(s.Uses)
			assert.False(t, old, "%s: %s: %s", job, s.Uses, why)
			if strings.HasPrefix(s.Uses, "actions/checkout@") {
				checkouts++
			}
		}
	}
	assert.Equal(t, len(workflow.Jobs), checkouts, "every job checks out the project")

	for uses, old := range map[string]bool{"actions/checkout@v4": true, "actions/checkout@v4.3.1": true,
		"actions/checkout@v5": false, "actions/checkout@v6": false, "dagger/dagger-for-github@v8.4.0": false} {
		_, got := checkoutTooOld(uses)
		assert.Equal(t, old, got, uses)
	}
}

// Bitbucket Cloud's hosted docker service refuses privileged containers: every
// step runs on a self-hosted Linux Shell runner, with the host's Docker.
func TestBitbucketStepsRunOnASelfHostedShellRunner(t *testing.T) {
	var doc any
	require.NoError(t, yaml.Unmarshal([]byte(read(t, "bitbucket-pipelines.yml")), &doc))
	var steps []map[string]any
	var walk func(any)
	walk = func(n any) {
		switch v := n.(type) {
		case map[string]any:
			if s, ok := v["step"].(map[string]any); ok {
				steps = append(steps, s)
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	require.GreaterOrEqual(t, len(steps), 4, "the definitions' step, its uses and the snapshot step")
	for _, s := range steps {
		runsOn, _ := s["runs-on"].([]any)
		assert.ElementsMatch(t, []any{"self.hosted", "linux.shell"}, runsOn, "step %q runs on a self-hosted Linux Shell runner", s["name"])
		assert.NotContains(t, s, "services", "step %q uses the host's Docker, not the docker service", s["name"])
	}
	head := header(read(t, "bitbucket-pipelines.yml"))
	assert.Contains(t, head, "_EXPERIMENTAL_DAGGER_RUNNER_HOST", "the header names the other way: a remote engine")
}

// CircleCI's legacy scheduled workflows (triggers: schedule) give way to a
// schedule trigger set in the project, which sets a pipeline parameter.
func TestCircleCIRunsTheSnapshotFromAScheduleTrigger(t *testing.T) {
	var config struct {
		Parameters map[string]map[string]any `yaml:"parameters"`
		Workflows  map[string]map[string]any `yaml:"workflows"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(read(t, "circleci-config.yml")), &config))
	for name, w := range config.Workflows {
		assert.NotContains(t, w, "triggers", "workflow %s: no legacy scheduled workflow", name)
	}
	assert.Equal(t, map[string]any{"type": "boolean", "default": false,
		"description": "Set to true by the nightly schedule trigger, which then runs the snapshot and no delivery"}, config.Parameters["snapshot"])
	assert.Equal(t, "<< pipeline.parameters.snapshot >>", config.Workflows["nightly-snapshot"]["when"])
	assert.Equal(t, map[string]any{"not": "<< pipeline.parameters.snapshot >>"}, config.Workflows["deliver"]["when"])
	assert.Contains(t, header(read(t, "circleci-config.yml")), "Project Settings → Triggers", "the header says where the schedule is set")
}

// A multibranch job would run the nightly snapshot on every branch: only
// main's job gets the cron trigger, and the stage runs on main only.
func TestJenkinsNightlySnapshotRunsOnMainOnly(t *testing.T) {
	text := read(t, "Jenkinsfile")
	assert.Equal(t, 1, strings.Count(text, "cron("), "one trigger")
	assert.Regexp(t, `cron\(env\.BRANCH_NAME == 'main' \? '[^']+' : ''\)`, text, "the cron trigger is main's job's only")
	_, stage, ok := strings.Cut(text, "stage('Snapshot')")
	require.True(t, ok)
	stage, _, _ = strings.Cut(stage, "stage('Deliver')")
	assert.Contains(t, stage, "branch 'main'")
	assert.Contains(t, stage, "triggeredBy 'TimerTrigger'")
}

// yamlDocuments reads every document of a YAML file.
func yamlDocuments(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		out = append(out, doc)
	}
}
