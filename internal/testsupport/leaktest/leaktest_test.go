package leaktest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// spy stands in for a test, to see what AssertClean reports.
type spy struct {
	testing.TB
	errors []string
}

func (s *spy) Helper() {}
func (s *spy) Errorf(format string, args ...any) {
	s.errors = append(s.errors, fmt.Sprintf(format, args...))
}

func TestAssertCleanReportsEveryLeak(t *testing.T) {
	var r Recorder
	r.Logf("connecting with %s", "tok-123")
	r.Add("clean line", "error: tok-123 refused")
	s := &spy{}
	r.AssertClean(s, "tok-123")
	assert.Equal(t, []string{`a secret leaked into "connecting with tok-123"`, `a secret leaked into "error: tok-123 refused"`}, s.errors)
	assert.Equal(t, 2, r.Count("tok-123"))

	s = &spy{}
	r.AssertClean(s, "other-secret")
	assert.Empty(t, s.errors)
}
