package durationflag

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
		err   string
	}{
		{"500ms", 500 * time.Millisecond, ""},
		{"2m", 2 * time.Minute, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"", 0, `--timeout "": use a positive Go duration such as 500ms, 10s or 2m`},
		{"ten", 0, `--timeout "ten": use a positive Go duration`},
		{"10", 0, `--timeout "10": use a positive Go duration`}, // a unit is required
		{"0s", 0, `--timeout "0s": use a positive Go duration`},
		{"-1s", 0, `--timeout "-1s": use a positive Go duration`},
		{strings.Repeat("9", 500), 0, `(500 bytes): use a positive Go duration`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			got, err := Parse("--timeout", tc.value)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Less(t, len(err.Error()), 200, "the echoed value is cut")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestOptionalLeavesEmptyToTheDefault(t *testing.T) {
	d, err := Optional("--connect-timeout", "")
	require.NoError(t, err)
	assert.Zero(t, d)
	_, err = Optional("--connect-timeout", "soon")
	assert.EqualError(t, err, `--connect-timeout "soon": use a positive Go duration such as 500ms, 10s or 2m`)
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"10s", "", "-1s", "1.5h", "0", "9223372036854775807ns", "1e3s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		d, err := Parse("--timeout", value)
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), "--timeout "), "the error names the flag")
			// The value is cut at fielderr.MaxValue bytes, each shown as at
			// most 4 characters (\xc0) by %q.
			assert.Less(t, len(err.Error()), 4*fielderr.MaxValue+120, "the echoed value is cut")
			return
		}
		assert.Positive(t, d)
		want, perr := time.ParseDuration(value)
		require.NoError(t, perr)
		assert.Equal(t, want, d)
	})
}
