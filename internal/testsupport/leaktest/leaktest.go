// Package leaktest records what code under test said — errors, log lines,
// results — so a test can assert that a secret appears in none of it.
package leaktest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Recorder collects texts; it is safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	texts []string
}

// Logf records a log line; pass it where the code under test takes a logger.
func (r *Recorder) Logf(format string, args ...any) {
	r.Add(fmt.Sprintf(format, args...))
}

// Add records texts.
func (r *Recorder) Add(texts ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.texts = append(r.texts, texts...)
}

// Count says how many recorded texts contain s.
func (r *Recorder) Count(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, t := range r.texts {
		if strings.Contains(t, s) {
			n++
		}
	}
	return n
}

// AssertClean fails the test for every recorded text holding a secret.
func (r *Recorder) AssertClean(t testing.TB, secrets ...string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, text := range r.texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("a secret leaked into %q", text)
			}
		}
	}
}
