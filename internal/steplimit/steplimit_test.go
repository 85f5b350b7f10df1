package steplimit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run runs Within's command with sh, one of shells, giving up after a
// minute so a broken watchdog fails the test instead of hanging it. As in the
// engine, where the exec's init signals the process group when the command
// exits, whatever is left in the group is stopped afterwards; Wait does not
// wait for it more than a second.
func run(t *testing.T, sh []string, limit time.Duration, cmd ...string) (code int, stderr string, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := Within(limit, cmd)
	require.Equal(t, Name(limit), args[0])
	// the script as a file, run by the sh under test (its #! line says /bin/sh)
	file := filepath.Join(t.TempDir(), args[0])
	require.NoError(t, os.WriteFile(file, []byte(Script(limit)), 0o755))
	args = append(append(append([]string{}, sh...), file), args[1:]...)
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	var errOut strings.Builder
	c.Stderr = &errOut
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.WaitDelay = time.Second
	start := time.Now()
	require.NoError(t, c.Start())
	t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) })
	err := c.Wait()
	took = time.Since(start)
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	require.NoError(t, ctx.Err(), "the run outlived the test's own minute")
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		return exit.ExitCode(), errOut.String(), took
	}
	return 0, errOut.String(), took
}

// shells are the sh the tests run the script with: the machine's (dash on
// Debian, as in node:24), bash (/bin/sh of Red Hat's images) and busybox's
// (Alpine's sh, where the module's tools run), each one found on the PATH
// (.ci/run installs busybox); LOWCODE_PIPELINE_TEST_SH="busybox sh" runs that
// one only.
var shells = func() [][]string {
	if only := os.Getenv("LOWCODE_PIPELINE_TEST_SH"); only != "" {
		return [][]string{strings.Fields(only)}
	}
	var found [][]string
	for _, sh := range [][]string{{"sh"}, {"bash"}, {"busybox", "sh"}} {
		if _, err := exec.LookPath(sh[0]); err == nil {
			found = append(found, sh)
		}
	}
	return found
}()

// firstShell is the first of shells, for a test of what the script says
// rather than of a shell.
func firstShell(t *testing.T) []string {
	t.Helper()
	require.NotEmpty(t, shells, "no sh on the PATH")
	return shells[0]
}

// eachShell runs f for each of shells, as a subtest named for it.
func eachShell(t *testing.T, f func(t *testing.T, sh []string)) {
	t.Helper()
	require.NotEmpty(t, shells, "no sh on the PATH")
	for _, sh := range shells {
		t.Run(strings.Join(sh, " "), func(t *testing.T) { f(t, sh) })
	}
}

func TestWithinStopsACommandAtItsLimitAndSaysSo(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  []string
		want string
	}{
		{"a command alone", []string{"sleep", "30"}, "sleep 30"},
		{"a command with children of its own, as npm runs a script", []string{"sh", "-c", `sleep 30; echo E""NDED >&2`}, `sh -c sleep 30; echo E""NDED >&2`},
		{"a command named as it is, backslashes and all", []string{"sh", "-c", `sleep 30 # \n \c %s`}, `sh -c sleep 30 # \n \c %s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachShell(t, func(t *testing.T, sh []string) {
				code, stderr, took := run(t, sh, time.Second, tc.cmd...)
				assert.Equal(t, ExitCode, code)
				assert.Contains(t, stderr, "lowcode-pipeline: "+tc.want+" did not finish within 1s, the time limit of one step: stopped")
				assert.NotContains(t, stderr, "ENDED", "the command was stopped")
				assert.Less(t, took, 10*time.Second, "stopped at its limit, not when it ended")
			})
		})
	}
}

// Stopped says, of an exit code read, what the script says when it stops a
// command: the same sentence.
func TestStoppedIsWhatTheScriptSays(t *testing.T) {
	code, stderr, _ := run(t, firstShell(t), time.Second, "sleep", "30")
	err := Stopped(code, "sleep 30", time.Second)
	require.Error(t, err)
	assert.Contains(t, stderr, "lowcode-pipeline: "+err.Error()+": stopped")
	for _, other := range []int{0, 1, 2, 125} {
		assert.NoError(t, Stopped(other, "sleep 30", time.Second), "exit code %d", other)
	}
}

func TestWithinPassesACommandThatEndsInTimeThrough(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		name     string
		cmd      []string
		wantCode int
	}{
		{"success exits 0", []string{"true"}, 0},
		{"a failure keeps its own exit code", []string{"sh", "-c", "exit 3"}, 3},
		{"the command's own arguments arrive as given", []string{"sh", "-c", `printf '%s|' "$@" > "$0"`, out, "a b", "$HOME", "'q'"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachShell(t, func(t *testing.T, sh []string) {
				code, stderr, took := run(t, sh, time.Hour, tc.cmd...)
				assert.Equal(t, tc.wantCode, code)
				assert.NotContains(t, stderr, "did not finish")
				// the hour's watchdog must not outlive the command: the run would
				// then wait for it (its stderr is the test's pipe)
				assert.Less(t, took, 10*time.Second)
			})
		})
	}
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "a b|$HOME|'q'|", string(got))
}

// A command that ends in time has its stderr passed on as it wrote it,
// nothing added: a step's log ends with the command's own last line, not
// with a word of the shell's about the watchdog it stopped.
func TestWithinAddsNothingToACommandsStderr(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cmd        []string
		wantCode   int
		wantStderr string
	}{
		{"success", []string{"sh", "-c", "echo done >&2"}, 0, "done\n"},
		{"a failure", []string{"sh", "-c", "echo failed >&2; exit 3"}, 3, "failed\n"},
		{"a command that writes nothing", []string{"true"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachShell(t, func(t *testing.T, sh []string) {
				// a few runs: the shell reaps the stopped sleep at once or a
				// moment later
				for range 5 {
					code, stderr, _ := run(t, sh, time.Hour, tc.cmd...)
					assert.Equal(t, tc.wantCode, code)
					assert.Equal(t, tc.wantStderr, stderr)
				}
			})
		})
	}
}

func TestWithinNamesALongCommandCutShort(t *testing.T) {
	long := strings.Repeat("x", 500)
	code, stderr, _ := run(t, firstShell(t), time.Second, "sh", "-c", "sleep 30", long)
	assert.Equal(t, ExitCode, code)
	assert.Contains(t, stderr, "lowcode-pipeline: sh -c sleep 30 xxx")
	assert.Contains(t, stderr, "… (515 bytes) did not finish within 1s")
	assert.Less(t, len(stderr), 250, "the command as named in the error is cut")
}

func TestTheScriptsAreInstalledUnderNamesThatSayTheirLimit(t *testing.T) {
	files := Files()
	assert.Equal(t, []string{"lowcode-pipeline-within-15m", "lowcode-pipeline-within-1h"}, Names(files))
	assert.Equal(t, []string{"lowcode-pipeline-within-1h", "npm", "ci"}, Within(Project, []string{"npm", "ci"}))
	for name, text := range files {
		assert.True(t, strings.HasPrefix(text, "#!/bin/sh\n# "+name+" COMMAND...:"), name)
	}
	// installed on the PATH, a script runs by its name, as the engine's init starts it
	bin := t.TempDir()
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755))
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	err := exec.Command(Name(Tool), "sh", "-c", "exit 5").Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 5, exit.ExitCode())
}

func TestNameAndFormat(t *testing.T) {
	assert.Equal(t, "lowcode-pipeline-within-2s", Name(1500*time.Millisecond), "whole seconds, rounded up")
	assert.Equal(t, "lowcode-pipeline-within-1s", Name(0), "at least one")
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{time.Hour, "1h"},
		{15 * time.Minute, "15m"},
		{90 * time.Second, "1m30s"},
		{time.Hour + time.Second, "1h0m1s"},
		{time.Second, "1s"},
	} {
		assert.Equal(t, tc.want, Format(tc.in), tc.in.String())
	}
}

// What the watchdog costs an exec: a sh, a sleep and a subshell started
// and stopped around the command (compare BenchmarkBareCommand).
func BenchmarkWithin(b *testing.B) {
	file := filepath.Join(b.TempDir(), Name(Project))
	if err := os.WriteFile(file, []byte(Script(Project)), 0o755); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := exec.Command(file, "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBareCommand(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("sh", "-c", `"$@"`, "sh", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// Wait ends a call at its limit with the sentence the script writes, and
// leaves every other outcome as the call gave it.
func TestWaitNamesTheLimitThatEndedACall(t *testing.T) {
	blocked := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	failed := errors.New("exit code: 1")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		limit time.Duration
		f     func(context.Context) error
		want  string // "" no error
		is    error
	}{
		{"a call past its limit: stopped, the limit named", context.Background(), time.Second, blocked,
			"the frontend image's build (docker/frontend.Dockerfile) did not finish within 1s, the time limit of one step: stopped", nil},
		{"a call that ends in time", context.Background(), time.Hour, func(context.Context) error { return nil }, "", nil},
		{"a failure in time keeps its own error", context.Background(), time.Hour, func(context.Context) error { return failed }, "exit code: 1", failed},
		{"a run cancelled before the limit is no stop of the step's", cancelled, time.Hour, blocked, "context canceled", context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := Wait(tc.ctx, tc.limit, "the frontend image's build (docker/frontend.Dockerfile)", tc.f)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tc.want)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			assert.Less(t, time.Since(start), tc.limit+5*time.Second)
		})
	}
}

// A limit under a second waits a whole second, as the script's sleep does,
// and says so: the sentence never names a limit it did not keep.
func TestWaitKeepsTheLimitItNames(t *testing.T) {
	start := time.Now()
	err := Wait(context.Background(), 10*time.Millisecond, "x", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	require.EqualError(t, err, "x did not finish within 1s, the time limit of one step: stopped")
	assert.GreaterOrEqual(t, time.Since(start), time.Second)
}

// A wait for steps one after the other takes their limits' sum, and a sum
// past what Go can keep is the longest it can: never a negative deadline,
// which would stop the step before it starts.
func TestSumAndTimesNeverOverflow(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"the pull and a tool's step", Sum(Pull, Tool), 30 * time.Minute},
		{"nothing", Sum(), 0},
		{"a limit of none counts nothing", Sum(Tool, 0, -time.Hour), Tool},
		{"past what Go keeps", Sum(Pull, Longest-time.Minute), Longest},
		{"five entries of 10m", Times(5, 10*time.Minute), 50 * time.Minute},
		{"no entry", Times(0, time.Hour), 0},
		{"a user's 100000h times 200 entries", Times(200, 100000*time.Hour), Longest},
		{"its sum with the pull", Sum(Pull, Tool, Times(200, 100000*time.Hour)), Longest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.got)
		})
	}
}

// The longest limit still waits (a deadline in the future), and says the
// limit it keeps.
func TestWaitTakesTheLongestLimit(t *testing.T) {
	err := Wait(context.Background(), Longest, "x", func(ctx context.Context) error {
		deadline, ok := ctx.Deadline()
		require.True(t, ok)
		assert.Greater(t, time.Until(deadline), 100*365*24*time.Hour)
		return nil
	})
	require.NoError(t, err)
	assert.EqualError(t, Stopped(ExitCode, "x", Longest), "x did not finish within "+Format(seconds(Longest))+", the time limit of one step")
}

func FuzzSumIsNeverBelowAPart(f *testing.F) {
	f.Add(int64(Pull), int64(Tool), 3, int64(10*time.Minute))
	f.Add(int64(Longest), int64(1), 1<<30, int64(Longest))
	f.Fuzz(func(t *testing.T, a, b int64, n int, each int64) {
		got := Sum(time.Duration(a), time.Duration(b), Times(n, time.Duration(each)))
		for _, part := range []time.Duration{time.Duration(a), time.Duration(b), Times(n, time.Duration(each))} {
			if part > 0 {
				assert.GreaterOrEqual(t, got, part)
			}
		}
		assert.GreaterOrEqual(t, got, time.Duration(0))
	})
}

// The standard tool for a command's time limit, timeout, is in the images
// the module runs commands in (coreutils' in Debian's, busybox's in
// Alpine's), but it cannot stand in for the script: the two say a stop
// differently (coreutils exits 124, busybox is itself the command stopped:
// 143, what any command ended by a TERM exits with, and its sh adds
// "Terminated"), and neither names the step that hung, which is what a
// person reading a CI log needs. This test holds each timeout found on the
// PATH to that (.ci/run installs busybox); should they come to agree, the
// script can go.
func TestTimeoutCannotStandInForTheScript(t *testing.T) {
	tools := map[string][]string{"coreutils": {"timeout"}, "busybox": {"busybox", "timeout"}}
	codes := map[string]int{}
	for name, tool := range tools {
		if _, err := exec.LookPath(tool[0]); err != nil {
			continue
		}
		if name == "coreutils" {
			if out, _ := exec.Command("timeout", "--version").Output(); !strings.Contains(string(out), "coreutils") {
				continue
			}
		}
		c := exec.Command(tool[0], append(tool[1:], "1", "sleep", "30")...)
		var errOut strings.Builder
		c.Stderr = &errOut
		err := c.Run()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, name)
		codes[name] = exit.ExitCode()
		if exit.ExitCode() == -1 { // ended by a signal itself: what its sh shows as 128+TERM
			codes[name] = 128 + int(syscall.SIGTERM)
		}
		assert.NotContains(t, errOut.String(), "sleep 30", "%s's timeout names the command it stopped", name)
	}
	if len(codes) < 2 {
		t.Skip("coreutils' and busybox's timeout are not both on the PATH")
	}
	assert.Equal(t, ExitCode, codes["coreutils"])
	assert.NotEqual(t, codes["coreutils"], codes["busybox"], "coreutils' and busybox's timeout say a stop the same way")
	assert.Equal(t, 128+int(syscall.SIGTERM), codes["busybox"], "busybox's timeout's stop is told from a command's own TERM")
}
