package nodebuild

import (
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkspaceGlobsListWhatNpmWouldMatch(t *testing.T) {
	for _, tc := range []struct {
		name, workspaces string
		want             []string
		ok               bool
	}{
		{"no workspaces: nothing to list", `null`, nil, true},
		{"a folder of packages", `["packages/*"]`, []string{"packages/*/package.json"}, true},
		{"the object form npm also reads", `{"packages": ["apps/*", "libs/ui"]}`, []string{"apps/*/package.json", "libs/ui/package.json"}, true},
		{"./ and a trailing / are the same folder", `["./apps/web/", "apps/web"]`, []string{"apps/web/package.json"}, true},
		{"a * inside a name", `["packages/ui-*"]`, []string{"packages/ui-*/package.json"}, true},
		{"a negation is npm's to match", `["packages/*", "!packages/old"]`, nil, false},
		{"** is npm's to match", `["packages/**"]`, nil, false},
		{"braces are npm's to match", `["{apps,libs}/*"]`, nil, false},
		{"a character class is npm's to match", `["app[12]"]`, nil, false},
		{"a folder outside the project", `["../shared"]`, nil, false},
		{"an absolute folder", `["/src/ui"]`, nil, false},
		{"the root itself", `["."]`, nil, false},
		{"a hidden folder, which npm's * skips", `[".config/*"]`, nil, false},
		{"another shape", `"packages/*"`, nil, false},
		{"an object without packages", `{"nohoist": ["x"]}`, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(`{"workspaces": ` + tc.workspaces + `}`))
			require.NoError(t, err)
			got, ok := m.WorkspaceGlobs()
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestWorkspaceManifestsAreTheFoundFilesThePatternsMatch(t *testing.T) {
	found := []string{"package.json", "packages/ui/package.json", "packages/ui/fixtures/package.json", "packages/api/package.json",
		"apps/web/package.json", "apps/admin/package.json", "tools/x/package.json"}
	for _, tc := range []struct {
		name  string
		globs []string
		want  []string
	}{
		{"* stands for one folder name", []string{"packages/*/package.json"}, []string{"packages/api/package.json", "packages/ui/package.json"}},
		{"a folder by its path", []string{"apps/web/package.json"}, []string{"apps/web/package.json"}},
		{"several patterns, one list", []string{"packages/*/package.json", "apps/*/package.json"},
			[]string{"apps/admin/package.json", "apps/web/package.json", "packages/api/package.json", "packages/ui/package.json"}},
		{"* never stands for a /", []string{"*/package.json"}, nil},
		{"a pattern that matches nothing", []string{"libs/*/package.json"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, WorkspaceManifests(tc.globs, found))
		})
	}
}

func TestWorkspaceDirIsTheFolderOfAFoundPackageJSON(t *testing.T) {
	for _, tc := range []struct {
		file, want string
		ok         bool
	}{
		{"packages/ui/package.json", "packages/ui", true},
		{"apps/web/package.json", "apps/web", true},
		{"packages/.template/package.json", "", false},
		{"package.json", "", false},
		{"packages/ui/index.js", "", false},
		{"packages/*/package.json", "", false},
	} {
		got, ok := WorkspaceDir(tc.file)
		assert.Equal(t, tc.ok, ok, tc.file)
		assert.Equal(t, tc.want, got, tc.file)
	}
}

func workspace(t *testing.T, dir, manifest string) Workspace {
	t.Helper()
	m, err := ParseManifestAt(path.Join(dir, ManifestFile), []byte(manifest))
	require.NoError(t, err)
	return Workspace{Dir: dir, Manifest: m}
}

func TestWorkspacesInstallFromTheirPackageJSONUnlessOneNeedsMore(t *testing.T) {
	whole := []Input{{Path: ".", Dir: true}}
	root := []string{"package.json", "package-lock.json", "packages/", "libs/"}
	plain := func(t *testing.T) Workspace { return workspace(t, "packages/ui", `{"name":"ui"}`) }
	for _, tc := range []struct {
		name       string
		workspaces func(t *testing.T) Workspaces
		want       []Input
	}{
		{"each workspace's package.json, and no source", func(t *testing.T) Workspaces {
			return Workspaces{Listed: true, Each: []Workspace{plain(t), workspace(t, "apps/web", `{"name":"web","scripts":{"build":"vite build"}}`)}}
		}, []Input{{Path: "package.json"}, {Path: "package-lock.json"}, {Path: "packages/ui/package.json"}, {Path: "apps/web/package.json"}}},
		{"a workspace's local dependency, from its own folder", func(t *testing.T) Workspaces {
			return Workspaces{Listed: true, Each: []Workspace{plain(t), workspace(t, "apps/web", `{"dependencies":{"tokens":"file:../../libs/tokens"}}`)}}
		}, []Input{{Path: "package.json"}, {Path: "package-lock.json"}, {Path: "packages/ui/package.json"}, {Path: "apps/web/package.json"}, {Path: "libs/tokens", Dir: true}}},
		{"patterns that matched nothing", func(t *testing.T) Workspaces { return Workspaces{Listed: true} },
			[]Input{{Path: "package.json"}, {Path: "package-lock.json"}}},
		{"workspaces not listed: the whole project", func(t *testing.T) Workspaces { return Workspaces{} }, whole},
		{"a workspace's postinstall reads its files: the whole project", func(t *testing.T) Workspaces {
			return Workspaces{Listed: true, Each: []Workspace{plain(t), workspace(t, "packages/db", `{"scripts":{"postinstall":"prisma generate"}}`)}}
		}, whole},
		{"a workspace's prepare: the whole project", func(t *testing.T) Workspaces {
			return Workspaces{Listed: true, Each: []Workspace{workspace(t, "packages/lib", `{"scripts":{"prepare":"tsc"}}`)}}
		}, whole},
		{"a workspace's command, which npm links only when its file is there: the whole project", func(t *testing.T) Workspaces {
			return Workspaces{Listed: true, Each: []Workspace{workspace(t, "packages/cli", `{"bin":"cli.js"}`)}}
		}, whole},
		{"a workspace's folder of commands: the whole project", func(t *testing.T) Workspaces {
			return Workspaces{Listed: true, Each: []Workspace{workspace(t, "packages/cli", `{"directories":{"bin":"bin"}}`)}}
		}, whole},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(`{"workspaces":["packages/*","apps/web"]}`))
			require.NoError(t, err)
			got, err := m.InstallInputsWith(root, tc.workspaces(t))
			require.NoError(t, err)
			assert.ElementsMatch(t, tc.want, got)
		})
	}
}

func TestAWorkspacesDependencyOutsideTheProjectIsRefusedNamingItsFile(t *testing.T) {
	m, err := ParseManifest([]byte(`{"workspaces":["apps/*"]}`))
	require.NoError(t, err)
	_, err = m.InstallInputsWith([]string{"package.json"}, Workspaces{Listed: true, Each: []Workspace{
		workspace(t, "apps/web", `{"dependencies":{"x":"file:../../../x"}}`),
	}})
	assert.ErrorContains(t, err, `apps/web/package.json: dependency "x" is "file:../../../x", outside the project`)
}

func FuzzWorkspaceGlobs(f *testing.F) {
	f.Add(`["packages/*", "./apps/web/"]`, `{"dependencies":{"t":"file:../libs/t"}}`)
	f.Add(`{"packages": ["a/*"]}`, `{"bin":{"x":"x.js"}}`)
	f.Add(`["../x", "!y", "**"]`, `{}`)
	f.Fuzz(func(t *testing.T, workspaces, wsManifest string) {
		m, err := ParseManifest([]byte(`{"workspaces": ` + workspaces + `}`))
		if err != nil {
			return
		}
		globs, ok := m.WorkspaceGlobs()
		if !ok {
			return
		}
		var each []Workspace
		for _, g := range globs {
			dir, found := WorkspaceDir(strings.ReplaceAll(g, "*", "x"))
			if !found || path.IsAbs(g) || strings.HasPrefix(g, "../") || strings.Contains(g, "/../") || !strings.HasSuffix(g, "/"+ManifestFile) {
				t.Fatalf("glob %q does not find a workspace's package.json inside the project", g)
			}
			wm, err := ParseManifest([]byte(wsManifest))
			if err != nil {
				return
			}
			each = append(each, Workspace{Dir: dir, Manifest: wm})
		}
		inputs, err := m.InstallInputsWith([]string{"package.json"}, Workspaces{Listed: true, Each: each})
		if err != nil {
			return
		}
		for _, in := range inputs {
			if in.Path == ".." || strings.HasPrefix(in.Path, "../") || path.IsAbs(in.Path) {
				t.Fatalf("input %q escapes the project", in.Path)
			}
		}
	})
}
