//go:build !(linux || darwin || freebsd || openbsd)

package rules

import "time"

// threadCPU is, where the module knows no thread CPU clock, the wall
// clock's time: there the limits count waits for a core too.
func threadCPU() time.Duration { return wallClock() }
