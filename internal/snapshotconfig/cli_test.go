package snapshotconfig

import (
	"fmt"
	"math"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/testsupport/gittest"
)

const withGit = `[
  {"snapshooter": {"name": "orders", "rootTags": ["00000000000000000001"], "outputDir": "codeasdata/orders"},
   "git": {"repo": "https://x-token-auth:ghp_SECRET42@git.example.com/team/code.git", "branch": "main", "commitMessage": "snapshot {folder}"}},
  {"snapshooter": {"name": "local", "rootTags": ["00000000000000000002"], "exclude": ["00000000000000000003"], "outputDir": "codeasdata/local"}}
]`

func TestForCLIRemovesEveryGitSectionByDefault(t *testing.T) {
	entries, err := Parse([]byte(withGit))
	require.NoError(t, err)
	out, err := ForCLI(entries, false, "", "")
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"snapshooter": {"name": "orders", "rootTags": ["00000000000000000001"], "outputDir": "codeasdata/orders"}},
		{"snapshooter": {"name": "local", "rootTags": ["00000000000000000002"], "exclude": ["00000000000000000003"], "outputDir": "codeasdata/local"}}]`, string(out))
	assert.NotContains(t, string(out), "ghp_SECRET42")
	again, err := Parse(out)
	require.NoError(t, err, "the CLI gets a valid configuration")
	assert.Len(t, again, 2)
}

func TestForCLIWithPlatformGitKeepsGitAndPutsAGivenTokenInTheURL(t *testing.T) {
	entries, err := Parse([]byte(withGit))
	require.NoError(t, err)
	out, err := ForCLI(entries, true, "", "")
	require.NoError(t, err)
	assert.Contains(t, string(out), `"repo": "https://x-token-auth:ghp_SECRET42@git.example.com/team/code.git"`, "the CLI pushes with the file's own token")

	out, err = ForCLI(entries, true, "oauth2", "glpat-given")
	require.NoError(t, err)
	assert.Contains(t, string(out), `"repo": "https://oauth2:glpat-given@git.example.com/team/code.git"`)
	assert.NotContains(t, string(out), `"git": null`)
}

func TestScrubCredentialsLeavesEveryOtherByte(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a token alone", `{"repo":"https://ghp_abc@git.example.com/r.git"}`, `{"repo":"https://git.example.com/r.git"}`},
		{"user and token", `{"repo": "https://x-token-auth:T0K@bitbucket.org/t/r.git",  "branch":"main"}`, `{"repo": "https://bitbucket.org/t/r.git",  "branch":"main"}`},
		{"escaped slashes: the literal is written anew", `{"repo":"https:\/\/tok@git.example.com\/r.git"}`, `{"repo":"https://git.example.com/r.git"}`},
		{"no credentials", withGit[:40], withGit[:40]},
		{"an escaped @, as the parser reads it", `{"repo":"https://tok\u0040git.example.com/r.git"}`, `{"repo":"https://git.example.com/r.git"}`},
		{"an escaped scheme", `{"repo":"\u0068ttps://tok@git.example.com/r.git"}`, `{"repo":"https://git.example.com/r.git"}`},
		{"a raw @ in the password: all of it goes", `{"repo":"https://user:p@ss@git.example.com/r.git"}`, `{"repo":"https://git.example.com/r.git"}`},
		{"a query", `{"repo":"https://git.example.com/r.git?private_token=glpat-x"}`, `{"repo":"https://git.example.com/r.git"}`},
		{"an @ past the host: not shown at all", `{"repo":"https://user:12/SECRET@host/repo"}`, `{"repo":"<address not shown: not a URL>"}`},
		{"a plain address stays byte for byte", `{"repo":"https:\/\/git.example.com\/r.git"}`, `{"repo":"https:\/\/git.example.com\/r.git"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(ScrubCredentials([]byte(tc.in))))
		})
	}
	assert.NotContains(t, string(ScrubCredentials([]byte(withGit))), "ghp_SECRET42")
}

func FuzzScrubCredentials(f *testing.F) {
	f.Add(withGit, "ghp_SECRET42")
	f.Add(`{"repo":"https://a:b@c"}`, "b")
	// An open literal whose query the appended quote closes: the text's part
	// of the output is shorter than the text scrubbed alone (CI's fuzzing
	// found this; the property once sliced the output at the latter's length).
	f.Add(`{"repo":"https://git.example.com/r.git?private_token=glpat-0123456789abcdefghij0123456789abcdefghij`, "tok3n")
	f.Fuzz(func(t *testing.T, text, token string) {
		if len(token) < 4 {
			return
		}
		// A token placed as user-info of an https address after any text is
		// gone afterwards, however the text ends (an open literal, a
		// backslash, half an address). Where the text itself holds the token
		// nothing is claimed: the text is not an address.
		doc := text + ` "https://` + token + `@git.example.com/r.git"`
		out := string(ScrubCredentials([]byte(doc)))
		if validUserinfo(token) && !strings.Contains(text, token) {
			assert.NotContains(t, out, token+"@")
		}
	})
}

func validUserinfo(s string) bool {
	for _, r := range s {
		if r == '/' || r == '\\' || r == '"' || r == '@' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v' {
			return false
		}
	}
	return true
}

func TestCollectCommandCopiesWhatTheCLIWroteAndCounts(t *testing.T) {
	entries, err := Parse([]byte(withGit))
	require.NoError(t, err)
	dir, dest := t.TempDir(), filepath.Join(t.TempDir(), "snapshots")
	gittest.Write(t, filepath.Join(dir, "codeasdata/orders/00000000000000000001/a.patch.json"), "{}")
	require.NoError(t, exec.Command("mkdir", "-p", filepath.Join(dir, "codeasdata/local/empty")).Run())

	cmd := CollectCommand(entries, dest)
	run := exec.Command(cmd[0], cmd[1:]...)
	run.Dir = dir
	out, err := run.Output()
	require.NoError(t, err, "the real shell runs it")
	assert.Equal(t, "0\t1\n1\t0\n", string(out))
	assert.FileExists(t, filepath.Join(Collected(dest, 0), "00000000000000000001/a.patch.json"), "entry 0 copied to a fresh folder")
	assert.DirExists(t, Collected(dest, 1), "an empty outputDir still gets its folder")

	counts, err := CheckWritten(entries, string(out), false)
	require.Error(t, err)
	assert.Equal(t, []int{1, 0}, counts)
	assert.Contains(t, err.Error(), `[1] "local": the platform CLI wrote no file into "codeasdata/local"`)
	assert.NotContains(t, err.Error(), "orders")
	_, err = CheckWritten(entries, string(out), true)
	assert.NoError(t, err, "--allow-empty")
	_, err = CheckWritten(entries, "", false)
	assert.Error(t, err, "no output: nothing was written")
}

func TestPushFlagsAreChecked(t *testing.T) {
	good := PushFlags{PushAttempts: 5, MaxDeleteRatio: 0.5, Timeout: "10m", Author: DefaultAuthor}
	checked, err := good.Check()
	require.NoError(t, err)
	assert.Equal(t, "lowcode-pipeline", checked.AuthorName)
	assert.Equal(t, "lowcode-pipeline@users.noreply.invalid", checked.AuthorEmail)
	assert.Equal(t, 10*time.Minute, checked.Timeout)
	for _, tc := range []struct {
		name string
		edit func(*PushFlags)
		want string
	}{
		{"no attempt", func(f *PushFlags) { f.PushAttempts = 0 }, "--push-attempts 0: must be at least 1 (it counts the first push)"},
		{"a ratio of 0", func(f *PushFlags) { f.MaxDeleteRatio = 0 }, "--max-delete-ratio 0: must be above 0 and at most 1"},
		{"a ratio above 1", func(f *PushFlags) { f.MaxDeleteRatio = 1.5 }, "--max-delete-ratio 1.5"},
		{"a bad time limit", func(f *PushFlags) { f.Timeout = "soon" }, `--timeout "soon": use a positive Go duration`},
		{"an author without an e-mail", func(f *PushFlags) { f.Author = "Release Bot" }, `--author "Release Bot": want "Name <email>"`},
		{"an author with a line feed", func(f *PushFlags) { f.Author = "Bot\nEvil <bot@example.com>" }, `--author "Bot\nEvil <bot@example.com>"`},
		{"a user name with the basic auth separator", func(f *PushFlags) { f.GitUsername = "ci:bot" }, `--git-username "ci:bot": a user name of up to 256 bytes without ':'`},
		{"a user name with a line feed", func(f *PushFlags) { f.GitUsername = "oauth2\n" }, `--git-username "oauth2\n"`},
		{"a user name with a space", func(f *PushFlags) { f.GitUsername = "release bot" }, `--git-username "release bot"`},
		{"a user name over 256 bytes", func(f *PushFlags) { f.GitUsername = strings.Repeat("u", 257) }, `(257 bytes): a user name of up to 256 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := good
			tc.edit(&f)
			_, err := f.Check()
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestGitUsernamesHostsUseAreAccepted(t *testing.T) {
	for _, user := range []string{"", "x-access-token", "oauth2", "x-token-auth", "ci-bot@example.com", "Ünïcode", strings.Repeat("u", 256)} {
		f := PushFlags{PushAttempts: 1, MaxDeleteRatio: 1, Timeout: "1m", Author: DefaultAuthor, GitUsername: user}
		_, err := f.Check()
		assert.NoError(t, err, user)
	}
}

func TestConfigPathIsAFileOrFolderInsideTheProject(t *testing.T) {
	for in, want := range map[string]string{DefaultPath: DefaultPath, "config.json": "config.json", "./res/x.json": "res/x.json", "res/snapshots/": "res/snapshots",
		"res//staging/./x.json": "res/staging/x.json", "..hidden/x.json": "..hidden/x.json", "a..b": "a..b", "res/../x.json": "x.json"} {
		got, err := ConfigPath(in)
		assert.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", ".", "..", "./", "../other/res/snapshot-config.json", "/etc/snapshot-config.json",
		"res/../../x.json", "res\\x.json", "res/x\n.json"} {
		_, err := ConfigPath(bad)
		assert.ErrorContains(t, err, "--config "+fielderr.Quote(bad)+": a file, or a folder of JSON files, inside the project", bad)
	}
}

func FuzzConfigPath(f *testing.F) {
	for _, s := range []string{DefaultPath, "../x", "a/./b", "/x", "./a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		clean, err := ConfigPath(p)
		if err != nil {
			assert.Less(t, len(err.Error()), 400, "the value is cut in the error")
			return
		}
		// what is accepted names a file below the project's root, the short way
		joined := path.Join("/app", clean)
		assert.Equal(t, "/app/"+clean, joined, "inside the project, written the short way")
		assert.Equal(t, path.Join("/app", p), joined, "the same file as asked")
		again, err := ConfigPath(clean)
		assert.NoError(t, err)
		assert.Equal(t, clean, again)
	})
}

func FuzzParseAuthor(f *testing.F) {
	f.Add(DefaultAuthor)
	f.Add("a <b@c>")
	f.Add("<x@y>")
	f.Fuzz(func(t *testing.T, s string) {
		name, email, err := ParseAuthor(s)
		if err != nil {
			assert.Less(t, len(err.Error()), 1024, "the error stays small: the value is cut")
			return
		}
		assert.NotEmpty(t, name)
		assert.Contains(t, email, "@")
		assert.NotContains(t, name+email, "\n", "no line feed reaches a commit header")
		assert.NotContains(t, name+email, "<")
	})
}

func TestOutputDirsCannotHideFromGitOrTheTerminal(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"codeasdata/a\x00b", "holds the control character U+0000"},
		{"codeasdata/a\nb", "holds the control character U+000A"},
		{"codeasdata/a\x1b[2Jb", "holds the control character U+001B"},
		{"codeasdata/a\u009bb", "holds the control character U+009B"},
		{"code/.GIT/objects", "must not be inside .git, in any spelling"},
		{".Git", "must not be inside .git"},
		{".g\u200cit/hooks", "holds U+200C, a character that reorders text or that a terminal draws as nothing"},
		{"\uff0egit/hooks", "must not be inside .git"},
		{".gıt/hooks", "must not be inside .git"},
		{"GIT~1/hooks", "must not be inside .git"},
		{"git~12", "must not be inside .git"},
		{".git./hooks", "must not be inside .git"},
		{".git /hooks", "must not be inside .git"},
		{"\ufeff.git", "holds U+FEFF"},
		// NTFS streams, as git's core.protectNTFS reads them (round-15 probe F3)
		{".git::$INDEX_ALLOCATION", "must not be inside .git"},
		{"a/.git::$INDEX_ALLOCATION/b", "must not be inside .git"},
		{"git~1:x", "must not be inside .git"},
		{".GIT:$DATA", "must not be inside .git"},
		{".git. :x", "must not be inside .git"},
		{":(top)codeasdata/main", `must not start with ":"`},
		{"*", "must not hold * ? [ or ]"},
		{"codeasdata/[ab]", "must not hold * ? [ or ]"},
		{"-delete", `may start with "-"`},
		{"codeasdata/--exec", `may start with "-"`},
		{"codeasdata/\ufffd", "holds U+FFFD"},
	} {
		assert.ErrorContains(t, checkOutputDir(tc.dir), tc.want, "%q", tc.dir)
	}
	for _, ok := range []string{"codeasdata/.github-like/gitx", "codeasdata/git", "gits/x", "codeasdata/a-b", ".gitignore-like"} {
		assert.NoError(t, checkOutputDir(ok), ok)
	}
}

func TestInvalidUTF8InAnOutputDirIsRefusedNotReplaced(t *testing.T) {
	_, err := Parse([]byte("[{\"snapshooter\":{\"name\":\"a\",\"rootTags\":[\"00000000000000000001\"],\"outputDir\":\"cad\xff\"}}]"))
	assert.ErrorContains(t, err, "[0].snapshooter.outputDir")
	assert.ErrorContains(t, err, "U+FFFD")
}

func TestANulInTheCommitMessageIsRefusedWhenTheFileIsRead(t *testing.T) {
	_, err := Parse([]byte(`[{"snapshooter":{"name":"a","rootTags":["00000000000000000001"],"outputDir":"cad"},
		"git":{"repo":"https://git.example.com/r.git","branch":"main","commitMessage":"snap\u0000shot"}}]`))
	assert.ErrorContains(t, err, "[0].git.commitMessage")
	assert.ErrorContains(t, err, "holds the control character U+0000")
}

func TestOverlapsAreFoundInOnePass(t *testing.T) {
	dirs := []string{"a/b", "a-x", "a", "c", "a/b/c", "d/e", "d"}
	var b strings.Builder
	b.WriteString("[")
	for i, d := range dirs {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"snapshooter": {"name": "n%d", "rootTags": ["00000000000000000001"], "outputDir": %q}}`, i, d)
	}
	b.WriteString("]")
	_, err := Parse([]byte(b.String()))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		`[2].snapshooter.outputDir: "a" overlaps entry [0]'s "a/b"`,
		`[4].snapshooter.outputDir: "a/b/c" overlaps entry [0]'s "a/b"`,
		`[6].snapshooter.outputDir: "d" overlaps entry [5]'s "d/e"`,
	} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, `"a-x" overlaps`, "a-x is a sibling of a, not inside it")
	assert.NotContains(t, msg, `"c" overlaps`)
}

func BenchmarkParse20000Entries(b *testing.B) {
	var s strings.Builder
	s.WriteString("[")
	for i := range 20_000 {
		if i > 0 {
			s.WriteString(",")
		}
		fmt.Fprintf(&s, `{"snapshooter": {"name": "n%d", "rootTags": ["00000000000000000001"], "outputDir": "codeasdata/%d/x"}}`, i, i)
	}
	s.WriteString("]")
	data := []byte(s.String())
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// Whatever push's flags hold, Check refuses or lets through by the rules
// its errors state, and what it lets through is safe to use: a user name
// HTTP Basic auth can carry before the token, a ratio in (0, 1].
func FuzzPushFlagsCheck(f *testing.F) {
	f.Add(5, 0.5, "10m", DefaultAuthor, "")
	f.Add(0, 0.0, "", "x", "user:pass")
	f.Add(1, 1.0, "1s", "a <b@c>", "oauth2")
	f.Add(-3, math.NaN(), "-1m", "<x@y>", "a b")
	f.Fuzz(func(t *testing.T, attempts int, ratio float64, timeout, author, user string) {
		flags := PushFlags{PushAttempts: attempts, MaxDeleteRatio: ratio, Timeout: timeout, Author: author, GitUsername: user}
		checked, err := flags.Check()
		name, email := checked.AuthorName, checked.AuthorEmail
		if err != nil {
			assert.Less(t, len(err.Error()), 4096, "the error stays small: every value is cut")
			for _, flag := range []string{"--push-attempts", "--max-delete-ratio", "--timeout", "--git-username"} {
				if strings.Contains(err.Error(), flag+" ") {
					return // named the flag it refused
				}
			}
			assert.Contains(t, err.Error(), "--author", "names the flag it refused")
			return
		}
		assert.GreaterOrEqual(t, attempts, 1)
		assert.True(t, ratio > 0 && ratio <= 1, "ratio %g", ratio)
		assert.NotEmpty(t, name)
		assert.Contains(t, email, "@")
		assert.LessOrEqual(t, len(user), 256)
		assert.False(t, strings.ContainsAny(user, ": \t\r\n\x00"), "a user name Basic auth carries: %q", user)
	})
}

func TestScrubIfConfigScrubsOnlyWhatNamesASnapshooter(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"another snapshot configuration", `[{"snapshooter":{"name":"prod"},"git":{"repo":"https://ghp_x@git.example.com/a.git"}}]`,
			`[{"snapshooter":{"name":"prod"},"git":{"repo":"https://git.example.com/a.git"}}]`},
		{"one that is not valid JSON", `[{"snapshooter":{}, "git":{"repo":"https://ghp_x@git.example.com/a.git"},}]`,
			`[{"snapshooter":{}, "git":{"repo":"https://git.example.com/a.git"},}]`},
		{"the app's own configuration keeps its addresses", `{"server":"https://user:pw@api.example.com/"}`,
			`{"server":"https://user:pw@api.example.com/"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(ScrubIfConfig([]byte(tc.in))))
		})
	}
}

// Scrubs lists every snapshot configuration once, in an order that does not
// depend on how the engine listed the files, and scrubs the named ones
// whatever they hold, the others only when they name a snapshooter.
func TestScrubsListsEachConfigurationOnceInAFixedOrder(t *testing.T) {
	const plain = `{"api":"https://user:secret@api.example.com/v1"}` // no snapshooter: the app's own
	for _, tc := range []struct {
		name   string
		config string
		found  []string
		paths  []string
		always []bool // scrubbed whatever the file holds
	}{
		{"nothing found: the default file only", "", nil, []string{DefaultPath}, []bool{true}},
		{"the default given as --config: listed once", DefaultPath, []string{DefaultPath}, []string{DefaultPath}, []bool{true}},
		{"another --config comes second, scrubbed whatever it holds", "res/prod.json", []string{"res/prod.json", DefaultPath},
			[]string{DefaultPath, "res/prod.json"}, []bool{true, true}},
		{"other files sorted, each once, after the named ones", "", []string{"res/env/b.json", "res/a.json", DefaultPath, "res/a.json"},
			[]string{DefaultPath, "res/a.json", "res/env/b.json"}, []bool{true, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scrubs := Scrubs(tc.config, tc.found)
			paths := make([]string, len(scrubs))
			always := make([]bool, len(scrubs))
			for i, s := range scrubs {
				paths[i] = s.Path
				always[i] = string(s.Clean([]byte(plain))) != plain
			}
			assert.Equal(t, tc.paths, paths)
			assert.Equal(t, tc.always, always)
			for _, s := range scrubs {
				assert.NotContains(t, string(s.Clean([]byte(`{"snapshooter":{"name":"a"},"git":{"repo":"https://x:tok@git.example.com/r.git"}}`))), "tok", s.Path)
			}
		})
	}
}
