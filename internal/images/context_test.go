package images

import (
	"os"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContextPathsAreWhatTheDockerfileCopies(t *testing.T) {
	for _, tc := range []struct {
		name       string
		dockerfile string
		args       [][2]string
		want       []string
		ok         bool
	}{
		{"the build output, by its default", "FROM nginx\nARG SOURCES_PATH=dist/web\nCOPY ${SOURCES_PATH}/ /usr/share/nginx/html/\n", nil, []string{"dist/web"}, true},
		{"the build output, as given", "FROM nginx\nARG SOURCES_PATH=dist/web\nCOPY $SOURCES_PATH /srv\n", [][2]string{{"SOURCES_PATH", "dist/node"}}, []string{"dist/node"}, true},
		{"a global default", "ARG CONF=docker/nginx.conf\nFROM nginx\nARG CONF\nCOPY ${CONF} /etc/nginx/conf.d/default.conf\nCOPY ./docker/nginx.conf /x\n", nil, []string{"docker/nginx.conf"}, true},
		{"every stage, an ENV, a root-relative source, ADD of a file", "FROM node AS b\nENV D=src\nCOPY $D/a.js /a/\nFROM nginx\nCOPY --from=b /a /a\nCOPY /res/x.json res/y.json /y/\nADD https://example.com/f.tgz /f\nADD vendor.tar /v\nCOPY <<EOF /z\nhello\nEOF\n", nil,
			[]string{"src/a.js", "res/x.json", "res/y.json", "vendor.tar"}, true},
		{"no copy at all", "FROM busybox\nRUN echo hi\n", nil, nil, true},
		{"the whole context", "FROM node\nCOPY . /app\n", nil, nil, false},
		{"a wildcard", "FROM node\nCOPY package*.json /app/\n", nil, nil, false},
		{"an unset variable", "FROM node\nARG SRC\nCOPY ${SRC} /app/\n", nil, nil, false},
		{"outside the context", "FROM node\nCOPY ../x /app/\n", nil, nil, false},
		{"the root, slashes doubled", "FROM node\nCOPY //dist///web /app/\n", nil, []string{"dist/web"}, true},
		{"the whole context, slashes doubled", "FROM node\nCOPY // /app/\n", nil, nil, false},
		{"outside the context from a doubled root", "FROM node\nCOPY //../x /app/\n", nil, nil, false},
		{"a RUN that may bind the context", "FROM node\nCOPY a /a\nRUN --mount=type=bind,target=/src make\n", nil, nil, false},
		{"an ONBUILD", "FROM node\nONBUILD COPY . /app\n", nil, nil, false},
		{"not a Dockerfile", "COPY a /a\n", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ContextPaths([]byte(tc.dockerfile), tc.args)
			assert.Equal(t, tc.ok, ok)
			if tc.ok {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}

// The examples' Dockerfiles and the module's own read nothing of the
// context but the build output, with the build arguments the module gives
// them: an image build is keyed on that output alone. Those that declare ARG
// SOURCES_PATH read it by name; examples/olympe's, shaped as the vendor's
// template, copy the whole context, which is then the output alone.
func TestTheExamplesDockerfilesReadTheirOutputOnly(t *testing.T) {
	for _, tc := range []struct {
		dir      string
		template bool
	}{{"../../examples/app/docker", false}, {"../../docker", false}, {"../../examples/olympe/docker", true}} {
		for _, kind := range []Kind{Frontend, Backend, CodeAsData} {
			data, err := os.ReadFile(path.Join(tc.dir, string(kind)+".Dockerfile"))
			require.NoError(t, err)
			args := Args(nil).For(kind, "node:24-slim")
			if tc.template {
				copies, err := SourcesCopies(data, args)
				require.NoError(t, err)
				assert.True(t, OutputIsContext(copies), "%s/%s copies $SOURCES_PATH without ARG SOURCES_PATH", tc.dir, kind)
				assert.Zero(t, ProjectRead(data, args), "%s/%s reads nothing else of the context", tc.dir, kind)
				continue
			}
			got, ok := ContextPaths(data, args)
			require.True(t, ok, "%s/%s", tc.dir, kind)
			assert.Equal(t, []string{kind.SourcesPath()}, got, "%s/%s", tc.dir, kind)
		}
	}
}

func FuzzContextPaths(f *testing.F) {
	for _, s := range []string{
		"FROM nginx\nARG SOURCES_PATH=dist/web\nCOPY ${SOURCES_PATH}/ /usr/share/nginx/html/\n",
		"ARG A=x\nFROM a AS b\nENV B=$A/y\nCOPY $B /\nADD --chown=1:1 ../z /z\nRUN --mount=type=cache,target=/c true\n",
		"FROM a\nCOPY [\"a b\", \"c\", \"/d/\"]\n",
	} {
		f.Add(s, "SOURCES_PATH", "dist/node")
	}
	f.Fuzz(func(t *testing.T, dockerfile, name, value string) {
		paths, ok := ContextPaths([]byte(dockerfile), [][2]string{{name, value}})
		if !ok {
			assert.Nil(t, paths)
			return
		}
		for _, p := range paths {
			// what the context's filter is given: a clean path inside the context, no pattern
			assert.Equal(t, path.Clean(p), p)
			assert.False(t, path.IsAbs(p) || p == "." || p == ".." || strings.HasPrefix(p, "../"), "%q is not inside the context", p)
			assert.False(t, strings.ContainsAny(p, "*?[$\\"), "%q is a pattern", p)
		}
	})
}
