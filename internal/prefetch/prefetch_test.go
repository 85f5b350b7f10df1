package prefetch

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blocked is a fetch that runs until its context ends, and says why it ended.
func blocked(ended chan<- error) func(context.Context) error {
	return func(ctx context.Context) error {
		<-ctx.Done()
		ended <- ctx.Err()
		return ctx.Err()
	}
}

func TestDoneAfterSuccessWaitsForEveryFetch(t *testing.T) {
	var finished atomic.Int32
	slow := func(context.Context) error {
		time.Sleep(50 * time.Millisecond)
		finished.Add(1)
		return nil
	}
	failing := func(context.Context) error { finished.Add(1); return errors.New("pull failed") }
	g := Start(context.Background(), time.Minute, slow, slow, failing)
	g.Done(false)
	assert.EqualValues(t, 3, finished.Load(), "Done(false) returned before its fetches ended")
}

func TestDoneAfterFailureCancelsTheFetches(t *testing.T) {
	ended := make(chan error, 2)
	g := Start(context.Background(), time.Hour, blocked(ended), blocked(ended))
	returned := make(chan struct{})
	go func() { g.Done(true); close(returned) }()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("Done(true) waited for fetches nothing will use")
	}
	for range 2 {
		assert.ErrorIs(t, <-ended, context.Canceled)
	}
}

func TestDoneAfterSuccessDoesNotCancel(t *testing.T) {
	ended := make(chan error, 1)
	g := Start(context.Background(), 100*time.Millisecond, blocked(ended))
	g.Done(false)
	// the fetch ran to its limit: it was not cut short by Done
	assert.ErrorIs(t, <-ended, context.DeadlineExceeded)
}

func TestAFetchEndsAtTheLimit(t *testing.T) {
	ended := make(chan error, 1)
	start := time.Now()
	Start(context.Background(), 50*time.Millisecond, blocked(ended))
	select {
	case err := <-ended:
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	case <-time.After(5 * time.Second):
		t.Fatal("a fetch outlived its limit")
	}
}

func TestTheCallersCancellationReachesTheFetches(t *testing.T) {
	ended := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	g := Start(ctx, time.Hour, blocked(ended))
	cancel()
	require.ErrorIs(t, <-ended, context.Canceled)
	g.Done(false)
}
