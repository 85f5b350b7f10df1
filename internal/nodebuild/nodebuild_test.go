package nodebuild

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/imageref"

	"dagger/lowcode-pipeline/internal/fielderr"
)

func TestInstallCommandUsesCIWhenALockFilePinsTheTree(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"package-lock.json", []string{"package.json", "package-lock.json", "src"}, "ci"},
		{"npm-shrinkwrap.json", []string{"package.json", "npm-shrinkwrap.json"}, "ci"},
		{"no lock file", []string{"package.json", "src"}, "install"},
		{"a yarn lock is not npm's", []string{"package.json", "yarn.lock"}, "install"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, []string{"npm", tc.want, "--no-audit", "--no-fund"}, InstallCommand(tc.files))
		})
	}
}

func TestInstallInputsAreOnlyWhatTheInstallReads(t *testing.T) {
	m, err := ParseManifest([]byte(`{
		"dependencies": {"left-pad": "^1.3.0", "ui": "file:packages/ui"},
		"devDependencies": {"cli": "file:./tools/cli/", "packed": "file:vendor/tool-1.0.0.tgz", "ui2": "file:packages/ui"},
		"optionalDependencies": {"gh": "github:owner/repo"}}`))
	require.NoError(t, err)
	inputs, err := m.InstallInputs([]string{"package.json", "package-lock.json", ".npmrc", "src", "README.md", ".env"})
	require.NoError(t, err)
	assert.Equal(t, []Input{
		{Path: "package.json"}, {Path: "package-lock.json"}, {Path: ".npmrc"},
		{Path: "packages/ui", Dir: true}, {Path: "tools/cli", Dir: true}, {Path: "vendor/tool-1.0.0.tgz"},
	}, inputs)
}

func TestInstallInputsRefuseWhatTheBuildCannotSee(t *testing.T) {
	for _, tc := range []struct {
		manifest string
		root     []string
		want     string
	}{
		{`{"dependencies": {"x": "file:../shared/x"}}`, nil, `dependency "x" is "file:../shared/x", outside the project`},
		{`{"dependencies": {"x": "file:/opt/x"}}`, nil, `outside the project`},
		{`{}`, []string{"yarn.lock"}, "yarn.lock locks the project's dependencies, but the platform installs with npm"},
		{`{}`, []string{"pnpm-lock.yaml", "src/"}, "pnpm-lock.yaml locks"},
	} {
		m, err := ParseManifest([]byte(tc.manifest))
		require.NoError(t, err)
		_, err = m.InstallInputs(append([]string{"package.json"}, tc.root...))
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestRequireScriptsNamesEveryMissingScriptAndTheFile(t *testing.T) {
	m, err := ParseManifest([]byte(`{"scripts": {"build:node": "node build.mjs", "build:draw": "  "}}`))
	require.NoError(t, err)
	err = m.RequireScripts(DrawScript, NodeScript)
	require.Error(t, err)
	assert.Equal(t, "package.json: no \"build:draw\" script in \"scripts\": the platform builds with `npm run build:draw`, which must write the frontend into dist/web", err.Error())

	m, _ = ParseManifest([]byte(`{}`))
	err = m.RequireScripts(DrawScript, NodeScript)
	assert.ErrorContains(t, err, `no "build:draw" script`)
	assert.ErrorContains(t, err, `no "build:node" script in "scripts": the platform builds with `+"`npm run build:node`"+`, which must write the backend into dist/node`)

	_, err = ParseManifest([]byte(`{"scripts": [`))
	assert.ErrorContains(t, err, "package.json: not valid JSON")
}

func TestCommandLines(t *testing.T) {
	assert.Equal(t, []string{"npm", "run", "build:draw"}, RunScript(DrawScript))
	cmd, err := CodeAsDataCommand("@vendor/cli@3.1.0", false, "snapshot", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"npx", "--yes", "@vendor/cli@3.1.0", "buildCodeAsData", "--codeAsData.mode", "all", "--snapshot.dir", "snapshot"}, cmd, "a project to deploy: with its dependencies' code as data")
	cmd, err = CodeAsDataCommand("cli", true, "code", []string{"--logLevel=warn"})
	require.NoError(t, err)
	assert.Equal(t, []string{"npx", "--yes", "cli", "buildCodeAsData", "--codeAsData.mode", "project", "--snapshot.dir", "code", "--logLevel=warn"}, cmd, "a library: the project's own only")
	for _, own := range [][]string{{"--snapshot.dir=mine"}, {"--snapshot.dir", "mine"}, {"-sd", "mine"}, {"-sd=mine"}} {
		cmd, err = CodeAsDataCommand("cli", false, "snapshot", own)
		require.NoError(t, err)
		assert.Equal(t, append([]string{"npx", "--yes", "cli", "buildCodeAsData", "--codeAsData.mode", "all"}, own...), cmd, "the user's own folder, given as %q, is the only one", own)
	}

	_, err = CodeAsDataCommand("", false, "snapshot", nil)
	assert.ErrorContains(t, err, "--toolkit: required: package.json does not depend on @olympeio/toolkit")
	_, err = CodeAsDataCommand("cli --evil", false, "snapshot", nil)
	assert.ErrorContains(t, err, "want one npm package name")
}

func TestThePlatformsToolsAreTheProjectsUnlessAFlagNamesOthers(t *testing.T) {
	template, err := ParseManifest([]byte(`{"name":"@olympeio/community","devDependencies":{"@olympeio/draw":"2.9.2","@olympeio/toolkit":"1.1.0"}}`))
	require.NoError(t, err)
	plain, err := ParseManifest([]byte(`{"name":"app","dependencies":{"@olympeio/runtime-web":"9.9.2"}}`))
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		m         *Manifest
		flag, pkg string
		want      string
	}{
		{"the template's design tool", template, "", DrawPackage, "@olympeio/draw"},
		{"the template's toolkit", template, "", ToolkitPackage, "@olympeio/toolkit"},
		{"a flag wins over the project's", template, "@olympeio/toolkit@1.2.3", ToolkitPackage, "@olympeio/toolkit@1.2.3"},
		{"a project without the package, no flag", plain, "", DrawPackage, ""},
		{"a project without the package, a flag", plain, "draw-standin", DrawPackage, "draw-standin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.m.Tool(tc.flag, tc.pkg))
		})
	}
}

func TestTheProjectsOwnCodeAsDataFolderIsItsNameAsTheToolkitWritesIt(t *testing.T) {
	for name, want := range map[string]string{"@olympeio/community": "olympeio.community", "@acme/real-app": "acme.real-app", "lowcode-example-app": "lowcode-example-app", "": ""} {
		assert.Equal(t, want, (&Manifest{Name: name}).OwnCodeAsData(), name)
	}
}

func TestSnapshotCommandAlwaysNamesTheConfiguration(t *testing.T) {
	for _, config := range []string{"res/snapshot-config.json", "config/snap.json"} {
		cmd, err := SnapshotCommand("@olympeio/toolkit@1.2.3", config)
		require.NoError(t, err)
		assert.Equal(t, []string{"npx", "--yes", "@olympeio/toolkit@1.2.3", "snapshot", "--snapshot.config", config}, cmd,
			"the toolkit's own default is ./snapshot/snapshot-config.json")
	}
	_, err := SnapshotCommand("", "x")
	assert.ErrorContains(t, err, "--toolkit: required")
}

func TestCodeAsDataStepIsNoneProjectOrBricks(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		args       []string
		want       []string
		err        string
	}{
		{"none by default", "", nil, nil, ""},
		{"none said", "none", nil, nil, ""},
		{"a project", "project", []string{"--x"}, []string{"npx", "--yes", "cli", "buildCodeAsData", "--codeAsData.mode", "all", "--x"}, ""},
		{"bricks", "bricks", nil, []string{"npx", "--yes", "cli", "buildCodeAsData", "--codeAsData.mode", "project"}, ""},
		{"an argument without code as data", "none", []string{"--verbose"}, nil, `--code-as-data-arg "--verbose" needs --code-as-data project or bricks`},
		{"an unknown kind", "library", nil, nil, `--code-as-data "library": choose none, project or bricks`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, err := CodeAsDataStep(tc.kind, "cli", "", tc.args)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, cmd)
		})
	}
}

func TestDependsOnCountsEveryInstalledKindButPeers(t *testing.T) {
	m, err := ParseManifest([]byte(`{"dependencies":{"a":"1"},"devDependencies":{"b":"1"},"optionalDependencies":{"c":"1"},"peerDependencies":{"d":"1"}}`))
	require.NoError(t, err)
	for pkg, want := range map[string]bool{"a": true, "b": true, "c": true, "d": false, "e": false} {
		assert.Equal(t, want, m.DependsOn(pkg), pkg)
	}
}

func TestAnotherLockFileBesideNpmsIsLeftToNpm(t *testing.T) {
	m, err := ParseManifest([]byte(`{}`))
	require.NoError(t, err)
	inputs, err := m.InstallInputs([]string{"package.json", "package-lock.json", "yarn.lock"})
	require.NoError(t, err, "npm ci reads package-lock.json")
	assert.Equal(t, []Input{{Path: "package.json"}, {Path: "package-lock.json"}}, inputs)
	_, err = m.InstallInputs([]string{"package.json"})
	assert.NoError(t, err, "no lock file at all: npm install, as the interface says")
}

func TestNodeImageIsCheckedBeforeAnythingRuns(t *testing.T) {
	for _, ok := range []string{"", "node:24", "node", "node:24-alpine", "docker.io/library/node:24",
		"registry.example.com:5000/base/node-ci:24@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"} {
		_, err := ParseImage(ok)
		assert.NoError(t, err, ok)
	}
	for _, bad := range []string{"Node:24", "node:24 ", "node:", "node@sha256:12", "https://registry.example.com/node:24", "node:24\n"} {
		_, err := ParseImage(bad)
		assert.ErrorContains(t, err, "--node-image "+fielderr.Quote(bad)+": not an image reference", bad)
	}
	for _, withLogin := range []string{"ci:Pa55wordSecretXY@registry.example.com/node:24", "https://ci:Pa55wordSecretXY@registry.example.com/node:24"} {
		_, err := ParseImage(withLogin)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "Pa55word", "a registry's password typed into the flag is not printed (round-13 probe P13-3)")
	}
}

func TestTheBackendsBaseKeepsTheBuildImagesCLibrary(t *testing.T) {
	for in, want := range map[string]Image{
		"":                          {"node:24", "node:24-slim"},
		"node:24":                   {"node:24", "node:24-slim"},
		"node:24.11.1":              {"node:24.11.1", "node:24.11.1-slim"},
		"node:24-bookworm":          {"node:24-bookworm", "node:24-bookworm-slim"},
		"node:24-alpine":            {"node:24-alpine", "node:24-alpine"},
		"node:24-slim":              {"node:24-slim", "node:24-slim"},
		"docker.io/library/node:22": {"docker.io/library/node:22", "docker.io/library/node:22-slim"},
		"node":                      {"node", "node:slim"},
		"node:24@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": {
			"node:24@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			"node:24@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		"registry.example.com/base/node-ci:24": {"registry.example.com/base/node-ci:24", "registry.example.com/base/node-ci:24"},
	} {
		got, err := ParseImage(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}

func FuzzParseImage(f *testing.F) {
	for _, s := range []string{"node:24", "Node", "a/b/c:d@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "localhost:5000/n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, flag string) {
		image, err := ParseImage(flag)
		if err != nil {
			assert.Less(t, len(err.Error()), 400, "the value is cut in the error")
			assert.True(t, strings.HasPrefix(err.Error(), "--node-image "))
			return
		}
		// what the engine is asked to pull, and the backend's base
		for _, name := range []string{image.Name, image.Slim} {
			ref, err := imageref.Parse(name)
			require.NoError(t, err, name)
			assert.NotEmpty(t, ref.Registry())
		}
		assert.NotContains(t, flag, " ")
		assert.True(t, image.Slim == image.Name || strings.HasSuffix(image.Slim, "slim"), image.Slim)
	})
}

func TestCheckCLIRefusesWhatIsNotOnePackageSpec(t *testing.T) {
	for _, tc := range []struct {
		cli  string
		want string // "" when accepted
	}{
		{"platform-cli-standin", ""},
		{"@vendor/cli@3.1.0", ""},
		{"@vendor/cli@^3", ""},
		{"https://registry.example.com/cli-3.1.0.tgz", ""},
		{"", "--toolkit: required"},
		{"   ", "--toolkit: required"},
		{"cli --evil", "want one npm package name"},
		{"cli\r", "want one npm package name"},
		{"cli\u00a0x", "want one npm package name"},
		{"cli\x00", "want one npm package name"},
		{"cli\x1b[2J", "want one npm package name"},
		{"--yes", "not starting with -"},
		{"cli\xff", "want one npm package name"},
		{"git+ssh://git@github.com/vendor/cli.git", ""},
		{"https://ci:Zq9/Kx7Lm3Vt@registry.npmjs.org/cli/-/cli-3.1.0.tgz", `--toolkit "…@registry.npmjs.org/cli/-/cli-3.1.0.tgz" holds a login (user:password@): give a private registry's credentials in --npmrc`},
		{"git+https://ghp_Zq9Kx7Lm3Vt@github.com/vendor/cli.git", "holds a login"},
		{"git+ssh://git@github.com/acme/toolkit.git#https://ci:S3cretPassw0rd@npm.example.com", "holds a login"}, // round-16 probe F7
		{"git+ssh://git@github.com/acme/toolkit.git#ci:S3cretPassw0rd%40npm.example.com", "holds a login"},
	} {
		t.Run(tc.cli, func(t *testing.T) {
			err := CheckCLI(tc.cli)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func FuzzCheckCLI(f *testing.F) {
	for _, s := range []string{"platform-cli-standin", "@vendor/cli@3.1.0", "cli --evil", "-x", "a\u2028b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cli string) {
		err := CheckCLI(cli)
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), "--toolkit"), "the error names the flag")
			assert.Less(t, len(err.Error()), 2*fielderr.MaxValue+400, "the value is cut in the error")
			return
		}
		// accepted: one argument of npx's command line, never an option
		assert.NotEmpty(t, cli)
		assert.Equal(t, []string{cli}, strings.Fields(cli), "no whitespace splits it")
		assert.False(t, strings.HasPrefix(cli, "-"), "not read as an option")
		assert.True(t, utf8.ValidString(cli), "valid UTF-8")
		for _, r := range cli {
			assert.False(t, unicode.IsControl(r), "no control character: %q", r)
		}
		cmd, err := SnapshotCommand(cli, "res/snapshot-config.json")
		require.NoError(t, err)
		assert.Equal(t, []string{"npx", "--yes", cli, SnapshotVerb, SnapshotConfigOption, "res/snapshot-config.json"}, cmd)
	})
}
