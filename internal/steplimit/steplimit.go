// Package steplimit bounds the time of a command run in a container: an
// install, a build, the toolkit's snapshot, a tool's download. Dagger's
// withExec has no time limit (v0.21.8), and a build that never exits (a
// bundler's watcher left open, a registry that stops answering) would
// otherwise hold the whole run until the CI system kills it, if it ever
// does (Jenkins has no default limit), with nothing saying which step hung.
//
// The limit is kept by a sh script installed in the container under a name
// that says it (lowcode-pipeline-within-1h), so that the engine's progress
// shows `withExec lowcode-pipeline-within-1h npm ci …`, not a script's text.
// sh is in every image the module runs commands in (Debian's dash, Alpine's
// busybox ash): the command runs in the background under a watchdog that,
// when the time is up, says so on stderr in a line the module repeats in its
// error (fielderr.ToolLines), stops the command and exits 124, as coreutils'
// timeout does. The engine's init then stops whatever the command left
// running (it signals the exec's process group and, as the container's first
// process, ends the rest when it exits: tests/engine-facts.md, fact 20).
package steplimit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
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
	// Pull bounds the pulls of a step's images. They come before the
	// step's first exec, and so before its limit starts: a wait for a
	// step that pulls (Wait) takes Pull plus its commands' limits.
	Pull = 15 * time.Minute
)

// ExitCode is what a command stopped at its limit exits with (coreutils'
// timeout's code).
const ExitCode = 124

// Dir is where the module installs its helper commands in a container: on
// the PATH of every image it runs commands in.
const Dir = "/usr/local/bin"

// describedBytes is how much of a command an error repeats.
const describedBytes = 120

// script runs "$@" within %[2]d seconds. The sleep is the main shell's own
// child, so the runner stops exactly it when the command ends in time
// (nothing is left running behind a command that ended), and the main shell
// knows the time is up when the sleep ends by itself. The runner passes a
// stop on to the command. The wait for the sleep writes nothing: dash
// (Debian's sh) and busybox ash (Alpine's) print "Terminated" when they reap
// a job a signal ended, and the sleep is ended so after every command that
// ends in time, whose own output would then close on that word.
const script = `#!/bin/sh
# %[4]s COMMAND...: runs COMMAND, stopping it after %[3]s (lowcode-pipeline, internal/steplimit)
%[5]s
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
if wait $nap 2>/dev/null && kill -0 $run 2>/dev/null; then
  printf '%%s\n' "lowcode-pipeline: $what did not finish within %[3]s, the time limit of one step: stopped" >&2
  kill -TERM $run
  exit %[1]d
fi
wait $run
`

// Name is the command that runs its arguments within limit, once Files are
// installed in the container: lowcode-pipeline-within-1h.
func Name(limit time.Duration) string {
	return "lowcode-pipeline-within-" + Format(seconds(limit))
}

// Script is the sh script of Name(limit).
func Script(limit time.Duration) string {
	d := seconds(limit)
	return fmt.Sprintf(script, ExitCode, int64(d/time.Second), Format(d), Name(limit), DescribeCommand)
}

// DescribeCommand is sh that sets what to the script's arguments ("$@", the
// command) as an error names them: cut after describedBytes, saying so.
var DescribeCommand = fmt.Sprintf(`all="$*"
what=$(printf '%%.%ds' "$all")
[ "$what" = "$all" ] || what="$what… (${#all} bytes)"`, describedBytes)

// Within is cmd run with a time limit (Files must be installed): it exits
// with cmd's own status, or, when limit is up first, with ExitCode after a
// line naming the command and the limit on stderr.
func Within(limit time.Duration, cmd []string) []string {
	return append([]string{Name(limit)}, cmd...)
}

// Wait is f run under a deadline of limit, for an engine call the module
// waits on that no exec of its own bounds (a Dockerfile's RUN steps, its
// FROM's pull): the engine stops the work when the call is cancelled
// (tests/engine-facts.md, fact 44). When the deadline ended f, its error is
// the sentence Stopped gives, with "stopped": the engine's own error then
// says only that a context ended. A cancelled ctx is left as f reports it.
func Wait(ctx context.Context, limit time.Duration, what string, f func(context.Context) error) error {
	wctx, cancel := context.WithTimeout(ctx, seconds(limit))
	defer cancel()
	err := f(wctx)
	if err != nil && ctx.Err() == nil && errors.Is(wctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: stopped", Stopped(ExitCode, what, limit))
	}
	return err
}

// Stopped is the error of a command run Within limit that exited with code,
// for an exec whose exit code is read rather than failed on: the sentence
// the script writes when the limit stopped the command (code ExitCode),
// else nil.
func Stopped(code int, what string, limit time.Duration) error {
	if code != ExitCode {
		return nil
	}
	return fmt.Errorf("%s did not finish within %s, the time limit of one step", what, Format(seconds(limit)))
}

// Files are the scripts of the module's limits, by command name, to install
// in Dir of a container whose commands run Within one.
func Files() map[string]string {
	files := map[string]string{}
	for _, limit := range []time.Duration{Project, Tool} {
		files[Name(limit)] = Script(limit)
	}
	return files
}

// Names are files' names in a fixed order: installing them in it keeps a
// container's definition, and so its cache, the same run to run.
func Names(files map[string]string) []string {
	return slices.Sorted(maps.Keys(files))
}

// seconds is limit in whole seconds, at least one.
func seconds(limit time.Duration) time.Duration {
	if limit > Longest-time.Second {
		return Longest / time.Second * time.Second
	}
	return time.Duration(max(int64((limit+time.Second-1)/time.Second), 1)) * time.Second
}

// Longest is the longest limit a wait keeps (about 292 years): a sum of
// limits that would go past it is it.
const Longest = time.Duration(math.MaxInt64)

// Sum is the limit of a wait for steps that run one after the other, each
// within its own: their sum, Longest when it would overflow (a per-entry
// --timeout of a user's times its entries).
func Sum(limits ...time.Duration) time.Duration {
	var total time.Duration
	for _, l := range limits {
		if l <= 0 {
			continue
		}
		if l > Longest-total {
			return Longest
		}
		total += l
	}
	return total
}

// Times is the limit of n steps of limit each, one after the other.
func Times(n int, limit time.Duration) time.Duration {
	if n <= 0 || limit <= 0 {
		return 0
	}
	if limit > Longest/time.Duration(n) {
		return Longest
	}
	return time.Duration(n) * limit
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
