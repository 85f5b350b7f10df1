package gitref

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One row per rule of git-check-ref-format(1) ("git imposes the following
// rules on how references are named", numbered as there) and of its
// --branch option, each with a name that breaks it and the words saying so.
func TestCheckBranchFollowsGitsRules(t *testing.T) {
	for _, tc := range []struct {
		rule, name, why string
	}{
		{"1: no component may begin with a dot", "snapshots/.main", `its part ".main" starts with "."`},
		{"1: nor the name's first one", ".main", `its part ".main" starts with "."`},
		{"1: no component may end with .lock", "release.lock/1", `its part "release.lock" ends with ".lock"`},
		{"1: nor a middle one", "a/b.lock/c", `its part "b.lock" ends with ".lock"`},
		{"1: nor the last one", "main.lock", `its part "main.lock" ends with ".lock"`},
		{"3: no two consecutive dots", "feature..x", `it holds ".."`},
		{"4: no ASCII control character", "a\x1bb", `it holds "\x1b"`},
		{"4: nor DEL", "a\x7fb", `it holds "\x7f"`},
		{"4: nor a space", "my branch", `it holds " "`},
		{"4: nor a tilde", "a~1", `it holds "~"`},
		{"4: nor a caret", "a^2", `it holds "^"`},
		{"4: nor a colon", "a:b", `it holds ":"`},
		{"5: no question mark", "a?", `it holds "?"`},
		{"5: nor an asterisk", "snap/*", `it holds "*"`},
		{"5: nor an open bracket", "a[1]", `it holds "["`},
		{"6: no slash at the start", "/main", "a folder of it is empty"},
		{"6: nor at the end", "main/", "a folder of it is empty"},
		{"6: nor two in a row", "a//b", "a folder of it is empty"},
		{"7: no dot at the end", "main.", `it ends with "."`},
		{"8: no @{", "main@{1}", `it holds "@{"`},
		{"9: not @ alone (git's --branch lets it through: see CheckBranch)", "@", `"@" alone is git's shorthand for HEAD`},
		{"10: no backslash", `a\b`, `it holds "\\"`},
		{"--branch: no dash at the start", "-f", `it starts with "-"`},
		{"--branch: not HEAD", "HEAD", "HEAD names the commit checked out"},
		{"refs/heads/<empty> has an empty component", "", "it is empty"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			err := CheckBranch(tc.name)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.why)
			assert.Contains(t, err.Error(), Allowed, "the error says what is allowed")
		})
	}
}

func TestCheckBranchAcceptsWhatGitAccepts(t *testing.T) {
	for _, tc := range []struct{ what, name string }{
		{"a plain name", "main"},
		{"folders", "snapshots/prod/main"},
		{"a dash inside, and after a slash", "a/-b"},
		{"a dot inside a component", "v1.2/x.y"},
		{"lock without its dot", "lock/x-lock"},
		{"an @ not followed by {", "a@b"},
		{"a lone {", "{"},
		{"HEAD as a folder or in a longer name", "HEAD/x"},
		{"heads/HEAD", "heads/HEAD"},
		{"non-ASCII letters: git reads bytes from 0x80 as any other", "héllo/日本"},
		{"a name that looks like a full ref: refs/heads/refs/heads/x", "refs/heads/x"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			assert.NoError(t, CheckBranch(tc.name))
		})
	}
}

// tricky are names at the edge of each rule, and the pieces generated
// names are made of.
var tricky = []string{
	"", "a", "main", "HEAD", "head", "@", "@@", "-", "-a", "a-", ".", "..", "...", "/", "//", "a/", "/a",
	"a.", ".a", "a..b", "a/.b", "a./b", "a.lock", ".lock", "lock", "a/b.lock/c", "a.lock/b", "a.locked",
	"a@{b", "@{", "{", "}", "@}", "a@b", "@/a", "a/@", "HEAD/a", "a/HEAD", "refs/heads/a", "*", "a*", "?",
	"[", "]", "\\", "~", "^", ":", " ", "\t", "\x01", "\x1b[31m", "\x7f", "\u009b", "é", "\xff", "日本",
	"a b", "a\nb", "a/-b", "--branch", "@{-1}", "a.lock.", "a..", "a/./b", "a/../b",
}

// pieces are joined in pairs to make more names.
var pieces = []string{"a", ".", "..", "/", "@", "{", "lock", ".lock", "-", "HEAD", "*", " ", "\x1b", "\u009b", "é", "~", ":", "\\", "\x7f", "@{"}

// gitAccepts is the verdict of `git check-ref-format --branch name`, run
// in dir, a folder outside any repository (inside one, git would first
// expand @{-1} and the like), as the rules' reference.
func gitAccepts(t testing.TB, dir, name string) bool {
	t.Helper()
	cmd := exec.Command("git", "check-ref-format", "--branch", name)
	cmd.Dir = dir
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_DIR=") }),
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(dir), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true
	// git dies quoting the name, its message cut at its buffer's length: a
	// long name leaves "is not a valid branch name" out of it
	case errors.As(err, &exit) && exit.ExitCode() == 128 && strings.HasPrefix(string(out), "fatal: '"):
		return false
	}
	require.NoError(t, err, "git check-ref-format --branch %q: %s", name, out)
	return false
}

// want is the verdict CheckBranch must give: git's, but for "@" (see
// CheckBranch), and for a NUL, which no argument can carry to git.
func want(t testing.TB, dir, name string) bool {
	if name == "@" || strings.ContainsRune(name, 0) {
		return false
	}
	return gitAccepts(t, dir, name)
}

// corpus is the fuzz corpus kept in testdata: the inputs fuzzing found
// worth keeping.
func corpus(t *testing.T) []string {
	files, err := filepath.Glob("testdata/fuzz/FuzzCheckBranch/*")
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "string("); ok {
				name, err := strconv.Unquote(strings.TrimSuffix(v, ")"))
				require.NoError(t, err, f)
				names = append(names, name)
			}
		}
	}
	require.NotEmpty(t, names, "the fuzz corpus is read")
	return names
}

// CheckBranch's verdict is git's own for every tricky name, every pair of
// pieces (with a letter around them, as a name rarely starts or ends with
// one of them), and every name of the fuzz corpus.
func TestCheckBranchAgreesWithGit(t *testing.T) {
	_, err := exec.LookPath("git")
	require.NoError(t, err, "the reference is the git binary")
	names := append(append([]string{}, tricky...), corpus(t)...)
	for _, a := range pieces {
		for _, b := range pieces {
			names = append(names, a+b, "x"+a+b+"y", "x/"+a+b, a+b+"/y")
		}
	}
	dir, accepted := t.TempDir(), 0
	for _, name := range names {
		ok := CheckBranch(name) == nil
		if !assert.Equal(t, want(t, dir, name), ok, "%q: git and CheckBranch disagree", name) {
			continue
		}
		if ok {
			accepted++
		}
	}
	assert.Greater(t, accepted, 100, "names on both sides of the rules were compared")
	assert.Less(t, accepted, len(names)-100)
}

// For any name, CheckBranch says what git says (git runs in about a
// millisecond: the fuzzer compares with it at every input).
func FuzzCheckBranch(f *testing.F) {
	for _, name := range tricky {
		f.Add(name)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, name string) {
		err := CheckBranch(name)
		assert.Equal(t, want(t, dir, name), err == nil, "%q: git and CheckBranch disagree (%v)", name, err)
	})
}
