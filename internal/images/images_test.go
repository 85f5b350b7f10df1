package images

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dagger/lowcode-pipeline/internal/imageref"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryImageGetsSourcesPathAsTheInterfaceSays(t *testing.T) {
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
			args, err := BuildArgs(tc.kind, "node:24-slim", []string{"WEB_USER=www", "FRONTEND_BASE_IMAGE=vendor/frontend:stable"})
			require.NoError(t, err)
			assert.Equal(t, [][2]string{{"SOURCES_PATH", tc.path}, {"WEB_USER", "www"}, {"FRONTEND_BASE_IMAGE", "vendor/frontend:stable"},
				{"BACKEND_BASE_IMAGE", "node:24-slim"}}, args)
		})
	}
}

func TestLabels(t *testing.T) {
	created := time.Date(2026, 11, 25, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	labels, err := Labels(Meta{DrawVersion: "2.14.0", Created: created, Labels: []string{
		"org.opencontainers.image.source=https://gitlab-ci-token:glcbt-64_x@git.example.com/team/app.git?private_token=glpat-x",
		"org.opencontainers.image.revision=0123abc", "org.opencontainers.image.version=1.4.0", "team=shop=orders",
	}})
	require.NoError(t, err)
	assert.Equal(t, [][2]string{
		{"draw_version", "2.14.0"},
		{"org.opencontainers.image.created", "2026-11-25T09:00:00Z"},
		{"org.opencontainers.image.source", "https://git.example.com/team/app.git"},
		{"org.opencontainers.image.revision", "0123abc"},
		{"org.opencontainers.image.version", "1.4.0"},
		{"team", "shop=orders"},
	}, labels, "no credential and no query reach a public label; a value may hold '='")

	labels, err = Labels(Meta{DrawVersion: "2.14.0"})
	require.NoError(t, err)
	assert.Equal(t, [][2]string{{"draw_version", "2.14.0"}}, labels, "unknown metadata is left out, not empty")

	_, err = Labels(Meta{})
	assert.ErrorContains(t, err, "draw_version is unknown: package.json does not depend on @olympeio/draw")
}

func TestLabelsRefuseWhatTheyCannotShowOrMayNotSet(t *testing.T) {
	for _, tc := range []struct {
		name, label, want string
	}{
		{"no =", "revision", `--label[0] "revision": want KEY=VALUE`},
		{"an empty key", "=x", `want KEY=VALUE`},
		{"a key with a space", "my label=x", `want KEY=VALUE`},
		{"draw_version by hand", "draw_version=1", "draw_version is the installed version of --draw-package"},
		{"created by hand", "org.opencontainers.image.created=2026-01-01T00:00:00Z", "set the creation time with --created"},
		{"an address that is not one URL", "org.opencontainers.image.source=user:tok3n@git.example.com:team/app.git https://x",
			"the value holds an address that is not one URL"},
		{"a huge value", "k=" + strings.Repeat("x", 5000), "a value of at most 4096 bytes"},
		{"a key over 128 bytes", strings.Repeat("k", 129) + "=v", "want KEY=VALUE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Labels(Meta{DrawVersion: "2.14.0", Labels: []string{tc.label}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "tok3n", "a refused value's secret is not echoed")
			assert.Less(t, len(err.Error()), 400, "the error stays small")
		})
	}
	_, err := Labels(Meta{DrawVersion: "2.14.0", Labels: []string{"a=1", "a=2"}})
	assert.ErrorContains(t, err, "a is given twice")
	_, err = Labels(Meta{DrawVersion: "2.14.0", Labels: []string{strings.Repeat("k", 128) + "=v"}})
	assert.NoError(t, err, "a key of 128 bytes")
}

func TestPublishTargets(t *testing.T) {
	targets, err := PublishRequest{
		Repository: "registry.example.com:5000/team/app-{kind}",
		Tags:       []string{"1.4.0", "latest"},
		Platforms:  []string{"linux/amd64", "linux/arm64"},
	}.Targets()
	require.NoError(t, err)
	require.Len(t, targets, 2)
	assert.Equal(t, Frontend, targets[0].Kind)
	assert.Equal(t, []string{"registry.example.com:5000/team/app-frontend:1.4.0", "registry.example.com:5000/team/app-frontend:latest"}, targets[0].Refs())
	assert.Equal(t, "registry.example.com:5000/team/app-backend", targets[1].Repository)
	assert.Equal(t, "registry.example.com:5000", targets[1].Registry)
}

func TestPublishRefusesBadNamesBeforeBuilding(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  PublishRequest
		want []string
	}{
		{"an upper-case repository", PublishRequest{Repository: "r.example.com/Team/{kind}", Tags: []string{"1"}},
			[]string{`--repository "r.example.com/Team/{kind}": "r.example.com/Team/frontend" is not a repository name`}},
		{"no registry host", PublishRequest{Repository: "team/app-{kind}", Tags: []string{"1"}},
			[]string{`"team/app-frontend" is not a repository name with its registry`}},
		{"no {kind}", PublishRequest{Repository: "r.example.com/team/app", Tags: []string{"1"}},
			[]string{`--repository "r.example.com/team/app": put {kind} where frontend, backend and codeasdata go`}},
		{"no {kind}, with control characters", PublishRequest{Repository: "r.example.com/app\x1b[2J\u202e\u009b", Tags: []string{"1"}},
			[]string{`e.g. r.example.com/app\x1b[2J\u202e\u009b-{kind}:`}},
		{"a first part that only looks like a host", PublishRequest{Repository: "r_1.example.com/team/{kind}", Tags: []string{"1"}},
			[]string{`--repository "r_1.example.com/team/{kind}": "r_1.example.com" is not a registry host`}},
		{"a tag in the repository", PublishRequest{Repository: "r.example.com/team/{kind}:1", Tags: []string{"1"}},
			[]string{`give the name only; tags go in --tag`}},
		{"bad tags", PublishRequest{Repository: "r.example.com/{kind}", Tags: []string{"-x", "a b", strings.Repeat("a", 129)}},
			[]string{`--tag: "-x" is not a valid tag`, `--tag: "a b" is not a valid tag`, "(129 bytes) is not a valid tag"}},
		{"no tags", PublishRequest{Repository: "r.example.com/{kind}"}, []string{"--tag: at least one tag"}},
		{"no repository", PublishRequest{Tags: []string{"1"}}, []string{"--repository: required"}},
		{"an unsupported platform", PublishRequest{Repository: "r.example.com/{kind}", Tags: []string{"1"}, Platforms: []string{"linux/s390x"}},
			[]string{`--platform "linux/s390x": not supported: choose from linux/amd64, linux/arm64`}},
		{"a password without a user name", PublishRequest{Repository: "r.example.com/{kind}", Tags: []string{"1"}, HasPassword: true},
			[]string{"--registry-password needs --registry-username"}},
		{"localhost without a registry service", PublishRequest{Repository: "localhost:5000/team/{kind}", Tags: []string{"1"}},
			[]string{`--repository "localhost:5000/team/{kind}": "localhost:5000" names this machine, but the push runs in a container of the engine`, "--registry-service"}},
		{"a loopback IP address", PublishRequest{Repository: "127.0.0.1:5000/{kind}", Tags: []string{"1"}}, []string{`"127.0.0.1:5000" names this machine`}},
		{"another loopback IP address", PublishRequest{Repository: "127.1.2.3/{kind}", Tags: []string{"1"}}, []string{`"127.1.2.3" names this machine`}},
		{"the IPv6 loopback", PublishRequest{Repository: "[::1]:5000/{kind}", Tags: []string{"1"}}, []string{`"[::1]:5000" names this machine`}},
		{"localhost without a port", PublishRequest{Repository: "localhost/{kind}", Tags: []string{"1"}}, []string{`"localhost" names this machine`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.req.Targets()
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	_, err := PublishRequest{Repository: "r.example.com/{kind}", Tags: []string{strings.Repeat("b", 128)}}.Targets()
	assert.NoError(t, err, "a tag of 128 bytes")
}

// A registry on loopback is reached only as a Dagger service: the push's
// container has none of its own. Other names are the engine's to resolve.
func TestALoopbackRegistryIsAServiceOnly(t *testing.T) {
	for _, tc := range []struct {
		repository string
		service    bool
		refused    bool
	}{
		{"localhost:5000/{kind}", false, true},
		{"LOCALHOST:5000/{kind}", false, true},
		{"localhost:5000/{kind}", true, false},
		{"127.0.0.1:5000/{kind}", true, false},
		{"10.87.0.12:5000/{kind}", false, false},
		{"localhost.example.com/{kind}", false, false},
		{"registry:5000/{kind}", false, false},
		{"[::2]:5000/{kind}", false, false},
	} {
		t.Run(tc.repository, func(t *testing.T) {
			targets, err := PublishRequest{Repository: tc.repository, Tags: []string{"1"}, HasService: tc.service}.Targets()
			if tc.refused {
				require.Error(t, err)
				assert.Equal(t, 1, strings.Count(err.Error(), "names this machine"), "one message for the images: %v", err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, targets, 2)
		})
	}
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
					assert.Equal(t, "${FRONTEND_BASE_IMAGE}", final.BaseName, "the base image is a build argument (--build-arg FRONTEND_BASE_IMAGE=…)")
					assert.Empty(t, runsOf(final), "no RUN as root in the final stage")
					assert.Empty(t, lastUser(final), "it runs as the base image's own user")
					copies := copiesOf(final)
					require.Len(t, copies, 1, "the files are copied into the final image once")
					assert.Equal(t, "${WEB_USER}:root", copies[0].Chown, "owned by the web server's user with group root")
					assert.Equal(t, "${DOCUMENT_ROOT}/", copies[0].DestPath)
					assert.Empty(t, copies[0].From, "straight from the build output, whose modes the build set (nodebuild.OutputMode)")
					assert.Len(t, stages, 1, "no stage of its own to set modes: no exec in the image's build")
					assert.Contains(t, args, "WEB_USER")
					assert.Contains(t, args, "DOCUMENT_ROOT")
				case Backend:
					user := lastUser(final)
					assert.NotEmpty(t, user)
					assert.Equal(t, "${BACKEND_BASE_IMAGE}", final.BaseName)
					assert.Contains(t, args, ArgBackendBase)
				case CodeAsData:
					assert.Equal(t, "/root/patches/", fromContext[0].DestPath, "where the platform's deployment job reads it: ~/patches, as root")
					assert.Equal(t, "1000:1000", fromContext[0].Chown, "owned as in the vendor's template")
					assert.Equal(t, "${CODE_AS_DATA_BASE_IMAGE}", final.BaseName)
					assert.Empty(t, lastUser(final), "the base image's own user: the platform runs it as root (runAsUser: 0)")
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

func TestTheCodeAsDataImageFollowsTheBuild(t *testing.T) {
	for _, tc := range []struct {
		name  string
		built bool
		kinds []Kind
	}{
		{"built: three images", true, []Kind{Frontend, Backend, CodeAsData}},
		{"not built: two, with the same --repository", false, []Kind{Frontend, Backend}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			targets, err := PublishRequest{Repository: "r.example.com/team/{kind}", Tags: []string{"1"}, HasCodeAsData: tc.built}.Targets()
			require.NoError(t, err)
			var kinds []Kind
			for _, target := range targets {
				kinds = append(kinds, target.Kind)
			}
			assert.Equal(t, tc.kinds, kinds)
		})
	}
}

func TestFinalBaseIsTheImageTheLastStageGrowsFrom(t *testing.T) {
	for _, k := range Kinds {
		data, err := os.ReadFile(filepath.Join("../..", k.Dockerfile()))
		require.NoError(t, err)
		args, err := BuildArgs(k, "node:24-slim", nil)
		require.NoError(t, err)
		got, err := FinalBase(data, args)
		require.NoError(t, err)
		assert.Equal(t, map[Kind]string{Frontend: "nginx:stable", Backend: "node:24-slim", CodeAsData: "busybox:stable"}[k], got,
			"%s: the final stage's base", k)
	}
	for _, tc := range []struct{ name, dockerfile, want string }{
		{"one stage", "FROM alpine:3.22\nCOPY x /x\n", "alpine:3.22"},
		{"the final stage's base, not a helper stage's", "FROM busybox:stable AS site\nRUN true\nFROM nginx:stable\nCOPY --from=site /s /s\n", "nginx:stable"},
		{"through the stages it is built on", "FROM node:24 AS deps\nFROM deps AS build\nRUN true\nFROM build\nCOPY x /x\n", "node:24"},
		{"stage names are not case-sensitive", "FROM node:24 AS Deps\nFROM DEPS\n", "node:24"},
		{"scratch has no base", "FROM golang:1.26 AS b\nFROM scratch\nCOPY --from=b /x /x\n", ""},
		{"an argument without a value", "ARG BASE\nFROM ${BASE}\n", ""},
		{"a global argument", "ARG BASE=nginx:1.29\nFROM busybox AS site\nFROM ${BASE}\n", "nginx:1.29"},
		{"a later stage's name is not an earlier one", "FROM app\nFROM alpine AS app\n", "alpine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FinalBase([]byte(tc.dockerfile), nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	got, err := FinalBase([]byte("ARG BASE=nginx:1.29\nFROM ${BASE}\n"), [][2]string{{"BASE", "vendor.example.com/web:stable"}})
	require.NoError(t, err)
	assert.Equal(t, "vendor.example.com/web:stable", got, "a build argument replaces its default")
	_, err = FinalBase([]byte("FROM\n"), nil)
	assert.ErrorContains(t, err, "read the Dockerfile")
}

func FuzzDockerfileBases(f *testing.F) {
	for _, k := range Kinds {
		data, err := os.ReadFile(filepath.Join("../..", k.Dockerfile()))
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte("FROM a AS b\nFROM b\n"))
	f.Fuzz(func(t *testing.T, dockerfile []byte) {
		final, err := FinalBase(dockerfile, nil)
		if err != nil {
			return
		}
		// a base is an image to pull: never scratch, a stage, or an unset argument
		if final == "scratch" || strings.Contains(final, "$") {
			t.Fatalf("final base %q is no image", final)
		}
	})
}

func TestPlaceholderIsTheFirstTagPinnedToAnUnknownDigest(t *testing.T) {
	target := Target{Kind: Backend, Repository: "registry.example.com/team/app-backend", Tags: []string{"1.4.0", "latest"}}
	ref := target.Placeholder()
	assert.Equal(t, "registry.example.com/team/app-backend:1.4.0@sha256:"+strings.Repeat("0", 64), ref)
	require.NoError(t, imageref.ValidateDeployable(ref), "a placeholder reads as the reference publish will give")
	assert.Empty(t, Target{Repository: "r/x"}.Placeholder(), "no tag, no reference")
	assert.Equal(t, map[Kind]string{Backend: ref}, Placeholders([]Target{target}))
}

// A repository names its registry and its whole path, as Docker's
// canonical name does: Docker Hub is named, library/ spelled out; the
// target keeps the host as named and the repository as
// go-containerregistry reaches it.
func TestARepositoryNamesItsRegistryAndWholePath(t *testing.T) {
	for _, tc := range []struct {
		repository, registry, reached, err string
	}{
		{"docker.io/team/app-{kind}", "docker.io", "index.docker.io/team/app-frontend", ""},
		{"docker.io/library/{kind}", "docker.io", "index.docker.io/library/frontend", ""},
		{"r.example.com:5000/team/{kind}", "r.example.com:5000", "r.example.com:5000/team/frontend", ""},
		{"docker.io/{kind}", "", "", "name the registry and the whole repository"},
		{"team/{kind}", "", "", "name the registry and the whole repository"},
	} {
		t.Run(tc.repository, func(t *testing.T) {
			targets, err := PublishRequest{Repository: tc.repository, Tags: []string{"1"}}.Targets()
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.registry, targets[0].Registry)
			assert.Equal(t, tc.reached, targets[0].Name.Repository().Name())
		})
	}
}
