package images

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSourcesCopiesAreFoundWithTheirDestinations(t *testing.T) {
	for _, tc := range []struct {
		name, dockerfile string
		args             [][2]string
		want             []SourcesCopy
	}{
		{"the vendor's frontend: no ARG, so $SOURCES_PATH is empty", "FROM olympeio/frontend-base:latest\nCOPY --chown=nginx:root $SOURCES_PATH /usr/share/nginx/html",
			nil, []SourcesCopy{{Line: 2, FromLine: 1, Dest: "/usr/share/nginx/html", Whole: true}}},
		{"the vendor's code as data", "FROM olympeio/codeasdata-base:latest\nCOPY --chown=1000:1000 $SOURCES_PATH /root/patches\nRUN chmod 775 ~/patches\n",
			nil, []SourcesCopy{{Line: 2, FromLine: 1, Dest: "/root/patches", Whole: true}}},
		{"a declared argument, a destination from another", "ARG ROOT=/srv\nFROM nginx\nARG ROOT\nARG SOURCES_PATH=dist/web\nCOPY ${SOURCES_PATH}/ ${ROOT}/site/\n",
			nil, []SourcesCopy{{Line: 5, FromLine: 2, Dest: "/srv/site", Declared: true, Whole: true}}},
		{"a build argument sets the destination", "FROM nginx\nARG SOURCES_PATH\nARG DOCUMENT_ROOT=/usr/share/nginx/html\nCOPY ${SOURCES_PATH}/ ${DOCUMENT_ROOT}/\n",
			[][2]string{{"DOCUMENT_ROOT", "/srv/www"}}, []SourcesCopy{{Line: 4, FromLine: 1, Dest: "/srv/www", Declared: true, Whole: true}}},
		{"a relative destination under WORKDIR", "FROM node\nWORKDIR /home/node\nARG SOURCES_PATH\nCOPY $SOURCES_PATH app\n",
			nil, []SourcesCopy{{Line: 4, FromLine: 1, Dest: "/home/node/app", Declared: true, Whole: true}}},
		{"a part of the output", "FROM node\nARG SOURCES_PATH\nCOPY $SOURCES_PATH/main.js /app/\n",
			nil, []SourcesCopy{{Line: 3, FromLine: 1, Dest: "/app", Declared: true}}},
		{"the ARG of an earlier stage does not count", "FROM alpine AS b\nARG SOURCES_PATH\nFROM nginx\nCOPY $SOURCES_PATH /usr/share/nginx/html\n",
			nil, []SourcesCopy{{Line: 4, FromLine: 3, Dest: "/usr/share/nginx/html", Whole: true}}},
		{"a copy from another stage is not the context's", "FROM alpine AS b\nARG SOURCES_PATH\nRUN true\nFROM nginx\nARG SOURCES_PATH\nCOPY --from=b $SOURCES_PATH /x\n", nil, nil},
		{"other copies are not $SOURCES_PATH's", "FROM nginx\nARG SOURCES_PATH\nCOPY docker/nginx.conf /etc/nginx/conf.d/default.conf\n", nil, nil},
		{"$SOURCES_PATHS is another variable", "FROM nginx\nCOPY $SOURCES_PATHS /x\n", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SourcesCopies([]byte(tc.dockerfile), tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestTheModulesDockerfilesDeclareSourcesPath(t *testing.T) {
	for _, k := range Kinds {
		data, err := os.ReadFile("../../" + k.Dockerfile())
		require.NoError(t, err)
		copies, err := SourcesCopies(data, nil)
		require.NoError(t, err)
		require.Len(t, copies, 1, k)
		assert.True(t, copies[0].Declared, k)
		assert.NotEmpty(t, copies[0].Dest, k)
	}
}

func TestACopyThatIsNotTheBuildOutputIsRefused(t *testing.T) {
	vendor := SourcesCopy{Line: 2, FromLine: 1, Dest: "/usr/share/nginx/html", Whole: true}
	declared := SourcesCopy{Line: 4, FromLine: 1, Dest: "/usr/share/nginx/html", Declared: true, Whole: true}
	part := SourcesCopy{Line: 4, FromLine: 1, Dest: "/usr/share/nginx/html", Declared: true}
	output := []string{"index.html", "assets/"}
	for _, tc := range []struct {
		name string
		c    SourcesCopy
		got  []string
		err  []string
	}{
		{"the build output, over the base image's own files", declared, []string{"50x.html", "assets/", "index.html"}, nil},
		{"the whole project: no ARG", vendor, []string{"50x.html", "dist/", "docker/", "index.html", "package.json", "src/"},
			[]string{"docker/frontend.Dockerfile:2: the image holds at /usr/share/nginx/html the whole project (its dist/, ", "docker/", "package.json",
				"not the build output dist/web", `add a line "ARG SOURCES_PATH" after the FROM line (line 1)`, "nothing was pushed"}},
		{"the whole project although declared: an ENV overrides it", declared, []string{"dist/", "package.json"},
			[]string{"docker/frontend.Dockerfile:4:", "an ENV of the base image named SOURCES_PATH overrides the build argument"}},
		{"part of the output", declared, []string{"index.html"}, []string{"not the build output dist/web (it lacks assets/)"}},
		{"a copy of a part of the output, as meant", part, []string{"index.html"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSourcesCopy("docker/frontend.Dockerfile", "dist/web", tc.c, tc.got, output)
			if tc.err == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.err {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func FuzzSourcesCopies(f *testing.F) {
	f.Add("FROM x\nCOPY $SOURCES_PATH /a\n")
	f.Add("ARG A=/b\nFROM x\nARG SOURCES_PATH\nWORKDIR $A\nCOPY ${SOURCES_PATH}/ c/\n")
	f.Fuzz(func(t *testing.T, dockerfile string) {
		copies, err := SourcesCopies([]byte(dockerfile), [][2]string{{"SOURCES_PATH", "dist/web"}})
		if err != nil {
			return
		}
		for _, c := range copies {
			assert.Positive(t, c.Line)
			if c.Dest != "" {
				assert.True(t, strings.HasPrefix(c.Dest, "/"), "absolute: %q", c.Dest)
			}
		}
	})
}

func TestTheBuildOutputIsTheContextOfACopyTheArgumentNeverReaches(t *testing.T) {
	for _, tc := range []struct {
		name, dockerfile string
		outputContext    bool
		projectRead      int
	}{
		{"the vendor's backend: no ARG", "FROM olympeio/backend-base:18-latest\nCOPY $SOURCES_PATH /home/node/app\n", true, 0},
		{"the vendor's code as data: no ARG, RUN steps that read no context", "FROM olympeio/codeasdata-base:latest\nCOPY --chown=1000:1000 $SOURCES_PATH /root/patches\nRUN chmod 775 ~/patches\nRUN chown -R 1000:1000 ~/patches\n", true, 0},
		{"ARG SOURCES_PATH declared: the project is the context", "FROM nginx\nARG SOURCES_PATH\nCOPY $SOURCES_PATH /usr/share/nginx/html\n", false, 0},
		{"no copy of $SOURCES_PATH at all", "FROM nginx\nCOPY site /usr/share/nginx/html\n", false, 2},
		{"no ARG, and a file of the project's copied too", "FROM nginx\nCOPY $SOURCES_PATH /usr/share/nginx/html\nCOPY docker/nginx.conf /etc/nginx/conf.d/default.conf\n", true, 3},
		{"no ARG, and a file of the project's in the same copy", "FROM nginx\nCOPY $SOURCES_PATH docker/robots.txt /usr/share/nginx/html/\n", true, 2},
		{"no ARG, and a RUN that may bind the context", "FROM node\nCOPY $SOURCES_PATH /app\nRUN --mount=type=bind,target=/src ls /src\n", true, 3},
		{"no ARG, a copy from another stage and a remote ADD read no context", "FROM alpine AS b\nRUN true\nFROM nginx\nCOPY --from=b /etc/os-release /x\nADD https://example.com/a.txt /a.txt\nCOPY $SOURCES_PATH /usr/share/nginx/html\n", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			copies, err := SourcesCopies([]byte(tc.dockerfile), nil)
			require.NoError(t, err)
			assert.Equal(t, tc.outputContext, OutputIsContext(copies))
			assert.Equal(t, tc.projectRead, ProjectRead([]byte(tc.dockerfile), nil))
		})
	}
}

func TestADockerfileThatNeedsTheProjectAndTakesTheWholeContextIsRefused(t *testing.T) {
	err := OutputContextProblem("docker/frontend.Dockerfile", 3, SourcesCopy{Line: 2, FromLine: 1, Dest: "/usr/share/nginx/html", Whole: true})
	assert.EqualError(t, err, `docker/frontend.Dockerfile:3 reads the project's files, but line 2 copies $SOURCES_PATH in a stage that never declares ARG SOURCES_PATH, `+
		`so that copy takes the whole build context, which is then the build output alone, without the project's files: add a line "ARG SOURCES_PATH" after the FROM line (line 1); nothing was built`)
}
