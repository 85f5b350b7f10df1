package snapshotconfig

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// configWith is one entry whose name, outputDir, branch and commit message
// are given, each written as JSON.
func configWith(name, outputDir, branch, message string) string {
	in := withGitSection("https://g.example.com/r.git", branch, message)
	in = strings.Replace(in, `"name":"M"`, `"name":`+jsonString(name), 1)
	return strings.Replace(in, `"outputDir":"o"`, `"outputDir":`+jsonString(outputDir), 1)
}

// A value that summaries and logs print is refused when it holds a control
// character: a terminal acts on ESC and CSI (escape sequences), BS, CR and
// DEL (they rewrite what was printed), BEL. The error names the entry and
// field and shows the value with the character made visible.
func TestAControlCharacterInAPrintedValueIsRefusedAndShownVisibly(t *testing.T) {
	for _, tc := range []struct {
		name, field, value, shown string
	}{
		{"ESC in outputDir", "outputDir", "codeasdata/\x1b[2Jmain", `"codeasdata/\x1b[2Jmain"`},
		{"CSI, the one-character C1 form of ESC [, in outputDir", "outputDir", "codeasdata/\u009b2Jmain", `"codeasdata/\u009b2Jmain"`},
		{"a backspace in outputDir", "outputDir", "codeasdata/main\b\b\b\bprod", `"codeasdata/main\b\b\b\bprod"`},
		{"BEL in outputDir", "outputDir", "codeasdata/\amain", `"codeasdata/\amain"`},
		{"DEL in outputDir", "outputDir", "codeasdata/\x7fmain", `"codeasdata/\x7fmain"`},
		{"a tab in outputDir", "outputDir", "codeasdata/\tmain", `"codeasdata/\tmain"`},
		{"a line feed in outputDir", "outputDir", "codeasdata/\nmain", `"codeasdata/\nmain"`},
		{"NEL, a C1 line break, in outputDir", "outputDir", "codeasdata/\u0085main", `"codeasdata/\u0085main"`},
		{"ESC in the name", "name", "orders\x1b]0;owned\a", `"orders\x1b]0;owned\a"`},
		{"CSI in the name", "name", "orders\u009b31m", `"orders\u009b31m"`},
		{"a carriage return in the name", "name", "orders\rall good", `"orders\rall good"`},
		{"a line feed in the name", "name", "orders\n[1] fake: pushed", `"orders\n[1] fake: pushed"`},
		{"CSI in the branch, which git would take", "branch", "snap\u009b31m", `"snap\u009b31m"`},
		{"ESC in the commit message", "commitMessage", "snapshot\x1b[2J {date}", `"snapshot\x1b[2J {date}"`},
		{"a carriage return in the commit message", "commitMessage", "snapshot\r\n{date}", `"snapshot\r\n{date}"`},
		{"a tab in the commit message", "commitMessage", "snapshot\t{date}", `"snapshot\t{date}"`},
		{"NUL in the commit message", "commitMessage", "snapshot\x00", `"snapshot\x00"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, dir, branch, msg := "orders", "codeasdata/main", "main", "snapshot {date}"
			path := "[0].snapshooter." + tc.field
			switch tc.field {
			case "name":
				name = tc.value
			case "outputDir":
				dir = tc.value
			case "branch":
				branch, path = tc.value, "[0].git.branch"
			case "commitMessage":
				msg, path = tc.value, "[0].git.commitMessage"
			}
			_, err := Parse([]byte(configWith(name, dir, branch, msg)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+": "+tc.shown+": ")
			assert.Contains(t, err.Error(), "control character")
			assert.NotContains(t, err.Error(), tc.value, "the raw value is never printed")
		})
	}
}

// A commit message may have several lines: line feeds alone are kept.
func TestACommitMessageKeepsItsLineFeeds(t *testing.T) {
	entries, err := Parse([]byte(configWith("orders", "codeasdata/main", "main", "snapshot {folder}\n\nTaken at {date} by the scheduled job.\n")))
	require.NoError(t, err)
	assert.Equal(t, "snapshot {folder}\n\nTaken at {date} by the scheduled job.\n", entries[0].Git.CommitMessage)

	_, err = Parse([]byte(configWith("orders", "codeasdata/main", "main", "snapshot\r\n{date}")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line feeds alone are allowed", "the error says what the message may hold")
}

// Printable text stays accepted in each field, whatever its script.
func TestPrintableValuesAreAccepted(t *testing.T) {
	_, err := Parse([]byte(configWith("Commandes – été 日本", "codeasdata/été/日本", "snapshots/été", "instantané {folder} — {date}")))
	assert.NoError(t, err)
}

// refusedOnce parses in and checks that it is refused with one problem, at
// path, whose message says says; it returns the error.
func refusedOnce(t *testing.T, in, path, says string) error {
	t.Helper()
	_, err := Parse([]byte(in))
	var list fielderr.List
	require.ErrorAs(t, err, &list)
	require.Len(t, list, 1, "%v", err)
	assert.Equal(t, path, list[0].Path)
	assert.Contains(t, list[0].Message, says)
	return err
}

// A value of blanks alone is one problem, not two, and said as it is: white
// space, shown escaped (a branch of U+00A0 alone, which git takes, too:
// round-12 probe P12-1, #65).
func TestABlankValueIsOneProblem(t *testing.T) {
	for _, tc := range []struct{ name, in, path, shown string }{
		{"a name of a line feed", configWith("\n", "o", "main", "m"), "[0].snapshooter.name", `"\n"`},
		{"an outputDir of a tab", configWith("M", "\t", "main", "m"), "[0].snapshooter.outputDir", `"\t"`},
		{"a commit message of a carriage return", configWith("M", "o", "main", "\r"), "[0].git.commitMessage", `"\r"`},
		{"a branch of a no-break space", configWith("M", "o", "\u00a0", "m"), "[0].git.branch", `"\u00a0"`},
		{"a branch of a line separator and a next line", configWith("M", "o", "\u2028\u0085", "m"), "[0].git.branch", `"\u2028\u0085"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusedOnce(t, tc.in, tc.path, tc.shown+" is white space alone, which no one sees: write ")
		})
	}
}

// A login in a value the snapshot's report shows (its name, its folder, its
// branch, its commit message) is refused, not shown (round-15 probe F1).
func TestALoginInAShownValueIsRefused(t *testing.T) {
	const login = "https://ci:Pa55wordSecretXY@git.example.com/team/app.git"
	for _, tc := range []struct{ name, in, path string }{
		{"a name", configWith(login, "o", "main", "m"), "[0].snapshooter.name"},
		{"a commit message", configWith("M", "o", "main", "sync "+login), "[0].git.commitMessage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := refusedOnce(t, tc.in, tc.path, "holds a login (user:password@host), which the snapshot's report and log would show")
			assert.NotContains(t, err.Error(), "Pa55word")
		})
	}
	_, err := Parse([]byte(configWith("M", "o", "main", "chore(snapshot): {folder} @ {date} by ci@example.com")))
	assert.NoError(t, err, "a colon before a later @ is no login")
	_, err = Parse([]byte(configWith("M", "o", "release/v1@2", "m")))
	assert.NoError(t, err, "a branch's @ after a / is a name (round-17 note)")
}

// A configuration's words reach the snapshot's fields as they are, and a
// field is printed raw: a bidirectional override or a character drawn as
// nothing is refused in each value a field holds (round-17 probe F3).
func TestAValueAFieldHoldsIsPrintable(t *testing.T) {
	for _, tc := range []struct{ name, in, path string }{
		{"a name with a bidirectional override", configWith("prod\u202egnp.exe", "o", "main", "m"), "[0].snapshooter.name"},
		{"an outputDir with a Hangul filler", configWith("M", "snap\u3164shot", "main", "m"), "[0].snapshooter.outputDir"},
		{"a branch with a bidirectional isolate", configWith("M", "o", "main\u2066x", "m"), "[0].git.branch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusedOnce(t, tc.in, tc.path, "a character that reorders text or that a terminal draws as nothing")
		})
	}
}

// A branch git's name rules take but no checkout can hold (a part longer
// than a file name) is refused up front, saying to shorten it (round-18
// probe F4).
func TestABranchPartLongerThanAFileNameIsRefused(t *testing.T) {
	_, err := Parse([]byte(configWith("M", "o", "snapshots/"+strings.Repeat("q", 251), "m")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "[0].git.branch: ")
	assert.Contains(t, err.Error(), "a part of it is 251 bytes; git keeps a branch as a file, and a file name holds at most 250 with git's .lock: shorten it")
	_, err = Parse([]byte(configWith("M", "o", "snapshots/"+strings.Repeat("q", 250), "m")))
	assert.NoError(t, err)
}
