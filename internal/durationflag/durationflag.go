// Package durationflag reads every time-limit flag of the module the same
// way: a positive Go duration, and one wording when it is not.
package durationflag

import (
	"fmt"
	"time"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// Parse reads the value of the flag named flag (e.g. "--timeout"): a
// positive Go duration such as 500ms, 10s or 2m. An empty value is refused.
func Parse(flag, value string) (time.Duration, error) {
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s %s: use a positive Go duration such as 500ms, 10s or 2m", flag, fielderr.Quote(value))
	}
	return d, nil
}

// Optional is Parse where an empty value means the caller's default: 0.
func Optional(flag, value string) (time.Duration, error) {
	if value == "" {
		return 0, nil
	}
	return Parse(flag, value)
}
