package fielderr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEchoedValuesAreCut(t *testing.T) {
	long := strings.Repeat("é", 1000)
	q := Quote(long)
	assert.True(t, utf8.ValidString(q))
	assert.Less(t, len(q), 200)
	assert.Contains(t, q, "… (2000 bytes)")
	assert.Equal(t, `"short"`, Quote("short"))
	assert.Equal(t, `"a\n\"b\""`, Quote("a\n\"b\""), "quoted as Go quotes")
	assert.Equal(t, `"manual\u3164"`, Quote("manual\u3164"), "a letter drawn as nothing is escaped, as Printable does")

	notUTF8 := Quote(strings.Repeat("\xe9", 80))
	assert.LessOrEqual(t, len(notUTF8), 2*MaxValue+len("… (80 bytes)"), "bytes quoted as \\xe9 count as what they print")
	assert.Contains(t, notUTF8, "… (80 bytes)")

	c := Cut(strings.Repeat("x", 1<<20), MaxValue)
	assert.Equal(t, strings.Repeat("x", MaxValue)+"… (1048576 bytes)", c)
	assert.Equal(t, "ok", Cut("ok", MaxValue))
}

func FuzzQuote(f *testing.F) {
	for _, s := range []string{"short", strings.Repeat("é", 100), strings.Repeat("\xe9", 90), "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		q := Quote(value)
		s := WithoutLogins(value) // what Quote shows of it
		assert.Equal(t, s, WithoutLogins(s), "a login hidden once is hidden")
		assert.LessOrEqual(t, len(q), 2*MaxValue+len("… (9999999999 bytes)"))
		if strings.HasSuffix(q, `"`) && !strings.ContainsAny(s, `\"`) {
			assert.Equal(t, `"`+Printable(s)+`"`, q, "Quote shows a character as Printable does")
		}
		if strings.HasSuffix(q, `"`) {
			whole, err := strconv.Unquote(q)
			assert.NoError(t, err, q)
			assert.Equal(t, s, whole, "not cut: the whole value")
			return
		}
		cut := strings.LastIndex(q, `"… (`)
		require.Positive(t, cut, "cut, saying so: %s", q)
		shown, err := strconv.Unquote(q[:cut+1])
		require.NoError(t, err, "the shown part is one Go-quoted string: %s", q)
		assert.True(t, strings.HasPrefix(s, shown) && len(shown) < len(s), "what is shown is the value's start")
		assert.Equal(t, fmt.Sprintf("… (%d bytes)", len(value)), q[cut+1:], "the value's own size")
	})
}

// A value an error shows keeps no login: a password typed where it does not
// belong (a registry's in --repository or --node-image, a proxy's in
// --build-arg, a token in a label's URL or before --orchestrator's host) is
// not printed, however the address is spelt (round-13 probes P13-1 to P13-3,
// round-14 probe F1, #65). An image pinned by digest, an npm package's
// version, a user alone, keep their @.
func TestQuoteShowsNoLogin(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct{ in, want string }{
		{"https://ci:Pa55wordSecretXY@draw.example.com", `"…@draw.example.com"`},
		{"https://gitlab-ci-token:glpat-S3cr3t@gitlab.example.com/acme/app.git", `"…@gitlab.example.com/acme/app.git"`},
		{"https://u:p@ss@host.example.com/x", `"…@host.example.com/x"`},
		{"HTTPS_PROXY=http://u:Pa55wordSecretXY@proxy:3128", `"…@proxy:3128"`},
		{"ci:Pa55wordSecretXY@registry.example.com/team/app-{kind}", `"…@registry.example.com/team/app-{kind}"`},
		{"src=gitlab-ci-token:glpat-S3cr3t@gitlab.example.com/a", `"…@gitlab.example.com/a"`},
		{"ci:Pa55wordSecretXY @draw.example.com", `"…@draw.example.com"`},
		{"https:/ci:Pa55wordSecretXY@registry.example.com/a", `"…@registry.example.com/a"`},
		{"//ci:Pa55wordSecretXY@registry.example.com/a", `"…@registry.example.com/a"`},
		{"//ghp_Pa55wordSecretXY@github.com/a", `"…@github.com/a"`},
		{"https://ci:Zq9/Kx7Lm3Vt@registry.example.com/a", `"…@registry.example.com/a"`},
		{"https://ci:Zq9#Kx7?Lm3 Vt@registry.example.com/a", `"…@registry.example.com/a"`},
		{"ci%3APa55wordSecretXY@git.example.com", `"…@git.example.com"`},
		{"https%3A%2F%2Fci%3APa55wordSecretXY%40git.example.com", `"…%40git.example.com"`},
		{"ci:Zq9/Kx7Lm3Vt\uff20registry.example.com", "\"…\uff20registry.example.com\""},
		{"ci:Zq9/Kx7Lm3Vt\ufe6bregistry.example.com", "\"…\ufe6bregistry.example.com\""},
		{"ci:Pa55wordSecretXY@registry.example.com/n@" + digest[:20], `"…@` + digest[:20] + `"`},
		{"node:24@" + digest, `"node:24@` + digest + `"`},
		// round-15 probe F6: a host shaped like a digest pins nothing
		{"https://ci:Pa55wordSecretXY@" + digest[:40] + "/x", `"…@` + digest[:40] + `/x"`},
		{"https://ci:Pa55wordSecretXY@" + digest[:40], `"…@` + digest[:40] + `"`},
		{"r:5/n@" + digest, `"r:5/n@` + digest + `"`},
		{"@olympeio/toolkit@2.9.2", `"@olympeio/toolkit@2.9.2"`},
		{"ci@draw.example.com:443", `"ci@draw.example.com:443"`},
		{"team@example.com", `"team@example.com"`},
	} {
		assert.Equal(t, tc.want, Quote(tc.in), tc.in)
	}
	assert.Equal(t, `a["…@localhost"]`, Join("a", "ci:Pa55wordSecretXY@localhost"), "a key too (round-14 probe F3)")
}

// A value kept and shown (a label, a snapshot's name, a backend) holds no
// login in any word; a sentence's colon before a later @ is none.
func TestHoldsLoginReadsWordByWord(t *testing.T) {
	for in, want := range map[string]bool{
		"https://ci:Pa55wordSecretXY@git.example.com/team/app.git":                        true,
		"sync of ci:Pa55wordSecretXY@git.example.com":                                     true,
		"https:/ci:Pa55wordSecretXY@git.example.com":                                      true,
		"chore(snapshot): update @ {date}":                                                false,
		"snapshot: {date} by ci@example.com":                                              false,
		"@olympeio/toolkit@2.9.2":                                                         false,
		"mailto:ops@example.com":                                                          false,
		"mailto:ops@example.com ci:S3cretPassw0rd@registry.example.com":                   true,
		"mailto:ci:S3cretPassw0rd@registry.example.com":                                   true,
		"node:24@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": false,
	} {
		assert.Equal(t, want, HoldsLogin(in), in)
	}
}

func FuzzQuoteShowsNoPassword(f *testing.F) {
	f.Add("ci", "Pa55wordSecretXY", "registry.example.com")
	f.Add("gitlab-ci-token", "glpat-S3cr3tT0ken", "gitlab.example.com:8443")
	f.Add("ci", "Zq9/Kx7 Lm3#Vt?", "registry.example.com")
	f.Fuzz(func(t *testing.T, user, password, host string) {
		// a '"' or '\' is what Quote writes around and inside what it shows:
		// a password of them may be met by the quoted host's end
		if len(password) < 8 || strings.Contains(user+password, "@") || strings.Contains(user+password, "%40") || strings.ContainsAny(password, `"\`) ||
			host == "" || strings.Trim(host, "abcdefghijklmnopqrstuvwxyz0123456789.-:") != "" ||
			strings.Contains("KEY=https://"+host+"/team/app", password) || // what is shown holds no password then
			digestNext.MatchString(host) { // the shape of an image pinned by digest: kept, a documented limit
			return
		}
		for _, s := range []string{"https://" + user + ":" + password + "@" + host + "/team/app", "https:/" + user + ":" + password + "@" + host,
			"//" + user + ":" + password + "@" + host, user + ":" + password + "@" + host + "/team/app", "KEY=http://" + user + ":" + password + "@" + host,
			"KEY=" + user + ":" + password + "@" + host} {
			q := Quote(s)
			assert.NotContains(t, q, password, s)
			assert.NotContains(t, q, strconv.Quote(password)[1:len(strconv.Quote(password))-1], s)
		}
	})
}

func TestListsAreCapped(t *testing.T) {
	var l List
	for i := range 100_000 {
		l.Addf(Index("extraArgs", i), "unsupported argument")
	}
	msg := l.Error()
	assert.True(t, strings.HasPrefix(msg, "100000 problems:\n  - extraArgs[0]: unsupported argument"))
	assert.Equal(t, MaxProblems+1, strings.Count(msg, "\n  "), "the first %d, then a count", MaxProblems)
	assert.True(t, strings.HasSuffix(msg, fmt.Sprintf("… and %d more", 100_000-MaxProblems)))
	assert.Less(t, len(msg), 4000)

	long := Error{Path: strings.Repeat("k", 1<<20), Message: "unknown key"}
	assert.Less(t, len(long.Error()), MaxPath+50, "a path is cut too: keys come from the input")
}

func TestToolLinesRepeatOnlyWhatOurToolsSaid(t *testing.T) {
	stderr := "npm ERR! //registry.example.com/:_authToken=npm_SECRET\n" +
		"lowcode-pipeline: node image node:18 has Node.js v18.20.4: the platform needs 20 or above\n" +
		"  lowcode-pipeline: indented, so not ours\n"
	assert.Equal(t, []string{"lowcode-pipeline: node image node:18 has Node.js v18.20.4: the platform needs 20 or above"}, ToolLines(stderr))
	assert.Empty(t, ToolLines("npm ERR! something else"))
	assert.Equal(t, []string{`snapshot-push: remote: \x1b[1Aforged\r`}, ToolLines("snapshot-push: remote: \x1b[1Aforged\r\n"),
		"what a server said through our tool is shown, not obeyed")
	many := strings.Repeat("oci-publish: x\n", 9) + "snapshot-push: " + strings.Repeat("y", 5000)
	got := ToolLines(many)
	assert.Len(t, got, 6)
	assert.Equal(t, "(5 more lines in the log)", got[5])
}

func TestPlainKeepsWhatTheModuleAddedAndDropsEncodedIDs(t *testing.T) {
	id := "Cv57ChV4eGgzOjUzMzYzZjVhYmFlNzJhYzgShwEKFXh4aDM6MDBjNzMzNjZiZTU3NThkYxJuChV4eGgzOmVlYjgyYjEw" + strings.Repeat("QUJD", 5000)
	for _, tc := range []struct {
		name      string
		err       error
		want      []string
		wantNot   []string
		maxLength int
	}{
		{"nil stays nil", nil, nil, nil, 0},
		{"a wrapped error keeps every layer's words",
			fmt.Errorf("build: %w", fmt.Errorf("exit code: 3\nlowcode-pipeline: node:18 has Node.js v18.20.8: the platform needs 20 or above")),
			[]string{"build: exit code: 3", "has Node.js v18.20.8", "needs 20 or above"}, nil, 0},
		{"an encoded ID is named by its type only",
			fmt.Errorf("failed to load container from converted ID: load Container@%s: load xxh3:559d231aa1c78541: inputs: load xxh3:25b43bc14c979239: inputs: failed to content hash dockerfile copy: lstat /docker/nginx.conf: no such file or directory", id),
			[]string{"load Container@…", "lstat /docker/nginx.conf: no such file or directory"}, []string{"Cv57", "xxh3:"}, 400},
		{"whatever a check forgot to escape is escaped, line by line (round-16 probes F1–F4)",
			fmt.Errorf("the whole project (its dist/, \x1b[2J\x1b[Hevil, a\u202etxt)\n\tby ws\x1b]0;pwned\a"),
			[]string{`the whole project (its dist/, \x1b[2J\x1b[Hevil, a\u202etxt)` + "\n\t" + `by ws\x1b]0;pwned\a`}, []string{"\x1b", "\u202e", "\a"}, 0},
		{"a long message keeps its start and its end",
			fmt.Errorf("publish: %s: the real cause", strings.Repeat("word ", 10000)),
			[]string{"publish: word", "bytes cut", "the real cause"}, nil, MaxError + 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Plain(tc.err)
			if tc.err == nil {
				assert.NoError(t, got)
				return
			}
			require.Error(t, got)
			assert.Nil(t, errors.Unwrap(got), "wraps nothing, so the SDK keeps its text")
			for _, w := range tc.want {
				assert.Contains(t, got.Error(), w)
			}
			for _, w := range tc.wantNot {
				assert.NotContains(t, got.Error(), w)
			}
			if tc.maxLength > 0 {
				assert.LessOrEqual(t, len(got.Error()), tc.maxLength)
			}
		})
	}
}

func FuzzPlain(f *testing.F) {
	f.Add("exit code: 1\nlowcode-pipeline: boom")
	f.Add("load Container@" + strings.Repeat("QUJD", 40) + ": x")
	f.Add(strings.Repeat("é", 3000))
	f.Fuzz(func(t *testing.T, s string) {
		got := Plain(errors.New(s)).Error()
		assert.LessOrEqual(t, len(got), MaxError+64)
		assert.True(t, utf8.ValidString(got))
		for _, line := range strings.Split(got, "\n") {
			for _, piece := range strings.Split(line, "\t") {
				assert.Equal(t, Printable(piece), piece, "no error reaches a terminal raw")
			}
		}
	})
}

func TestAPathNamesEveryKeyEvenOneThatReadsOddly(t *testing.T) {
	for _, tc := range []struct{ name, parent, key, want string }{
		{"a key under a parent follows a dot", "backends", "images", "backends.images"},
		{"a top-level key stands alone", "", "frontend", "frontend"},
		{"a key with a colon still reads as one", "lowcodePipeline.inputs", "build:draw", "lowcodePipeline.inputs.build:draw"},
		{"an empty top-level key is quoted, not an empty path", "", "", `[""]`},
		{"an empty nested key is quoted", "frontend", "", `frontend[""]`},
		{"a key with a dot is quoted, not read as two", "frontend", "a.b", `frontend["a.b"]`},
		{"a key with brackets is quoted, not read as an index", "", "[0]", `["[0]"]`},
		{"a key with a space is quoted", "", "no downtime", `["no downtime"]`},
		{"a key with a control character is quoted", "", "a\nb", `["a\nb"]`},
		{"a key with a letter drawn as nothing is quoted and escaped", "frontend", "image\u3164", `frontend["image\u3164"]`},
		{"a key with a blank Braille pattern is quoted and escaped", "frontend", "image\u2800", `frontend["image\u2800"]`},
		{"a key that is not UTF-8 is quoted byte by byte", "", "a\xffb", `["a\xffb"]`},
		{"a long odd key is cut", "", strings.Repeat(" ", 1000), `["` + strings.Repeat(" ", MaxValue) + `"… (1000 bytes)]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Join(tc.parent, tc.key))
		})
	}
}

// Whatever the key, its path is not empty and names it: a plain key as it
// is, any other quoted so that it reads back.
func FuzzJoin(f *testing.F) {
	for _, s := range []string{"", "images", "a.b", "[0]", " ", "\xff", "build:draw"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		path := Join("", key)
		require.NotEmpty(t, path)
		if path == key {
			assert.True(t, plainKey(key))
			return
		}
		require.True(t, strings.HasPrefix(path, "[") && strings.HasSuffix(path, "]"), path)
		assert.Equal(t, Quote(key), path[1:len(path)-1])
	})
}
