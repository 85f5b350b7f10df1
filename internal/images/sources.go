package images

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// ArgSourcesPath is the build argument that names the image's build output.
const ArgSourcesPath = "SOURCES_PATH"

var (
	readsSourcesPath = regexp.MustCompile(`\$(?:SOURCES_PATH\b|\{SOURCES_PATH[}:])`)
	wholeOutput      = regexp.MustCompile(`^\$(?:SOURCES_PATH|\{SOURCES_PATH\})(?:/\.?)?$`)
)

// SourcesCopy is a COPY or ADD of a Dockerfile's final stage that reads
// $SOURCES_PATH from the context: where the image gets its build output.
type SourcesCopy struct {
	Line     int    // the instruction's first line, from 1
	FromLine int    // its stage's FROM line
	Dest     string // where it copies to, absolute, its variables expanded; "" when that is not known
	Declared bool   // whether the stage declares ARG SOURCES_PATH before it
	Whole    bool   // whether it copies the whole output ($SOURCES_PATH, not a part of it)
}

// SourcesCopies are the final stage's copies of $SOURCES_PATH, with the
// global ARG defaults and the given build arguments applied to their
// destinations.
func SourcesCopies(text []byte, args [][2]string) ([]SourcesCopy, error) {
	d, err := readDockerfile(text, args)
	if err != nil || len(d.stages) == 0 {
		return nil, err
	}
	final := d.stages[len(d.stages)-1]
	env := map[string]string{} // what this stage's expansions see
	workdir, declared := "/", false
	var out []SourcesCopy
	for _, cmd := range final.Commands {
		d.setVariables(env, cmd)
		switch c := cmd.(type) {
		case *instructions.ArgCommand:
			for _, kv := range c.Args {
				declared = declared || kv.Key == ArgSourcesPath
			}
		case *instructions.WorkdirCommand:
			if w, err := expand(d.lex, c.Path, env); err == nil {
				workdir = absolute(workdir, w)
			}
		case *instructions.CopyCommand:
			if c.From == "" {
				out = appendCopy(out, d.lex, c.SourcesAndDest, c.Location(), final, env, workdir, declared)
			}
		case *instructions.AddCommand:
			out = appendCopy(out, d.lex, c.SourcesAndDest, c.Location(), final, env, workdir, declared)
		}
	}
	return out, nil
}

func appendCopy(out []SourcesCopy, lex *shell.Lex, sd instructions.SourcesAndDest, loc []parser.Range, stage instructions.Stage,
	env map[string]string, workdir string, declared bool) []SourcesCopy {
	if !slices.ContainsFunc(sd.SourcePaths, readsSourcesPath.MatchString) {
		return out
	}
	c := SourcesCopy{Declared: declared, Whole: len(sd.SourcePaths) == 1 && wholeOutput.MatchString(sd.SourcePaths[0])}
	if len(loc) > 0 {
		c.Line = loc[0].Start.Line
	}
	if len(stage.Location) > 0 {
		c.FromLine = stage.Location[0].Start.Line
	}
	if dest, err := expand(lex, sd.DestPath, env); err == nil && !strings.Contains(dest, "$") {
		c.Dest = absolute(workdir, dest)
	}
	return append(out, c)
}

func expand(lex *shell.Lex, word string, env map[string]string) (string, error) {
	var kv []string
	for k, v := range env {
		kv = append(kv, k+"="+v)
	}
	w, _, err := lex.ProcessWord(word, shell.EnvsFromSlice(kv))
	return w, err
}

func absolute(workdir, p string) string {
	if !path.IsAbs(p) {
		p = path.Join(workdir, p)
	}
	return path.Clean(p)
}

// CheckSourcesCopy refuses an image whose copy of $SOURCES_PATH (c, in the
// Dockerfile file) holds at c.Dest the entries got instead of the build
// output's, want (from sourcesPath): an output entry missing, or the
// project's dist folder there, the sign of a SOURCES_PATH that came out
// empty and copied the whole context. It names the line and the fix.
func CheckSourcesCopy(file, sourcesPath string, c SourcesCopy, got, want []string) error {
	has := func(list []string, name string) bool {
		return slices.Contains(list, name) || slices.Contains(list, name+"/")
	}
	var missing []string
	for _, w := range want {
		if !c.Whole {
			break // a part of the output: what it holds of it is the Dockerfile's choice
		}
		if !has(got, strings.TrimSuffix(w, "/")) {
			missing = append(missing, w)
		}
	}
	whole := has(got, "dist") && !has(want, "dist")
	if !whole && len(missing) == 0 {
		return nil
	}
	what := fmt.Sprintf("not the build output %s (it lacks %s)", sourcesPath, fielderr.Cut(strings.Join(missing, ", "), fielderr.MaxValue))
	if whole {
		what = fmt.Sprintf("the whole project (its dist/, %s), not the build output %s", fielderr.Cut(strings.Join(others(got, want), ", "), fielderr.MaxValue), sourcesPath)
	}
	fix := "see what SOURCES_PATH is in this stage: an ENV of the base image named SOURCES_PATH overrides the build argument"
	if !c.Declared {
		fix = fmt.Sprintf("this stage never declares ARG SOURCES_PATH, so the build argument does not reach it and $SOURCES_PATH is empty: add a line \"ARG SOURCES_PATH\" after the FROM line (line %d)", c.FromLine)
	}
	// the project's file names and the Dockerfile's words, as a terminal may show them
	return fmt.Errorf("%s:%d: the image holds at %s %s; %s; nothing was pushed", fielderr.Printable(file), c.Line, fielderr.Printable(c.Dest), fielderr.Printable(what), fix)
}

// others are got's entries that are not want's, at most a few.
func others(got, want []string) []string {
	var out []string
	for _, g := range got {
		if name := strings.TrimSuffix(g, "/"); name != "dist" && !slices.Contains(want, g) && !slices.Contains(want, name) && len(out) < 4 {
			out = append(out, g)
		}
	}
	return out
}

// OutputIsContext says whether every copy of $SOURCES_PATH of the final
// stage (copies, at least one) comes before any ARG SOURCES_PATH of its
// stage, as in the vendor's template: the build argument does not reach
// them, $SOURCES_PATH is empty, and each copies the whole build context.
// That context is then the build output alone, so that the copy holds
// exactly what the Dockerfile means.
func OutputIsContext(copies []SourcesCopy) bool {
	return len(copies) > 0 && !slices.ContainsFunc(copies, func(c SourcesCopy) bool { return c.Declared })
}

// ProjectRead is the line of the first instruction, in any stage, that reads
// the build context other than through $SOURCES_PATH: a COPY (not --from)
// or an ADD of a local source, or a RUN --mount, which may bind it; 0 for
// none. A Dockerfile whose build output is its context (OutputIsContext)
// and that reads one cannot be built: the project's files are not there.
func ProjectRead(text []byte, args [][2]string) int {
	d, err := readDockerfile(text, args)
	if err != nil {
		return 0
	}
	for _, st := range d.stages {
		for _, cmd := range st.Commands {
			var sources []string
			switch c := cmd.(type) {
			case *instructions.RunCommand:
				if slices.Contains(c.FlagsUsed, "mount") {
					return line(c.Location())
				}
			case *instructions.CopyCommand:
				if c.From == "" {
					sources = c.SourcePaths
				}
			case *instructions.AddCommand:
				sources = slices.DeleteFunc(slices.Clone(c.SourcePaths), isRemote)
			}
			if slices.ContainsFunc(sources, func(s string) bool { return !readsSourcesPath.MatchString(s) }) {
				return line(cmd.Location())
			}
		}
	}
	return 0
}

func line(loc []parser.Range) int {
	if len(loc) == 0 {
		return 0
	}
	return loc[0].Start.Line
}

// OutputContextProblem is the refusal of a Dockerfile whose build output is
// its context (OutputIsContext) but whose line read reads the project's
// files (ProjectRead), with the fix: declaring the build argument.
func OutputContextProblem(file string, read int, c SourcesCopy) error {
	return fmt.Errorf("%s:%d reads the project's files, but line %d copies $SOURCES_PATH in a stage that never declares ARG SOURCES_PATH, "+
		"so that copy takes the whole build context, which is then the build output alone, without the project's files: "+
		"add a line \"ARG SOURCES_PATH\" after the FROM line (line %d); nothing was built", file, read, c.Line, c.FromLine)
}
