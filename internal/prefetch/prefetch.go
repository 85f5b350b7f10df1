// Package prefetch runs, beside the work a step does now, the fetches a
// later step will need: bounded in time, waited for when the step went well
// (what they fetched is then cached for the next step), abandoned when it
// failed (its error is reported at once, not after the pulls).
package prefetch

import (
	"context"
	"sync"
	"time"
)

// Group is fetches under way.
type Group struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start runs each fetch in its own goroutine, all of them ended at limit.
// Their errors are dropped: what a fetch readies is used by a later step,
// which fetches it again and reports the failure in its own words.
func Start(ctx context.Context, limit time.Duration, fetches ...func(context.Context) error) *Group {
	ctx, cancel := context.WithTimeout(ctx, limit)
	g := &Group{cancel: cancel}
	for _, fetch := range fetches {
		g.wg.Go(func() { _ = fetch(ctx) })
	}
	return g
}

// Done ends the group: after a step that failed, its fetches are cancelled
// before they are waited for, since nothing will use them; otherwise they
// are waited for, so what they fetch is ready for the next step.
func (g *Group) Done(failed bool) {
	if failed {
		g.cancel()
	}
	g.wg.Wait()
	g.cancel()
}
