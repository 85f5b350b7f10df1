//go:build linux || darwin || freebsd || openbsd

package rules

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling thread has used. A goroutine locked
// to its thread (runtime.LockOSThread) reads its own: the time it waited
// for a core on a busy machine is not in it. Where the clock cannot be read
// (a sandbox that forbids it), it is the wall clock's time, waits included.
func threadCPU() time.Duration {
	if !threadClock() {
		return wallClock()
	}
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) // it could be read once: it can always be
	return time.Duration(ts.Nano())
}

var threadClock = sync.OnceValue(func() bool {
	var ts unix.Timespec
	return unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) == nil
})
