package steplimit

import (
	"cmp"
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

// run runs Within's command with the machine's sh (dash on Debian, as in
// node:24), giving up after a minute so a broken watchdog fails the test
// instead of hanging it. As in the engine, where the exec's init signals the
// process group when the command exits, whatever is left in the group is
// stopped afterwards; Wait does not wait for it more than a second.
func run(t *testing.T, limit time.Duration, cmd ...string) (code int, stderr string, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := Within(limit, cmd)
	require.Equal(t, "sh", args[0])
	args = append(append([]string{}, shell...), args[1:]...)
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

// shell is the sh the tests run: the machine's, or busybox's (Alpine's sh,
// where the module's tools run) with LOWCODE_PIPELINE_TEST_SH="busybox sh".
var shell = strings.Fields(cmp.Or(os.Getenv("LOWCODE_PIPELINE_TEST_SH"), "sh"))

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
			code, stderr, took := run(t, time.Second, tc.cmd...)
			assert.Equal(t, ExitCode, code)
			assert.Contains(t, stderr, "lowcode-pipeline: "+tc.want+" did not finish within 1s, the time limit of one step: stopped")
			assert.NotContains(t, stderr, "ENDED", "the command was stopped")
			assert.Less(t, took, 10*time.Second, "stopped at its limit, not when it ended")
		})
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
			code, stderr, took := run(t, time.Hour, tc.cmd...)
			assert.Equal(t, tc.wantCode, code)
			assert.NotContains(t, stderr, "did not finish")
			// the hour's watchdog must not outlive the command: the run would
			// then wait for it (its stderr is the test's pipe)
			assert.Less(t, took, 10*time.Second)
		})
	}
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "a b|$HOME|'q'|", string(got))
}

func TestWithinNamesALongCommandCutShort(t *testing.T) {
	long := strings.Repeat("x", 500)
	args := Within(time.Minute, []string{"echo", long})
	assert.Equal(t, "1m", args[3], "the limit as a person writes it")
	assert.Less(t, len(args[4]), 160, "the command as named in the error is cut")
	assert.Equal(t, []string{"echo", long}, args[5:], "the command itself is whole")
	args = WithinAs(time.Minute, "sign "+long, []string{"true"})
	assert.Less(t, len(args[4]), 160, "a name given is cut too")
}

func TestFormat(t *testing.T) {
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
	args := Within(time.Hour, []string{"true"})
	for b.Loop() {
		if err := exec.Command(args[0], args[1:]...).Run(); err != nil {
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
