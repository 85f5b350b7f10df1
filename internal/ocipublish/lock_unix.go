//go:build unix

package ocipublish

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile takes the exclusive lock of file, waiting at most wait for it;
// closing what it returns releases it, as does the process's end.
func lockFile(file string, wait time.Duration) (*os.File, error) {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, err
		}
		time.Sleep(25 * time.Millisecond)
	}
}
