// Package steplimit bounds the time of a command run in a container: an
// install, a build, the toolkit's snapshot, a tool's download. Dagger's
// withExec has no time limit (v0.21.8), and a build that never exits (a
// bundler's watcher left open, a registry that stops answering) would
// otherwise hold the whole run until the CI system kills it, if it ever
// does (Jenkins has no default limit), with nothing saying which step hung.
//
// The limit is kept by sh, which every image the module runs commands in
// has (Debian's dash, Alpine's busybox ash): the command runs in the
// background under a watchdog that, when the time is up, says so on stderr
// in a line the module repeats in its error (fielderr.ToolLines), stops the
// command and exits 124, as coreutils' timeout does. The engine's init then
// stops whatever the command left running (it signals the exec's process
// group and, as the container's first process, ends the rest when it exits).
package steplimit

import (
	"fmt"
	"strings"
	"time"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// Limits the module keeps. They are not flags: they stop what hangs, far
// above what any real step takes, and the error of one names it.
const (
	// Project bounds each command of the project's own: the install, each
	// build script, buildCodeAsData, the toolkit's snapshot.
	Project = time.Hour
	// Tool bounds a tool's own step: a package download, a signature, an
	// SBOM, a tool's build from source.
	Tool = 15 * time.Minute
)

// ExitCode is what a command stopped at its limit exits with (coreutils'
// timeout's code).
const ExitCode = 124

// script runs "$@" within the given seconds. The sleep is the main shell's
// own child, so the runner stops exactly it when the command ends in time
// (nothing is left running behind a command that ended), and the main shell
// knows the time is up when the sleep ends by itself. The runner passes a
// stop on to the command.
const script = `limit=$0 what=$1; shift
sleep %[2]d &
nap=$!
(
  "$@" &
  c=$!
  trap 'kill -TERM $c 2>/dev/null' TERM
  wait $c
  rc=$?
  kill $nap 2>/dev/null
  exit $rc
) &
run=$!
if wait $nap && kill -0 $run 2>/dev/null; then
  printf '%%s\n' "lowcode-pipeline: $what did not finish within $limit, the time limit of one step: stopped" >&2
  kill -TERM $run
  exit %[1]d
fi
wait $run`

// Within is cmd run with a time limit: it exits with cmd's own status, or,
// when limit is up first, with ExitCode after a line naming the command and
// the limit on stderr.
func Within(limit time.Duration, cmd []string) []string {
	return WithinAs(limit, Describe(cmd), cmd)
}

// WithinAs is Within with the command named name in its error (cut short):
// a script's purpose rather than its text.
func WithinAs(limit time.Duration, name string, cmd []string) []string {
	secs := max(int64((limit+time.Second-1)/time.Second), 1)
	body := fmt.Sprintf(script, ExitCode, secs)
	return append([]string{"sh", "-c", body, Format(time.Duration(secs) * time.Second), fielderr.Cut(name, describedBytes)}, cmd...)
}

// describedBytes is how much of a command an error repeats.
const describedBytes = 120

// Describe is cmd as an error names it: its words, cut short.
func Describe(cmd []string) string {
	return fielderr.Cut(strings.Join(cmd, " "), describedBytes)
}

// Format is d as a person writes it: 1h, 15m, 1m30s.
func Format(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
