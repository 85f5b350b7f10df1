package ocipublish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// Tagged is what the registry serves under each of t's refs, in their
// order (a HEAD of each, concurrently, with Push's login): a digest, or the
// zero Hash where the tag is not there. It fails when the registry cannot be
// read: a refused login, a ref without a tag, no answer within t.Timeout
// (which the error names).
func Tagged(ctx context.Context, t Target) ([]v1.Hash, error) {
	ctx, cancel, err := t.start(ctx, "no reference to read", "the registry did not answer")
	defer cancel()
	if err != nil {
		return nil, err
	}
	repos, err := t.repositories(ctx, t.client(), t.Refs)
	if err != nil {
		return nil, err
	}
	held := make([]v1.Hash, len(t.Refs))
	g, gctx := errgroup.WithContext(ctx)
	for i, ref := range t.Refs {
		g.Go(func() error {
			h, err := resolve(gctx, repos[i])
			if err != nil {
				return fmt.Errorf("read %s: %s", ref, t.cutErr(ctx, err))
			}
			held[i] = h
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return held, nil
}

// repositories are refs as c reaches them.
func (t Target) repositories(ctx context.Context, c *client, refs []string) ([]repository, error) {
	repos := make([]repository, len(refs))
	for i, ref := range refs {
		var err error
		if repos[i], err = c.repository(ctx, ref); err != nil {
			return nil, err
		}
	}
	return repos, nil
}

// Plan is what publishing an artifact comes to, from what its tags hold.
type Plan struct {
	// Push: the repository is not known to hold the artifact: push it.
	Push bool
	// Retag are the refs to point at the artifact, which another of its
	// refs holds already: the repository has it whole (a registry takes a
	// manifest only once it has what the manifest names), so only these
	// tags move (Retag).
	Retag []string
	// Why says which, in a line for the log.
	Why string
}

// PlanPush decides how the kind image of digest reaches refs, from what
// Tagged read of them (held, or err): nothing to do when every tag holds
// the digest; a retag when some do; a push otherwise, or when they could not
// be read.
func PlanPush(kind string, digest v1.Hash, refs []string, held []v1.Hash, err error) Plan {
	switch {
	case err != nil:
	case len(refs) == 0:
		err = errors.New("no reference")
	case len(held) != len(refs):
		err = fmt.Errorf("%d tags read of %d", len(held), len(refs))
	case digest == (v1.Hash{}):
		err = errors.New("the image's digest is not known") // a missing tag's zero Hash must not match it
	}
	if err != nil {
		return Plan{Push: true, Why: fmt.Sprintf("the %s image: pushing (%v)", kind, err)}
	}
	holder, retag := -1, []string(nil)
	for i, h := range held {
		switch {
		case h != digest:
			retag = append(retag, refs[i])
		case holder < 0:
			holder = i
		}
	}
	switch {
	case holder < 0:
		return Plan{Push: true, Why: fmt.Sprintf("the %s image: pushing (%s, not %s)", kind, holding(refs[0], held[0]), digest)}
	case len(retag) == 0:
		return Plan{Why: fmt.Sprintf("the %s image: every tag already holds %s; nothing to push", kind, digest)}
	}
	more := ""
	if len(retag) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(retag)-1)
	}
	return Plan{Retag: retag, Why: fmt.Sprintf("the %s image: %s already holds %s; pointing %s%s at it, nothing to push",
		kind, refs[holder], digest, retag[0], more)}
}

// holding says what a ref holds, for a log line.
func holding(ref string, held v1.Hash) string {
	if held == (v1.Hash{}) {
		return ref + " is not in the registry"
	}
	return ref + " holds " + held.String()
}

// Retag points refs at digest, which another of t's refs already holds in
// the same repository (PlanPush): it reads the manifest once and writes it
// under each ref, reads each back as Push does, and reports t's refs pinned
// as Push would, refs tagged and the others unchanged. Within t.Timeout,
// which its error names.
func Retag(ctx context.Context, t Target, digest v1.Hash, refs []string) ([]Pushed, error) {
	ctx, cancel, err := t.start(ctx, "no reference to tag", "the tagging did not finish")
	defer cancel()
	if err != nil {
		return nil, err
	}
	repos, err := t.repositories(ctx, t.client(), append([]string{t.Refs[0]}, refs...))
	if err != nil {
		return nil, err
	}
	desc, manifest, err := fetchManifest(ctx, repos[0], digest)
	if err != nil {
		return nil, fmt.Errorf("read %s@%s: %s", repos[0].name, digest, t.cutErr(ctx, err))
	}
	g := errgroup.Group{}
	for i, ref := range refs {
		g.Go(func() error {
			r := repos[i+1]
			if err := pushManifest(ctx, r, desc, manifest); err != nil {
				return fmt.Errorf("tag %s: %s", ref, t.cutErr(ctx, err))
			}
			held, err := resolve(ctx, r)
			if err != nil {
				return fmt.Errorf("read back %s: %s", ref, t.cutErr(ctx, err))
			}
			if held != digest {
				return fmt.Errorf("%s: the registry holds %s, not the %s tagged", ref, held, digest)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return pinned(t.Refs, digest, func(ref string) string {
		if slices.Contains(refs, ref) {
			return OutcomeTagged
		}
		return OutcomeUnchanged
	}), nil
}

// cutErr is err for a log line: the time limit named when it stopped the
// work, a refused login's flags, the registry's words cut.
func (t Target) cutErr(ctx context.Context, err error) string {
	return fielderr.Cut(t.pushErr(ctx, err).Error(), 300)
}

// TagsRead is what a tags' check (CheckTags) read: the digest each of the
// target's tags holds (Tagged), or why not.
type TagsRead struct {
	Target Target
	Held   []v1.Hash
	Err    error
}

// CheckTags starts reading the digest each of t's tags holds (Tagged) at
// once, so that it runs while the image builds; the answer comes on the
// channel.
func CheckTags(ctx context.Context, t Target) <-chan TagsRead {
	read := make(chan TagsRead, 1)
	go func() {
		held, err := Tagged(ctx, t)
		read <- TagsRead{Target: t, Held: held, Err: err}
	}()
	return read
}

// WithoutPush is how the kind image of digest reaches the tags read without
// a push, as PlanPush says: nothing to do when every tag holds it, a Retag
// when some do; ok false when it must be pushed, a failed retag included.
// Each decision's line goes to log.
func WithoutPush(ctx context.Context, kind string, digest v1.Hash, read TagsRead, log io.Writer) (_ []Pushed, ok bool) {
	plan := PlanPush(kind, digest, read.Target.Refs, read.Held, read.Err)
	fmt.Fprintln(log, plan.Why)
	switch {
	case plan.Push:
		return nil, false
	case len(plan.Retag) > 0:
		pushed, err := Retag(ctx, read.Target, digest, plan.Retag)
		if err != nil {
			fmt.Fprintf(log, "the %s image: pushing (the retag failed: %v)\n", kind, err)
			return nil, false
		}
		return pushed, true
	}
	return AlreadyPushed(read.Target.Refs, digest), true
}
