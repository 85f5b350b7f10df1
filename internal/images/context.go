package images

import (
	"path"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// ContextPaths are the paths of the build context a Dockerfile reads: the
// source of every COPY and ADD that reads the context, in every stage, its
// variables expanded (the global ARG defaults and the given build
// arguments, each stage's ARG and ENV), cleaned, each once. ok is false
// when that cannot be known for sure, and the whole context must be given:
// a source with a wildcard or an unset variable, one that is the whole
// context or outside it, a RUN --mount (it may bind the context), an
// ONBUILD, a Dockerfile that does not parse.
func ContextPaths(text []byte, args [][2]string) (paths []string, ok bool) {
	d, err := readDockerfile(text, args)
	if err != nil || len(d.stages) == 0 {
		return nil, false
	}
	for _, st := range d.stages {
		env := map[string]string{}
		for _, cmd := range st.Commands {
			d.setVariables(env, cmd)
			var sources []string
			switch c := cmd.(type) {
			case *instructions.RunCommand:
				if slices.Contains(c.FlagsUsed, "mount") {
					return nil, false
				}
			case *instructions.OnbuildCommand:
				return nil, false
			case *instructions.CopyCommand:
				if c.From == "" {
					sources = c.SourcePaths
				}
			case *instructions.AddCommand:
				for _, s := range c.SourcePaths {
					if !isRemote(s) {
						sources = append(sources, s)
					}
				}
			}
			for _, s := range sources {
				p, ok := contextPath(d.lex, s, env)
				if !ok {
					return nil, false
				}
				if !slices.Contains(paths, p) {
					paths = append(paths, p)
				}
			}
		}
	}
	return paths, true
}

// contextPath is a COPY or ADD source as a path of the context, if it is
// one that names exactly what it reads.
func contextPath(lex *shell.Lex, source string, env map[string]string) (string, bool) {
	s, err := expand(lex, source, env)
	if err != nil || s == "" || strings.ContainsAny(s, "$*?[\\") {
		return "", false
	}
	p := path.Clean(strings.TrimLeft(s, "/")) // the context's root is /, and // is / too
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

// isRemote says whether an ADD source is fetched rather than read from the
// context: a URL or a git address.
func isRemote(s string) bool {
	return strings.Contains(s, "://") || strings.HasPrefix(s, "git@")
}
