package nodebuild

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInstallInputsFollowTheInstallTimeScripts(t *testing.T) {
	root := []string{"package.json", "package-lock.json", "patches/", "config/", "src/"}
	base := []Input{{Path: "package.json"}, {Path: "package-lock.json"}}
	whole := []Input{{Path: ".", Dir: true}}
	for _, tc := range []struct {
		name    string
		scripts map[string]string
		root    []string
		want    []Input
	}{
		{"no install-time script needs nothing more", map[string]string{"build": "node build.mjs", "test": "node --test"}, root, base},
		{"a blank install-time script needs nothing more", map[string]string{"prepare": "  "}, root, base},
		{"a postinstall running a project file needs the whole project", map[string]string{"postinstall": "node scripts/setup.mjs"}, root, whole},
		{"prepare running the build needs the whole project", map[string]string{"prepare": "npm run build"}, root, whole},
		{"husky needs nothing (no .git is uploaded)", map[string]string{"prepare": "husky"}, root, base},
		{"husky install needs nothing", map[string]string{"prepare": "husky install"}, root, base},
		{"an environment assignment before a known tool changes nothing", map[string]string{"prepare": "HUSKY=0 husky"}, root, base},
		{"patch-package needs its patches folder", map[string]string{"postinstall": "patch-package"}, root, append(base[:2:2], Input{Path: "patches", Dir: true})},
		{"patch-package without a patches folder needs nothing", map[string]string{"postinstall": "patch-package"}, []string{"package.json", "package-lock.json"}, base},
		{"npx patch-package with --patch-dir needs that folder's top", map[string]string{"postinstall": "npx --yes patch-package --patch-dir config/patches --error-on-fail"}, root, append(base[:2:2], Input{Path: "config", Dir: true})},
		{"--patch-dir= is read too", map[string]string{"postinstall": "patch-package --patch-dir=config/patches"}, root, append(base[:2:2], Input{Path: "config", Dir: true})},
		{"two known tools need the union", map[string]string{"postinstall": "patch-package && husky", "prepare": "husky"}, root, append(base[:2:2], Input{Path: "patches", Dir: true})},
		{"a known tool then an unknown one needs the whole project", map[string]string{"postinstall": "patch-package; node x.js"}, root, whole},
		{"a pipe to an unknown command needs the whole project", map[string]string{"postinstall": "husky | tee log"}, root, whole},
		{"a patch folder outside the project needs the whole project", map[string]string{"postinstall": "patch-package --patch-dir ../patches"}, root, whole},
		{"patch-package making a patch needs the whole project", map[string]string{"postinstall": "patch-package lodash"}, root, whole},
		{"a substitution needs the whole project", map[string]string{"preinstall": "husky $(cat args)"}, root, whole},
		{"unbalanced quotes need the whole project", map[string]string{"install": `husky "install`}, root, whole},
		{"preinstall is an install-time script", map[string]string{"preinstall": "node check.js"}, root, whole},
		{"postprepare is an install-time script", map[string]string{"postprepare": "node x.js"}, root, whole},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.Marshal(map[string]any{"scripts": tc.scripts})
			require.NoError(t, err)
			m, err := ParseManifest(data)
			require.NoError(t, err)
			got, err := m.InstallInputs(tc.root)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestWorkspacesGetTheWholeProject(t *testing.T) {
	for _, tc := range []struct {
		name, workspaces string
		whole            bool
	}{
		{"a list of folders", `["packages/*"]`, true},
		{"the object form", `{"packages": ["packages/*"]}`, true},
		{"an empty list is none", `[]`, false},
		{"null is none", `null`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(`{"workspaces": ` + tc.workspaces + `}`))
			require.NoError(t, err)
			got, err := m.InstallInputs([]string{"package.json", "packages/"})
			require.NoError(t, err)
			assert.Equal(t, tc.whole, len(got) == 1 && got[0] == Input{Path: ".", Dir: true}, "%v", got)
		})
	}
}

func TestAWholeProjectStillRefusesADependencyOutsideIt(t *testing.T) {
	m, err := ParseManifest([]byte(`{"scripts":{"postinstall":"node x.js"},"dependencies":{"x":"file:../x"}}`))
	require.NoError(t, err)
	_, err = m.InstallInputs([]string{"package.json"})
	assert.ErrorContains(t, err, `dependency "x" is "file:../x", outside the project`)
}

// FuzzScriptNeeds: whatever a script says, the install's inputs stay in the
// project, and an unknown command never gets less than the whole project.
func FuzzScriptNeeds(f *testing.F) {
	for _, s := range []string{"husky", "patch-package --patch-dir config/p", "node x.js", `a "b`, "x && y || z; w | v", "patch-package --patch-dir", "HUSKY=0 npx -y husky", "patch-package --patch-dir /etc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		m := &Manifest{Scripts: map[string]string{"postinstall": script}}
		inputs, err := m.InstallInputs([]string{"package.json", "patches/", "config/", "etc/"})
		if err != nil {
			t.Fatalf("scripts alone never make an error: %v", err)
		}
		for _, in := range inputs {
			if in.Path == ".." || len(in.Path) > 2 && in.Path[:3] == "../" || len(in.Path) > 0 && in.Path[0] == '/' {
				t.Fatalf("input %q escapes the project", in.Path)
			}
		}
		if commands, ok := splitCommands(script); ok {
			for _, args := range commands {
				if _, known := commandNeeds(args); !known && !(len(inputs) == 1 && inputs[0].Path == ".") {
					t.Fatalf("%q runs %q, unknown, but the install gets %v", script, args, inputs)
				}
			}
		}
	})
}
