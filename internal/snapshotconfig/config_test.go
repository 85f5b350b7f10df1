package snapshotconfig

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/gitref"
)

const (
	tag1 = "00000000000000000001"
	tag2 = "018a88a4d5312b1501c6" // as the vendor writes them: hexadecimal
)

func entry(fields string) string {
	return `[{"snapshooter":{"name":"Main","rootTags":["` + tag1 + `"],"outputDir":"codeasdata/main"` + fields + `}}]`
}

func TestParseReadsEveryField(t *testing.T) {
	entries, err := Parse([]byte(`[
		{"snapshooter":{"name":"Main","rootTags":["` + tag1 + `","` + tag2 + `"],"exclude":["00000000000000000003"],"outputDir":"codeasdata/main"},
		 "git":{"repo":"https://git.example.com/team/code.git","branch":"snapshots/main","commitMessage":"snapshot {folder} at {date}"}},
		{"snapshooter":{"name":"Lib","rootTags":["` + tag2 + `"],"outputDir":"codeasdata/lib"}}]`))
	require.NoError(t, err)
	require.Len(t, entries, 2)
	assert.Equal(t, Snapshooter{Name: "Main", RootTags: []string{tag1, tag2}, Exclude: []string{"00000000000000000003"}, OutputDir: "codeasdata/main"}, entries[0].Snapshooter)
	assert.Equal(t, &Git{Repo: "https://git.example.com/team/code.git", Branch: "snapshots/main", CommitMessage: "snapshot {folder} at {date}"}, entries[0].Git)
	assert.Nil(t, entries[1].Git)
}

// withGitSection is one valid entry with the git section given, each value
// written as JSON.
func withGitSection(repo, branch, message string) string {
	return `[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"o"},"git":{"repo":` + jsonString(repo) +
		`,"branch":` + jsonString(branch) + `,"commitMessage":` + jsonString(message) + `}}]`
}

// jsonString is v as a JSON string literal, < > & as they are.
func jsonString(v string) string {
	return string(quoteJSON(v))
}

// The bad inputs of the spec's rules, with the path and message each must give.
var invalid = []struct {
	name, in, path, msg string
}{
	{"a tag written as a number", entry(`,"exclude":[12345678901234567890]`), "[0].snapshooter.exclude[0]", "must be written as a string"},
	{"a tag that is not 20 characters", `[{"snapshooter":{"name":"M","rootTags":["123"],"outputDir":"o"}}]`, "[0].snapshooter.rootTags[0]", `"123" is not an identifier: want exactly 20 hexadecimal characters`},
	{"a tag with a letter past f", `[{"snapshooter":{"name":"M","rootTags":["018a88a4d5312b1501cg"],"outputDir":"o"}}]`, "[0].snapshooter.rootTags[0]", `want exactly 20 hexadecimal characters (0-9, a-f)`},
	{"a tag in upper case", `[{"snapshooter":{"name":"M","rootTags":["018A88A4D5312B1501C6"],"outputDir":"o"}}]`, "[0].snapshooter.rootTags[0]", `write the identifier in lower case, as the platform does: "018a88a4d5312b1501c6"`},
	{"a tag of 21 characters", `[{"snapshooter":{"name":"M","rootTags":["018a88a4d5312b1501c6a"],"outputDir":"o"}}]`, "[0].snapshooter.rootTags[0]", `want exactly 20 hexadecimal characters`},
	{"no root tags", `[{"snapshooter":{"name":"M","rootTags":[],"outputDir":"o"}}]`, "[0].snapshooter.rootTags", "at least one"},
	{"a tag twice", `[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `","` + tag1 + `"],"outputDir":"o"}}]`, "[0].snapshooter.rootTags[1]", "listed twice"},
	{"no name", `[{"snapshooter":{"rootTags":["` + tag1 + `"],"outputDir":"o"}}]`, "[0].snapshooter.name", "required"},
	{"a blank name", `[{"snapshooter":{"name":" ","rootTags":["` + tag1 + `"],"outputDir":"o"}}]`, "[0].snapshooter.name", `" " is white space alone, which no one sees: write the label of the snapshot job`},
	{"no outputDir", `[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"]}}]`, "[0].snapshooter.outputDir", "required"},
	{"an absolute outputDir", `[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"/srv/code"}}]`, "[0].snapshooter.outputDir", "not absolute"},
	{"an outputDir leaving the repository", `[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"a/../../b"}}]`, "[0].snapshooter.outputDir", "inside the repository"},
	{"the repository itself as outputDir", `[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"./"}}]`, "[0].snapshooter.outputDir", "not the repository itself"},
	{"an outputDir in .git", `[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"x/.git/hooks"}}]`, "[0].snapshooter.outputDir", "inside .git"},
	{"a backslash outputDir", `[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"code\\main"}}]`, "[0].snapshooter.outputDir", "forward slashes"},
	{"an unknown key", entry(`,"outDir":"x"`), "[0].snapshooter.outDir", "unknown key"},
	{"no snapshooter", `[{"git":{"repo":"https://g.example.com/r.git","branch":"main","commitMessage":"m"}}]`, "[0].snapshooter", "required"},
	{"git without branch", `[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"o"},"git":{"repo":"https://g.example.com/r.git","commitMessage":"m"}}]`, "[0].git.branch", "required"},
	{"git over ssh", `[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"o"},"git":{"repo":"ssh://g.example.com/r.git","branch":"main","commitMessage":"m"}}]`, "[0].git.repo", "must be an https address"},
	{"a bad branch", withGitSection("https://g.example.com/r.git", "feature..x", "m"), "[0].git.branch", `"feature..x": not a branch name git accepts (it holds "..")`},
	{"a branch ending in .lock", withGitSection("https://g.example.com/r.git", "main.lock", "m"), "[0].git.branch", `"main.lock": not a branch name git accepts (its part "main.lock" ends with ".lock"`},
	{"a branch named HEAD", withGitSection("https://g.example.com/r.git", "HEAD", "m"), "[0].git.branch", `"HEAD": not a branch name git accepts (HEAD names the commit checked out, never a branch): a name ` + "`git check-ref-format --branch`" + ` accepts`},
	{"a branch with a folder ending in .lock", withGitSection("https://g.example.com/r.git", "release.lock/1", "m"), "[0].git.branch", `its part "release.lock" ends with ".lock"`},
	{"a branch with a middle folder ending in .lock", withGitSection("https://g.example.com/r.git", "a/b.lock/c", "m"), "[0].git.branch", `its part "b.lock" ends with ".lock"`},
	{"a branch that is @ alone", withGitSection("https://g.example.com/r.git", "@", "m"), "[0].git.branch", `"@" alone is git's shorthand for HEAD`},
	{"the template's <token> left in git.repo", withGitSection("https://<token>@g.example.com/r.git", "main", "m"), "[0].git.repo", `"<token>" (where the token goes) is a placeholder`},
	{"$GIT_TOKEN left in git.repo", withGitSection("https://$GIT_TOKEN@g.example.com/r.git", "main", "m"), "[0].git.repo", `"$GIT_TOKEN" (where the token goes) is a placeholder`},
	{"${GIT_TOKEN} after a user name", withGitSection("https://oauth2:${GIT_TOKEN}@g.example.com/r.git", "main", "m"), "[0].git.repo", `"${GIT_TOKEN}" (where the token goes) is a placeholder`},
	{"the template's <repository_url>", withGitSection("https://<repository_url>.git", "main", "m"), "[0].git.repo", `"<repository_url>" is a placeholder`},
	{"a variable in the path", withGitSection("https://g.example.com/team/$REPO.git", "main", "m"), "[0].git.repo", `"$REPO" is a placeholder`},
	{"ESC in outputDir", configWith("M", "code/\x1b[2Jx", "main", "m"), "[0].snapshooter.outputDir", `"code/\x1b[2Jx": holds the control character U+001B`},
	{"CSI in the name", configWith("M\u009b31m", "o", "main", "m"), "[0].snapshooter.name", `"M\u009b31m": holds the control character U+009B`},
	{"CSI in the branch", configWith("M", "o", "snap\u009b31m", "m"), "[0].git.branch", `"snap\u009b31m": holds the control character U+009B`},
	{"BEL in the commit message", configWith("M", "o", "main", "m\a"), "[0].git.commitMessage", `"m\a": holds the control character U+0007; line feeds alone are allowed`},
	{"an empty commit message", `[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"o"},"git":{"repo":"https://g.example.com/r.git","branch":"main","commitMessage":""}}]`, "[0].git.commitMessage", "must not be empty"},
	{"an object instead of an array", `{"snapshooter":{}}`, "", "must be a JSON array"},
	{"an empty array", `[]`, "", "no snapshot entries"},
}

func TestParseRefusesEachRuleWithEntryAndField(t *testing.T) {
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			var list fielderr.List
			require.ErrorAs(t, err, &list)
			require.NotEmpty(t, list)
			assert.Equal(t, tc.path, list[0].Path, "%v", err)
			assert.Contains(t, list[0].Message, tc.msg)
		})
	}
}

func TestParseReportsAllProblemsAtOnce(t *testing.T) {
	_, err := Parse([]byte(`[
		{"snapshooter":{"name":"A","rootTags":[1],"outputDir":"code"}},
		{"snapshooter":{"name":"B","rootTags":["` + tag1 + `"],"outputDir":"code/b"},"git":{"repo":"http://g.example.com/r.git","branch":"-x","commitMessage":"m"}}]`))
	var list fielderr.List
	require.ErrorAs(t, err, &list)
	paths := []string{}
	for _, e := range list {
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []string{"[0].snapshooter.rootTags[0]", "[1].git.repo", "[1].git.branch", "[1].snapshooter.outputDir"}, paths)
	assert.Contains(t, list[3].Message, `overlaps entry [0]'s "code"`)
}

func TestATokenInTheRepoNeverShowsInAnError(t *testing.T) {
	_, err := Parse([]byte(`[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"o"},"git":{"repo":"http://ghp_SECRET123@g.example.com/r.git","branch":"main","commitMessage":"m"}}]`))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "ghp_SECRET123")
	assert.Contains(t, err.Error(), `"http://g.example.com/r.git": must be an https address`)
}

func TestRemoteSplitsTheCredentialsTheSpecAllows(t *testing.T) {
	for _, tc := range []struct{ repo, url, user, token string }{
		{"https://ghp_abc@git.example.com/team/code.git", "https://git.example.com/team/code.git", "", "ghp_abc"},
		{"https://oauth2:glpat-x@git.example.com/team/code.git", "https://git.example.com/team/code.git", "oauth2", "glpat-x"},
		{"https://x-token-auth:TOKEN@bitbucket.org/team/code.git", "https://bitbucket.org/team/code.git", "x-token-auth", "TOKEN"},
		{"https://git.example.com/team/code.git", "https://git.example.com/team/code.git", "", ""},
	} {
		u, user, tok := (&Git{Repo: tc.repo}).Remote()
		assert.Equal(t, tc.url, u)
		assert.Equal(t, tc.user, user, "the user name in the URL is the one git sends")
		assert.Equal(t, tc.token, tok)
	}
}

func TestRenderMessage(t *testing.T) {
	at := time.Date(2026, 3, 7, 14, 5, 9, 0, time.UTC)
	for _, tc := range []struct{ tmpl, want string }{
		{"snapshot {date}", "snapshot 2026.03.07 14:05:09"},
		{"{folder}: {date} ({folder} again, {date} again)", "codeasdata/main: 2026.03.07 14:05:09 (codeasdata/main again, 2026.03.07 14:05:09 again)"},
		{"no placeholder", "no placeholder"},
		{"{Date} and {folders} are not placeholders", "{Date} and {folders} are not placeholders"},
	} {
		assert.Equal(t, tc.want, RenderMessage(tc.tmpl, at, "codeasdata/main"), tc.tmpl)
	}
	assert.Equal(t, "at 2026.03.07 09:00:00", RenderMessage("at {date}", time.Date(2026, 3, 7, 9, 0, 0, 0, time.UTC), "x"), "zero-padded")
	assert.Equal(t, "at 2026.03.07 23:30:00", RenderMessage("at {date}", time.Date(2026, 3, 8, 0, 30, 0, 0, time.FixedZone("CET", 3600)), "x"), "in UTC, whatever the runner's zone")
	assert.Equal(t, "{date} in a folder name", RenderMessage("{folder}", at, "{date} in a folder name"), "a replaced value is not replaced again")
}

func compileSchema(t testing.TB) *jsonschema.Schema {
	data, err := os.ReadFile("../../schema/snapshot-config.schema.json")
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	// Editors read the schema's patterns as JavaScript regular expressions.
	c.UseRegexpEngine(func(p string) (jsonschema.Regexp, error) {
		re, err := regexp2.Compile(p, regexp2.ECMAScript)
		if err != nil {
			return nil, err
		}
		return ecma{re}, nil
	})
	require.NoError(t, c.AddResource("snapshot-config.schema.json", doc))
	s, err := c.Compile("snapshot-config.schema.json")
	require.NoError(t, err)
	return s
}

type ecma struct{ *regexp2.Regexp }

func (e ecma) MatchString(s string) bool {
	ok, err := e.Regexp.MatchString(s)
	return err == nil && ok
}

func schemaAccepts(t testing.TB, s *jsonschema.Schema, in string) bool {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(in))
	require.NoError(t, err)
	return s.Validate(doc) == nil
}

func TestSchemaAndValidatorAgree(t *testing.T) {
	s := compileSchema(t)
	valid := []string{
		entry(""),
		entry(`,"exclude":["` + tag2 + `"]`),
		`[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"./code/main"},"git":{"repo":"https://git.example.com/team/code.git","branch":"feature/snap-1","commitMessage":"{folder} {date}"}}]`,
		`[{"snapshooter":{"name":"M","rootTags":["` + tag1 + `"],"outputDir":"a..b"},"git":{"repo":"https://tok@git.example.com/code.git","branch":"main","commitMessage":"m"}}]`,
		configWith("Commandes – été", "codeasdata/été", "snapshots/été", "snapshot {folder}\n\nTaken at {date}.\n"),
	}
	for _, in := range valid {
		_, err := Parse([]byte(in))
		assert.NoError(t, err, in)
		assert.True(t, schemaAccepts(t, s, in), "the schema refuses what the validator accepts: %s", in)
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			assert.False(t, schemaAccepts(t, s, tc.in), "the schema accepts what the validator refuses: %s", tc.in)
		})
	}
}

// The schema's branch pattern gives the validator's verdict (git's rules,
// internal/gitref) on names at the edge of each rule, so that an editor
// marks the branch git would refuse.
func TestSchemaAndValidatorAgreeOnBranchNames(t *testing.T) {
	s := compileSchema(t)
	names := []string{
		"main", "snapshots/main", "a/-b", "v1.2/x.y", "lock/x-lock", "a@b", "{", "HEAD/x", "heads/HEAD", "héllo/日本", "a.locked",
		"HEAD", "@", "-x", "release.lock/1", "a/b.lock/c", "main.lock", ".lock", "a/.b", ".a", "a..b", "a.", "a/", "/a", "a//b",
		"a@{1}", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", `a\\b`, "a\x7fb", "a\u2028/.b", "a\u2028.lock", "x\u2028..",
	}
	refused := 0
	for _, name := range names {
		var branch string
		require.NoError(t, json.Unmarshal([]byte(`"`+name+`"`), &branch), name)
		in := withGitSection("https://g.example.com/r.git", branch, "m")
		_, err := Parse([]byte(in))
		assert.Equal(t, err == nil, schemaAccepts(t, s, in), "%q: the schema and the validator disagree (validator: %v)", branch, err)
		if err != nil {
			refused++
		}
	}
	assert.Greater(t, refused, 20, "names on both sides of the rules")
}

// The schema's repo pattern refuses the placeholders the validator names,
// and accepts the addresses around them that the validator accepts.
func TestSchemaAndValidatorAgreeOnPlaceholders(t *testing.T) {
	s := compileSchema(t)
	refused := 0
	for _, repo := range []string{
		"https://git.example.com/team/code.git", "https://ghp_abc@git.example.com/code.git", "https://oauth2:glpat-x@git.example.com/code.git",
		"https://user:Pa$$WORD@git.example.com/code.git", "https://user:$ecret99@git.example.com/code.git", "https://g.example.com/a$b/c.git",
		"https://g.example.com/$lower.git", "https://u:a:$X@g.example.com/c.git", "https://$(a:b)@g.example.com/c.git",
		"https://<token>@g.example.com/r.git", "https://${GIT_TOKEN}@g.example.com/r.git", "https://$GIT_TOKEN@g.example.com/r.git",
		"https://oauth2:$GIT_TOKEN@g.example.com/r.git", "https://$(GIT_TOKEN)@g.example.com/r.git", "https://x:${{secrets.T}}@g.example.com/r.git",
		"https://<repository_url>.git", "https://<token>@<repository_url>.git", "https://g.example.com/team/$REPO.git", "https://g.example.com/${REPO}",
		"https://$GIT_TOKEN:x@g.example.com/r.git", "https://$GIT_TOKENx@g.example.com/r.git", "https://a$GIT_TOKEN@g.example.com/r.git",
	} {
		in := withGitSection(repo, "main", "m")
		_, err := Parse([]byte(in))
		assert.Equal(t, err == nil, schemaAccepts(t, s, in), "%s: the schema and the validator disagree (validator: %v)", repo, err)
		if err != nil {
			refused++
		}
	}
	assert.Greater(t, refused, 10, "addresses on both sides of the rule")
}

func TestTheExampleConfigIsValid(t *testing.T) {
	data, err := os.ReadFile("../../examples/app/res/snapshot-config.json")
	require.NoError(t, err)
	_, err = Parse(data)
	require.NoError(t, err)
	assert.True(t, schemaAccepts(t, compileSchema(t), string(data)))
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(entry("")))
	f.Add([]byte(`[{"snapshooter":{"name":"M","rootTags":[1],"outputDir":"../x"},"git":{"repo":"https://t@h/r.git","branch":"a..b","commitMessage":"{date}"}}]`))
	f.Add([]byte(configWith("M\u009b", "o\x1b", "snap\u0085", "m\n\r\a")))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Parse(data)
		if err != nil {
			return
		}
		// What is accepted must be something the pipeline can act on safely.
		for _, e := range entries {
			if checkOutputDir(e.Snapshooter.OutputDir) != nil || len(e.Snapshooter.RootTags) == 0 {
				t.Fatalf("accepted %+v", e)
			}
			if checkControls(e.Snapshooter.Name, false) != nil {
				t.Fatalf("accepted name %q", e.Snapshooter.Name)
			}
			if e.Git != nil && (gitref.CheckBranch(e.Git.Branch) != nil || checkControls(e.Git.Branch, false) != nil) {
				t.Fatalf("accepted branch %q", e.Git.Branch)
			}
			if e.Git != nil && checkControls(e.Git.CommitMessage, true) != nil {
				t.Fatalf("accepted commit message %q", e.Git.CommitMessage)
			}
		}
		_, _ = json.Marshal(entries)
	})
}

func TestPushedKeepsTheEntriesWithGit(t *testing.T) {
	entries, err := Parse([]byte(`[
		{"snapshooter":{"name":"A","rootTags":["` + tag1 + `"],"outputDir":"a"}},
		{"snapshooter":{"name":"B","rootTags":["` + tag1 + `"],"outputDir":"b"},"git":{"repo":"https://g.example.com/r.git","branch":"main","commitMessage":"m"}}]`))
	require.NoError(t, err)
	pushed, err := Pushed(entries)
	require.NoError(t, err)
	require.Len(t, pushed, 1)
	assert.Equal(t, "B", pushed[0].Snapshooter.Name)
	assert.Equal(t, 1, pushed[0].Index, "the entry keeps its place in the file")

	_, err = Pushed(entries[:1])
	assert.ErrorIs(t, err, ErrNoGit)
}

// git runs in a container of the engine: a push refuses every git.repo on
// loopback, naming it, before any git work; the file itself stays valid,
// as snapshot alone does no git work.
func TestPushedRefusesARepoOnLoopback(t *testing.T) {
	entry := func(name, dir, repo string) string {
		return `{"snapshooter":{"name":"` + name + `","rootTags":["` + tag1 + `"],"outputDir":"` + dir + `"},"git":{"repo":"` + repo + `","branch":"main","commitMessage":"m"}}`
	}
	entries, err := Parse([]byte(`[` + entry("A", "a", "https://g.example.com/r.git") + `,` +
		entry("B", "b", "https://glpat-SECRET@localhost:3000/team/r.git") + `,` + entry("C", "c", "https://127.0.0.1/r.git") + `]`))
	require.NoError(t, err, "snapshot alone reads the file")
	_, err = Pushed(entries)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `[1].git.repo: "https://localhost:3000/team/r.git" names this machine, but git runs in a container of the engine`)
	assert.Contains(t, err.Error(), `[2].git.repo: "https://127.0.0.1/r.git" names this machine`)
	assert.NotContains(t, err.Error(), "[0]")
	assert.NotContains(t, err.Error(), "SECRET")
}

func TestARepoWithAnAtAfterTheHostIsRefused(t *testing.T) {
	for _, repo := range []string{"https://user:12/SECRET@host/repo.git", "https://ab?SECRET@host/x.git"} {
		_, err := Parse([]byte(`[{"snapshooter":{"name":"a","rootTags":["00000000000000000001"],"outputDir":"cad"},
			"git":{"repo":"` + repo + `","branch":"main","commitMessage":"m"}}]`))
		require.Error(t, err, repo)
		assert.NotContains(t, err.Error(), "SECRET")
	}
}

func TestTheCodeAsDataIsReadFromTheOneFolderTheProjectHolds(t *testing.T) {
	two := []Entry{{Snapshooter: Snapshooter{OutputDir: "snapshot/app"}}, {Snapshooter: Snapshooter{OutputDir: "./other/"}}}
	for _, tc := range []struct {
		name    string
		entries []Entry
		files   map[string]int
		want    CodeAsData
		err     string
	}{
		{"no configuration: the toolkit's default", nil, map[string]int{"snapshot": 1}, CodeAsData{"snapshot", "the toolkit's default, as the project has no res/snapshot-config.json"}, ""},
		{"no configuration, no folder", nil, map[string]int{}, CodeAsData{}, "snapshot/ (the toolkit's default, as the project has no res/snapshot-config.json), which is missing or empty"},
		{"no configuration, an empty folder", nil, map[string]int{"snapshot": 0}, CodeAsData{}, "which is missing or empty"},
		{"the one outputDir the project holds; the other entry writes another repository", two, map[string]int{"other": 3}, CodeAsData{"other", "res/snapshot-config.json [1].snapshooter.outputDir"}, ""},
		{"none held", two, map[string]int{"snapshot/app": 0}, CodeAsData{}, `res/snapshot-config.json: the project holds none of its entries' outputDirs ("snapshot/app", "other"), or only empty ones`},
		{"both held", two, map[string]int{"snapshot/app": 1, "other": 1}, CodeAsData{}, `res/snapshot-config.json: the project holds several entries' outputDirs ([0] "snapshot/app", [1] "other")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindCodeAsData(DefaultPath, tc.entries, "snapshot", tc.files)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				assert.ErrorContains(t, err, "--code-as-data-arg=--snapshot.dir=<folder>")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestAConfigurationFolderIsEveryFilesEntriesInPathOrder(t *testing.T) {
	entry := func(name, dir string) string {
		return `{"snapshooter":{"name":"` + name + `","rootTags":["018a88a4d5312b1501c6"],"outputDir":"` + dir + `"}}`
	}
	files := []File{
		{Path: "res/snapshots/a.json", Data: []byte("[" + entry("web", "snapshot/web") + "," + entry("admin", "snapshot/admin") + "]")},
		{Path: "res/snapshots/prod/b.json", Data: []byte("[" + entry("api", "snapshot/api") + "]")},
	}
	entries, err := ParseFolder("res/snapshots", files)
	require.NoError(t, err)
	var names []string
	for i, e := range entries {
		assert.Equal(t, i, e.Index, "numbered on across the files")
		names = append(names, e.Snapshooter.Name)
	}
	assert.Equal(t, []string{"web", "admin", "api"}, names)

	for _, tc := range []struct {
		name  string
		files []File
		want  []string
	}{
		{"no file", nil, []string{"res/snapshots: a folder with no .json file"}},
		{"a file's problem names the file and its own entry", []File{files[0], {Path: "res/snapshots/bad.json", Data: []byte(`[{"snapshooter":{"name":"x"}}]`)}},
			[]string{"res/snapshots/bad.json: ", "[0].snapshooter.rootTags"}},
		{"one folder in two files", []File{files[0], {Path: "res/snapshots/c.json", Data: []byte("[" + entry("again", "snapshot/web/x") + "]")}},
			[]string{"res/snapshots (its files' entries numbered on in path order): ", `[2].snapshooter.outputDir: "snapshot/web/x" overlaps entry [0]'s "snapshot/web"`}},
		// a file's name is the repository's: shown printable (round-15 probe F4)
		{"a file named with an escape sequence", []File{{Path: "res/snapshots/\x1b]0;pwned\a\u202e.json", Data: []byte("[]")}},
			[]string{`res/snapshots/\x1b]0;pwned\a\u202e.json: `}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFolder("res/snapshots", tc.files)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				assert.Equal(t, fielderr.Printable(line), line, "printable")
			}
		})
	}
}

func FuzzParseFolder(f *testing.F) {
	f.Add([]byte(`[{"snapshooter":{"name":"a","rootTags":["018a88a4d5312b1501c6"],"outputDir":"x"}}]`), []byte(`[{"snapshooter":{"name":"b","rootTags":["018a88a4d5312b1501c6"],"outputDir":"x/y"}}]`))
	f.Add([]byte(`[]`), []byte(`{`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		entries, err := ParseFolder("res/snapshots", []File{{Path: "res/snapshots/a.json", Data: a}, {Path: "res/snapshots/b.json", Data: b}})
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), "res/snapshots"), "the error names the file or the folder: %s", err)
			return
		}
		first, errA := Parse(a)
		second, errB := Parse(b)
		require.NoError(t, errA, "each file parses alone")
		require.NoError(t, errB, "each file parses alone")
		require.Len(t, entries, len(first)+len(second))
		for i, e := range entries {
			assert.Equal(t, i, e.Index)
		}
	})
}
