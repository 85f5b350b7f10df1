package images

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildArgumentTable(t *testing.T) {
	for _, tc := range []struct {
		kind             Kind
		dockerfile, path string
	}{
		{Frontend, "docker/frontend.Dockerfile", "dist/web"},
		{Backend, "docker/backend.Dockerfile", "dist/node"},
		{CodeAsData, "docker/codeasdata.Dockerfile", "dist/codeAsData"},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			assert.Equal(t, tc.dockerfile, tc.kind.Dockerfile())
			args, err := tc.kind.BuildArgs(map[string]string{"WEB_USER": "www", "BASE_IMAGE": "vendor/frontend:stable"})
			require.NoError(t, err)
			assert.Equal(t, [][2]string{{"SOURCES_PATH", tc.path}, {"BASE_IMAGE", "vendor/frontend:stable"}, {"WEB_USER", "www"}}, args)
		})
	}
	_, err := Frontend.BuildArgs(map[string]string{"SOURCES_PATH": "src"})
	assert.EqualError(t, err, "build argument SOURCES_PATH is fixed by the interface (dist/web for the frontend image)")
}

func TestLabels(t *testing.T) {
	created := time.Date(2026, 11, 25, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	labels, warnings, err := Labels(Meta{
		DrawVersion: "2.14.0", SourceURL: "https://user:tok3n@git.example.com/team/app.git?private_token=glpat-x",
		Revision: "0123abc", Version: "1.4.0", Created: created,
	})
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, [][2]string{
		{"draw_version", "2.14.0"},
		{"org.opencontainers.image.source", "https://git.example.com/team/app.git"},
		{"org.opencontainers.image.revision", "0123abc"},
		{"org.opencontainers.image.created", "2026-11-25T09:00:00Z"},
		{"org.opencontainers.image.version", "1.4.0"},
	}, labels, "no credential and no query reach a public label")

	labels, warnings, err = Labels(Meta{DrawVersion: "2.14.0", SourceURL: "user:tok3n@git.example.com:team/app.git"})
	require.NoError(t, err)
	assert.Equal(t, [][2]string{{"draw_version", "2.14.0"}}, labels, "an address that cannot be shown safely is left out")
	assert.Equal(t, []string{"--vcs-url is not an absolute URL: org.opencontainers.image.source is left out"}, warnings)
	assert.NotContains(t, warnings[0], "tok3n")

	labels, _, err = Labels(Meta{DrawVersion: "2.14.0"})
	require.NoError(t, err)
	assert.Equal(t, [][2]string{{"draw_version", "2.14.0"}}, labels, "unknown metadata is left out, not empty")

	_, _, err = Labels(Meta{})
	assert.ErrorContains(t, err, "draw_version is unknown: set --draw-package")
}

func TestPublishTargets(t *testing.T) {
	targets, err := PublishRequest{
		Registry:     "registry.example.com:5000",
		Repositories: map[Kind]string{Frontend: "team/front", Backend: "team/api"},
		Tags:         []string{"1.4.0", "latest"},
		Platforms:    []string{"linux/amd64", "linux/arm64"},
	}.Targets()
	require.NoError(t, err)
	require.Len(t, targets, 2)
	assert.Equal(t, Frontend, targets[0].Kind)
	assert.Equal(t, []string{"registry.example.com:5000/team/front:1.4.0", "registry.example.com:5000/team/front:latest"}, targets[0].Refs())
	assert.Equal(t, "registry.example.com:5000/team/api", targets[1].Repository)
}

func TestPublishRefusesBadNamesBeforeBuilding(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  PublishRequest
		want []string
	}{
		{"an upper-case repository", PublishRequest{Registry: "r.example.com", Repositories: map[Kind]string{Frontend: "Team/Front"}, Tags: []string{"1"}},
			[]string{`frontend repository "Team/Front": not a valid repository name`}},
		{"a tag in the repository", PublishRequest{Registry: "r.example.com", Repositories: map[Kind]string{Backend: "team/api:1"}, Tags: []string{"1"}},
			[]string{`backend repository "team/api:1": give the name only`}},
		{"bad tags", PublishRequest{Registry: "r.example.com", Repositories: map[Kind]string{Frontend: "f"}, Tags: []string{"-x", "a b", strings.Repeat("a", 129)}},
			[]string{`--tag: "-x" is not a valid tag`, `--tag: "a b" is not a valid tag`, "aaaa\" is not a valid tag"}},
		{"no tags", PublishRequest{Registry: "r.example.com", Repositories: map[Kind]string{Frontend: "f"}},
			[]string{"--tag: at least one tag"}},
		{"a URL as registry", PublishRequest{Registry: "https://r.example.com", Repositories: map[Kind]string{Frontend: "f"}, Tags: []string{"1"}},
			[]string{`--registry "https://r.example.com": want a host[:port] only`}},
		{"no registry", PublishRequest{Repositories: map[Kind]string{Frontend: "f"}, Tags: []string{"1"}},
			[]string{"--registry: required"}},
		{"an unsupported platform", PublishRequest{Registry: "r.example.com", Repositories: map[Kind]string{Frontend: "f"}, Tags: []string{"1"}, Platforms: []string{"linux/s390x"}},
			[]string{`--platform: "linux/s390x" is not supported: choose from linux/amd64, linux/arm64`}},
		{"an empty repository", PublishRequest{Registry: "r.example.com", Repositories: map[Kind]string{CodeAsData: ""}, Tags: []string{"1"}},
			[]string{"codeasdata repository: empty name"}},
		{"a password without a user name", PublishRequest{Registry: "r.example.com", Repositories: map[Kind]string{Frontend: "f"}, Tags: []string{"1"}, HasPassword: true},
			[]string{"--registry-password needs --registry-username"}},
		{"a cosign password without a key", PublishRequest{Registry: "r.example.com", Repositories: map[Kind]string{Frontend: "f"}, Tags: []string{"1"}, HasCosignPassword: true},
			[]string{"--cosign-password needs --cosign-key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.req.Targets()
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestCheckPinned(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	assert.NoError(t, CheckPinned("registry.example.com/team/front:1.4.0@"+digest))
	assert.ErrorContains(t, CheckPinned("registry.example.com/team/front:1.4.0"), "not pinned by digest")
	assert.Error(t, CheckPinned("not a ref"))
}

// The Dockerfiles' contract, read with BuildKit's own parser: each takes
// SOURCES_PATH from the context, and only it; the final stage is not root.
func TestDockerfilesHonourTheirContract(t *testing.T) {
	for _, dir := range []string{"../../docker", "../../examples/app/docker"} {
		for _, k := range Kinds {
			t.Run(dir+"/"+string(k), func(t *testing.T) {
				stages, args := parseDockerfile(t, filepath.Join(dir, string(k)+".Dockerfile"))
				assert.Contains(t, args, "SOURCES_PATH")
				var fromContext []*instructions.CopyCommand
				for _, s := range stages {
					for _, c := range copiesOf(s) {
						if c.From == "" {
							fromContext = append(fromContext, c)
						}
					}
				}
				require.Len(t, fromContext, 1, "exactly one COPY from the context")
				assert.Equal(t, []string{"${SOURCES_PATH}/"}, fromContext[0].SourcePaths, "the image takes SOURCES_PATH and nothing else")

				final := stages[len(stages)-1]
				assert.NotContains(t, []string{"root", "0", "0:0"}, lastUser(final), "the final stage never switches to root")
				switch k {
				case Frontend:
					assert.Equal(t, "${BASE_IMAGE}", final.BaseName)
					assert.Empty(t, runsOf(final), "no RUN as root in the final stage")
					assert.Empty(t, lastUser(final), "it runs as the base image's own user")
					copies := copiesOf(final)
					require.Len(t, copies, 1, "the files are copied into the final image once")
					assert.Equal(t, "${WEB_USER}:root", copies[0].Chown, "owned by the web server's user with group root")
					assert.Equal(t, "${DOCUMENT_ROOT}/", copies[0].DestPath)
					assert.Equal(t, "site", copies[0].From)
					assert.Contains(t, args, "WEB_USER")
					assert.Contains(t, args, "DOCUMENT_ROOT")
					assert.Contains(t, runsOf(stages[0]), "chmod -R u=rwX,go=rX /site", "readable by group and others")
				case Backend:
					user := lastUser(final)
					assert.NotEmpty(t, user)
					assert.Equal(t, "${NODE_IMAGE}", final.BaseName)
					assert.Contains(t, args, "NODE_IMAGE")
				case CodeAsData:
					assert.Equal(t, "/codeasdata/", fromContext[0].DestPath, "the documented path")
					assert.NotEmpty(t, lastUser(final))
				}
			})
		}
	}
}

func TestTheExampleShipsTheModulesDockerfiles(t *testing.T) {
	for _, k := range Kinds {
		mod, err := os.ReadFile(filepath.Join("../../docker", string(k)+".Dockerfile"))
		require.NoError(t, err)
		ex, err := os.ReadFile(filepath.Join("../../examples/app/docker", string(k)+".Dockerfile"))
		require.NoError(t, err)
		assert.Equal(t, string(mod), string(ex), "examples/app/docker/%s.Dockerfile drifted from docker/", k)
	}
}

func parseDockerfile(t *testing.T, path string) ([]instructions.Stage, []string) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	res, err := parser.Parse(f)
	require.NoError(t, err)
	stages, metaArgs, err := instructions.Parse(res.AST, nil)
	require.NoError(t, err)
	require.NotEmpty(t, stages)
	var args []string
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			args = append(args, kv.Key)
		}
	}
	for _, s := range stages {
		for _, cmd := range s.Commands {
			if a, ok := cmd.(*instructions.ArgCommand); ok {
				for _, kv := range a.Args {
					args = append(args, kv.Key)
				}
			}
		}
	}
	return stages, args
}

func copiesOf(s instructions.Stage) []*instructions.CopyCommand {
	var out []*instructions.CopyCommand
	for _, cmd := range s.Commands {
		if c, ok := cmd.(*instructions.CopyCommand); ok {
			out = append(out, c)
		}
		if _, ok := cmd.(*instructions.AddCommand); ok {
			panic("ADD takes more than SOURCES_PATH")
		}
	}
	return out
}

func runsOf(s instructions.Stage) []string {
	var out []string
	for _, cmd := range s.Commands {
		if r, ok := cmd.(*instructions.RunCommand); ok {
			out = append(out, strings.Join(r.CmdLine, " "))
		}
	}
	return out
}

func lastUser(s instructions.Stage) string {
	user := ""
	for _, cmd := range s.Commands {
		if u, ok := cmd.(*instructions.UserCommand); ok {
			user = u.User
		}
	}
	return user
}

func TestParsePinned(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	p, err := ParsePinned("localhost:5000/team/front:1.4.0@" + digest)
	require.NoError(t, err)
	assert.Equal(t, Pinned{Ref: "localhost:5000/team/front:1.4.0@" + digest, Repository: "localhost:5000/team/front", Tag: "1.4.0", Digest: digest}, p)

	_, err = ParsePinned("localhost:5000/team/front:1.4.0")
	assert.ErrorContains(t, err, "not pinned by digest")
}

func TestCodeAsDataRepositoryFollowsTheBuild(t *testing.T) {
	for _, tc := range []struct {
		name  string
		built bool
		repo  string
		kinds []Kind
		want  string
	}{
		{"built and named", true, "team/cad", []Kind{Frontend, Backend, CodeAsData}, ""},
		{"neither", false, "", []Kind{Frontend, Backend}, ""},
		{"built but not named", true, "", nil, "--code-as-data-repository: required, since the build has code as data"},
		{"named but not built: a CI passes it always and lets --code-as-data decide", false, "team/cad", []Kind{Frontend, Backend}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := PublishRequest{
				Registry: "r.example.com", Repositories: map[Kind]string{Frontend: "team/front", Backend: "team/api"}, Tags: []string{"1"},
				HasCodeAsData: tc.built, CodeAsDataRepository: tc.repo,
			}
			targets, err := req.Targets()
			if tc.want != "" {
				assert.ErrorContains(t, err, tc.want)
				return
			}
			require.NoError(t, err)
			var kinds []Kind
			for _, target := range targets {
				kinds = append(kinds, target.Kind)
			}
			assert.Equal(t, tc.kinds, kinds)
			assert.Len(t, req.Repositories, 2, "the caller's map is left as it was")
		})
	}
}
