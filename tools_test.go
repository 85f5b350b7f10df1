package main

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// recordSpans makes Tracer() record into a recorder for the test.
func recordSpans(t *testing.T) *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	before := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(before) })
	return rec
}

func TestInSpanShowsEachStepWithItsOutcome(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status codes.Code
	}{
		{"a step that succeeds is marked ok", nil, codes.Ok},
		{"a step that fails is marked failed with its error", errors.New("npm ci exited 1"), codes.Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := recordSpans(t)
			got, err := inSpan(context.Background(), "build", func(ctx context.Context) (int, error) {
				// what the step does is inside its span
				_, child := Tracer().Start(ctx, "Container.withExec")
				child.End()
				return 42, tc.err
			})
			assert.Equal(t, 42, got, "the step's result is passed through")
			if tc.err == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.err, "the step's error is passed through (marked with its span, as Dagger links an error to where it happened)")
			}
			spans := rec.Ended()
			require.Len(t, spans, 2)
			child, step := spans[0], spans[1]
			assert.Equal(t, "build", step.Name())
			assert.Equal(t, tc.status, step.Status().Code)
			if tc.err != nil {
				assert.Equal(t, tc.err.Error(), step.Status().Description)
			}
			assert.Equal(t, step.SpanContext().SpanID(), child.Parent().SpanID(), "the step's calls are nested in its span")
		})
	}
}

// A service bound to a tool's container is kept out of the engine's proxy,
// the engine's own NO_PROXY kept.
func TestNoProxyWithAddsTheServicesOnce(t *testing.T) {
	for _, tc := range []struct{ engine, want string }{
		{"", "registry"},
		{"internal.example.com,10.0.0.0/8", "internal.example.com,10.0.0.0/8,registry"},
		{" a , ,b,registry", "a,b,registry"},
		{"*", "*,registry"},
	} {
		assert.Equal(t, tc.want, noProxyWith(tc.engine, "registry"), "NO_PROXY=%q", tc.engine)
	}
}
