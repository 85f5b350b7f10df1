package images

import (
	"fmt"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// FinalBase is the image the Dockerfile's last stage starts from, through
// the stages it is built on: the image whose layers and history lead the
// built image's. "" when that is scratch or a base that names an unset
// argument: then no layer of the image is known to be the base's.
func FinalBase(dockerfile []byte, args [][2]string) (string, error) {
	stages, err := readStages(dockerfile, args)
	if err != nil || len(stages) == 0 {
		return "", err
	}
	s := stages[len(stages)-1]
	for s.earlier >= 0 {
		s = stages[s.earlier]
	}
	return s.image, nil
}

// stage is what one FROM starts from: an image (or "" for none that can be
// pulled), or an earlier stage (its index; -1 for none).
type stage struct {
	image   string
	earlier int
}

func readStages(text []byte, args [][2]string) ([]stage, error) {
	d, err := readDockerfile(text, args)
	if err != nil {
		if d != nil {
			err = fmt.Errorf("read the Dockerfile: %w", err)
		}
		return nil, err
	}
	var env []string
	for k, v := range d.global {
		env = append(env, k+"="+v)
	}
	stages := make([]stage, len(d.stages))
	var names []string // stage names, lower-cased, by index ("" for none)
	for i, s := range d.stages {
		stages[i].earlier = -1
		base, _, err := d.lex.ProcessWord(s.BaseName, shell.EnvsFromSlice(env))
		switch {
		case err != nil, base == "", base == "scratch", strings.Contains(base, "$"):
		case slices.Contains(names, strings.ToLower(base)):
			stages[i].earlier = slices.Index(names, strings.ToLower(base))
		default:
			stages[i].image = base
		}
		names = append(names, strings.ToLower(s.Name))
	}
	return stages, nil
}
