package images

import "time"

// The tests check a flag and compose its result in one step, as the module
// does in two (ParseLabels then LabelSet.With; ParseBuildArgs then Args.For).

// Meta is what the labels describe.
type Meta struct {
	DrawVersion string    // from --draw-package
	Created     time.Time // from --created (the commit time), never the clock
	Labels      []string  // --label KEY=VALUE, in order
}

// Labels are an image's labels: draw_version, org.opencontainers.image.created
// and the user's (ParseLabels, then LabelSet.With).
func Labels(m Meta) (labels [][2]string, err error) {
	if m.DrawVersion == "" {
		return nil, ErrNoDrawVersion
	}
	set, err := ParseLabels(m.Created, m.Labels)
	if err != nil {
		return nil, err
	}
	return set.With(m.DrawVersion), nil
}

// BuildArgs is ParseBuildArgs, then For.
func BuildArgs(k Kind, backendBase string, user []string) ([][2]string, error) {
	a, err := ParseBuildArgs(user)
	if err != nil {
		return nil, err
	}
	return a.For(k, backendBase), nil
}
