package images

import (
	"bytes"
	"fmt"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// dockerfile is a Dockerfile read with BuildKit's parser, with the build
// arguments the build gives it.
type dockerfile struct {
	stages []instructions.Stage
	given  map[string]string // the build arguments given
	global map[string]string // the global ARGs' values: given, else their defaults
	lex    *shell.Lex
}

// readDockerfile parses text; an error only when it does not parse as
// lines, nil stages when its instructions do not.
func readDockerfile(text []byte, args [][2]string) (*dockerfile, error) {
	res, err := parser.Parse(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("read the Dockerfile: %w", err)
	}
	stages, metaArgs, err := instructions.Parse(res.AST, nil)
	if err != nil {
		return &dockerfile{}, err
	}
	d := &dockerfile{stages: stages, given: map[string]string{}, global: map[string]string{}, lex: shell.NewLex(res.EscapeToken)}
	for _, a := range args {
		d.given[a[0]] = a[1]
	}
	for _, m := range metaArgs {
		for _, kv := range m.Args {
			if v, ok := d.given[kv.Key]; ok {
				d.global[kv.Key] = v
			} else if kv.Value != nil {
				d.global[kv.Key] = *kv.Value
			}
		}
	}
	return d, nil
}

// setVariables records in env, what a stage's expansions see, the values an
// ARG (given, its default, else the global one) or ENV instruction sets.
func (d *dockerfile) setVariables(env map[string]string, cmd instructions.Command) {
	switch c := cmd.(type) {
	case *instructions.ArgCommand:
		for _, kv := range c.Args {
			switch v, ok := d.given[kv.Key]; {
			case ok:
				env[kv.Key] = v
			case kv.Value != nil:
				env[kv.Key] = *kv.Value
			case d.global[kv.Key] != "":
				env[kv.Key] = d.global[kv.Key]
			}
		}
	case *instructions.EnvCommand:
		for _, kv := range c.Env {
			env[kv.Key] = kv.Value
		}
	}
}
