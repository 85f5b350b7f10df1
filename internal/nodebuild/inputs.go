package nodebuild

import (
	"encoding/json"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// PipelineField is package.json's field of this module's settings: under
// "inputs", the project paths each build step reads, e.g.
//
//	"lowcodePipeline": {"inputs": {"build:draw": ["webpack.config.js", "src/web", "res/oConfig.json"]}}
//
// A step given its inputs runs over those paths and what the install read
// (package.json, the lock file, local dependencies), nothing else of the
// project, so a change elsewhere leaves it cached. A step not listed reads
// the whole project.
const PipelineField = "lowcodePipeline"

// InputSteps are the steps whose inputs a project can declare: the two
// build scripts and the toolkit's code-as-data build.
var InputSteps = []string{DrawScript, NodeScript, CodeAsDataVerb}

// StepInputs are the project paths each step reads, by step (InputSteps);
// a step not in it reads the whole project.
type StepInputs map[string][]string

// StepInputs reads package.json's lowcodePipeline field: every problem at
// once, each named by its place in package.json, e.g.
// lowcodePipeline.inputs.build:draw[1]. No field is no declaration.
func (m *Manifest) StepInputs() (StepInputs, error) {
	raw := strings.TrimSpace(string(m.Pipeline))
	if raw == "" || raw == "null" {
		return nil, nil
	}
	var problems fielderr.List
	fields, ok := object(&problems, PipelineField, m.Pipeline)
	if !ok {
		return nil, inManifest(problems)
	}
	out := StepInputs{}
	for _, key := range sortedKeys(fields) {
		at := fielderr.Join(PipelineField, key)
		if key != "inputs" {
			problems.Addf(at, `unknown setting: the only one is "inputs" (the project paths each build step reads)`)
			continue
		}
		steps, ok := object(&problems, at, fields[key])
		if !ok {
			continue
		}
		for _, step := range sortedKeys(steps) {
			stepAt := inputsAt(step)
			if !slices.Contains(InputSteps, step) {
				problems.Addf(stepAt, "not a build step: choose %s", strings.Join(InputSteps, ", "))
				continue
			}
			var paths []any
			if err := json.Unmarshal(steps[step], &paths); err != nil || paths == nil {
				problems.Addf(stepAt, `want an array of project paths, e.g. ["src/web", "res/oConfig.json"]`)
				continue
			}
			clean := make([]string, 0, len(paths))
			for i, p := range paths {
				s, ok := p.(string)
				if !ok {
					problems.Addf(fielderr.Index(stepAt, i), "want a string: a path of the project")
					continue
				}
				c, why := cleanInput(s)
				if why != "" {
					problems.Addf(fielderr.Index(stepAt, i), "%s: %s", fielderr.Quote(s), why)
					continue
				}
				if !slices.Contains(clean, c) {
					clean = append(clean, c)
				}
			}
			out[step] = clean
		}
	}
	if err := inManifest(problems); err != nil {
		return nil, err
	}
	return out, nil
}

// cleanInput is p as a path of the project, or why it is not one.
func cleanInput(p string) (string, string) {
	const want = "want a file or folder of the project, relative to its root, without wildcards"
	switch {
	case p == "":
		return "", "empty: " + want
	case !utf8.ValidString(p) || strings.ContainsFunc(p, unicode.IsControl):
		return "", "not text: " + want
	case path.IsAbs(p) || strings.Contains(p, `\`):
		return "", "absolute or with a backslash: " + want
	case strings.ContainsAny(p, "*?[") || strings.HasPrefix(p, "!"):
		return "", "a pattern: " + want
	}
	c := path.Clean(p)
	switch {
	case c == "." || c == "..":
		return "", "the whole project is what a step reads without a declaration: " + want
	case strings.HasPrefix(c, "../"):
		return "", "outside the project: " + want
	}
	// ProjectExcludes: "dist" and ".git" at the root, "**/node_modules" at any depth
	for _, never := range ProjectExcludes {
		if top := strings.TrimPrefix(never, "**/"); c == top || strings.HasPrefix(c, top+"/") || (never != top && slices.Contains(strings.Split(c, "/"), top)) {
			return "", top + " never reaches a step (no container gets it of a project): " + want
		}
	}
	return c, ""
}

// object decodes raw as a JSON object, else records why at at.
func object(problems *fielderr.List, at string, raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		problems.Addf(at, "want an object")
		return nil, false
	}
	return fields, true
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// inManifest names package.json in front of the problems.
func inManifest(problems fielderr.List) error {
	if len(problems) == 0 {
		return nil
	}
	for i := range problems {
		problems[i].Path = ManifestFile + ": " + problems[i].Path
	}
	return problems
}

// inputsAt is where step's inputs are declared, under PipelineField.
func inputsAt(step string) string {
	return fielderr.Join(fielderr.Join(PipelineField, "inputs"), step)
}

// MissingInput is the problem of path, the i-th input declared for step,
// which the project lacks: a step given a missing folder would build
// without it.
func MissingInput(step string, i int, path string) fielderr.Error {
	return fielderr.Error{Path: ManifestFile + ": " + fielderr.Index(inputsAt(step), i),
		Message: fielderr.Quote(path) + ": no such file or folder in the project (node_modules, dist and .git are never part of it)"}
}

// Described is the build summary's line for the output dir that step
// writes with command: what it reads of the project when declared, or that
// the declaration goes unused when the install took the whole project.
func (s StepInputs) Described(dir, command, step string, installTookAll bool) string {
	paths, ok := s[step]
	switch {
	case !ok:
		return dir + " (" + command + ")"
	case installTookAll:
		return dir + " (" + command + "; its declared inputs unused: the install took the whole project)"
	case len(paths) == 0:
		return dir + " (" + command + "; reads nothing of the project but the install's files)"
	}
	return dir + " (" + command + "; reads " + strings.Join(paths, ", ") + ")"
}
