package nodebuild

import (
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStepInputsAreReadFromPackageJSON(t *testing.T) {
	for _, tc := range []struct {
		name     string
		manifest string
		want     StepInputs
	}{
		{"no field: every step reads the whole project", `{"name":"a"}`, nil},
		{"null is no field", `{"lowcodePipeline":null}`, nil},
		{"no inputs setting", `{"lowcodePipeline":{}}`, StepInputs{}},
		{"each step its paths, cleaned, once", `{"lowcodePipeline":{"inputs":{
			"build:draw":["webpack.config.js","src/web/","./res/oConfig.json","src/web"],
			"build:node":["src/node","src/common"],
			"buildCodeAsData":["snapshot"]}}}`,
			StepInputs{DrawScript: {"webpack.config.js", "src/web", "res/oConfig.json"}, NodeScript: {"src/node", "src/common"}, CodeAsDataVerb: {"snapshot"}}},
		{"a step that reads nothing of the project but what the install read", `{"lowcodePipeline":{"inputs":{"buildCodeAsData":[]}}}`,
			StepInputs{CodeAsDataVerb: {}}},
		{"a name with dots and dashes", `{"lowcodePipeline":{"inputs":{"build:node":["src/my-app.v2/x.js",".babelrc"]}}}`,
			StepInputs{NodeScript: {"src/my-app.v2/x.js", ".babelrc"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tc.manifest))
			require.NoError(t, err)
			got, err := m.StepInputs()
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestStepInputsRefuseEveryBadDeclarationAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		manifest string
		want     []string // each a line of the error
	}{
		{"not an object", `{"lowcodePipeline":["src"]}`, []string{"package.json: lowcodePipeline: want an object"}},
		{"an unknown setting, inputs not an object", `{"lowcodePipeline":{"input":{},"inputs":"src"}}`, []string{
			`package.json: lowcodePipeline.input: unknown setting: the only one is "inputs"`,
			"package.json: lowcodePipeline.inputs: want an object"}},
		{"a step that is not one", `{"lowcodePipeline":{"inputs":{"build:web":["src"]}}}`, []string{
			"package.json: lowcodePipeline.inputs.build:web: not a build step: choose build:draw, build:node, buildCodeAsData"}},
		{"not an array", `{"lowcodePipeline":{"inputs":{"build:draw":"src/web"}}}`, []string{
			"package.json: lowcodePipeline.inputs.build:draw: want an array of project paths"}},
		{"each bad path by its index", `{"lowcodePipeline":{"inputs":{"build:draw":["src/web",3,"","/etc","../x","src/*.js","!res","node_modules/x","a/node_modules","dist","dist/web",".git/config",".","a\\b"]}}}`, []string{
			"13 problems",
			"build:draw[1]: want a string",
			`build:draw[2]: "": empty`,
			`build:draw[3]: "/etc": absolute`,
			`build:draw[4]: "../x": outside the project`,
			`build:draw[5]: "src/*.js": a pattern`,
			`build:draw[6]: "!res": a pattern`,
			`build:draw[7]: "node_modules/x": node_modules never reaches a step`,
			`build:draw[8]: "a/node_modules": node_modules never reaches a step`,
			`build:draw[9]: "dist": dist never reaches a step`,
			`build:draw[10]: "dist/web": dist never reaches a step`,
			`build:draw[11]: ".git/config": .git never reaches a step`,
			`build:draw[12]: ".": the whole project is what a step reads without a declaration`,
			`build:draw[13]: "a\\b": absolute or with a backslash`}},
		{"a huge value is cut", `{"lowcodePipeline":{"inputs":{"build:node":["/` + strings.Repeat("x", 5000) + `"]}}}`, []string{"… (5001 bytes)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tc.manifest))
			require.NoError(t, err)
			got, err := m.StepInputs()
			require.Error(t, err)
			assert.Nil(t, got, "nothing half-read")
			for _, want := range tc.want {
				assert.Contains(t, err.Error(), want)
			}
			assert.Less(t, len(err.Error()), 3000)
		})
	}
}

func FuzzStepInputs(f *testing.F) {
	for _, s := range []string{
		`{"lowcodePipeline":{"inputs":{"build:draw":["src/web","res/a.json"]}}}`,
		`{"lowcodePipeline":{"inputs":{"buildCodeAsData":["../x","a/./b//c/"]}}}`,
		`{"lowcodePipeline":{"inputs":{"build:node":[1,null,"dist"]},"x":0}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			return
		}
		inputs, err := m.StepInputs()
		if err != nil {
			assert.Nil(t, inputs)
			assert.True(t, strings.HasPrefix(err.Error(), "package.json: ") || strings.Contains(err.Error(), "problems:\n  - package.json: "), "%v", err)
			assert.Less(t, len(err.Error()), 60*(200+2*160), "values and paths are cut")
			return
		}
		for step, paths := range inputs {
			assert.Contains(t, InputSteps, step)
			for _, p := range paths {
				// what the build's filter is given: a clean path inside the project, no pattern
				assert.Equal(t, path.Clean(p), p)
				assert.False(t, path.IsAbs(p) || p == "." || p == ".." || strings.HasPrefix(p, "../"), "%q escapes the project", p)
				assert.NotContains(t, p, "*")
				assert.False(t, p == "dist" || strings.HasPrefix(p, "dist/") || strings.Contains("/"+p+"/", "/node_modules/"), "%q is never in the project", p)
			}
		}
	})
}

func TestDescribedSaysWhatAStepReads(t *testing.T) {
	inputs := StepInputs{DrawScript: {"src/web", "res/oConfig.json"}, CodeAsDataVerb: {}}
	for _, tc := range []struct {
		step    string
		tookAll bool
		want    string
	}{
		{DrawScript, false, "dist/web (npm run build:draw; reads src/web, res/oConfig.json)"},
		{NodeScript, false, "dist/web (npm run build:draw)"},
		{CodeAsDataVerb, false, "dist/web (npm run build:draw; reads nothing of the project but the install's files)"},
		{DrawScript, true, "dist/web (npm run build:draw; its declared inputs unused: the install took the whole project)"},
		{NodeScript, true, "dist/web (npm run build:draw)"},
	} {
		assert.Equal(t, tc.want, inputs.Described(WebDir, "npm run build:draw", tc.step, tc.tookAll), "%s, install took all: %v", tc.step, tc.tookAll)
	}
}

func TestAMissingInputIsNamedByItsPlaceInPackageJSON(t *testing.T) {
	err := MissingInput(DrawScript, 2, "src/wbe")
	assert.Equal(t, `package.json: lowcodePipeline.inputs.build:draw[2]: "src/wbe": no such file or folder in the project (node_modules, dist and .git are never part of it)`, err.Error())
	assert.Contains(t, MissingInput(NodeScript, 0, strings.Repeat("x", 500)).Error(), "… (500 bytes)", "the value is cut")
}
