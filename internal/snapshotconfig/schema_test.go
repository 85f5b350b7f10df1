package snapshotconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const schemaFile = "../../schema/snapshot-config.schema.json"

// schemaRepo is the repo property of the schema as the repository keeps it.
func schemaRepo(t testing.TB) (pattern, description string) {
	data, err := os.ReadFile(schemaFile)
	require.NoError(t, err)
	var doc struct {
		Items struct {
			Properties struct {
				Git struct {
					Properties struct {
						Repo struct{ Pattern, Description string }
					}
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	repo := doc.Items.Properties.Git.Properties.Repo
	return repo.Pattern, repo.Description
}

// repoPattern is the schema's repo pattern compiled as an editor reads it:
// an ECMAScript regular expression.
func repoPattern(t testing.TB) *regexp2.Regexp {
	pattern, _ := schemaRepo(t)
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
	require.NoError(t, err)
	return re
}

func schemaMatches(t testing.TB, re *regexp2.Regexp, repo string) bool {
	ok, err := re.MatchString(repo)
	require.NoError(t, err)
	return ok
}

// The schema's repo pattern and description are written from the
// expressions the parser reads placeholders with; regenerate them with
// UPDATE_SCHEMA=1 go test -run TestTheSchemaRepoPatternIsWrittenFromTheParsersExpressions ./internal/snapshotconfig/
func TestTheSchemaRepoPatternIsWrittenFromTheParsersExpressions(t *testing.T) {
	const regenerate = "regenerate with UPDATE_SCHEMA=1 go test -run TestTheSchemaRepoPatternIsWrittenFromTheParsersExpressions ./internal/snapshotconfig/"
	if os.Getenv("UPDATE_SCHEMA") != "" {
		pattern, description := schemaRepo(t)
		data, err := os.ReadFile(schemaFile)
		require.NoError(t, err)
		data = bytes.Replace(data, jsonText(t, pattern), jsonText(t, repoSchemaPattern()), 1)
		data = bytes.Replace(data, jsonText(t, description), jsonText(t, repoSchemaDescription), 1)
		require.NoError(t, os.WriteFile(schemaFile, data, 0o644))
	}
	pattern, description := schemaRepo(t)
	assert.Equal(t, repoSchemaPattern(), pattern, regenerate)
	assert.Equal(t, repoSchemaDescription, description, regenerate)
}

// jsonText is s as the schema file writes a string: < > & as they are.
func jsonText(t testing.TB, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(s))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// An editor with the schema marks the git.repo the parser refuses, and only
// that: both read a table of addresses on either side of each rule.
func TestTheSchemaRepoPatternGivesTheParsersVerdict(t *testing.T) {
	re := repoPattern(t)
	refused := 0
	for _, repo := range []string{
		// addresses
		"https://git.example.com/team/code.git", "https://git.example.com", "https://git.example.com/",
		"https://g.example.com/a$b/c.git", "https://g.example.com/$lower.git", "https://g.example.com/a(b)/c",
		"https://g.example.com/<repository_url>.git", "https://<repository_url>.git", "https://g.example.com/team/$REPO.git",
		"https://g.example.com/${REPO}", "https://g.example.com/$(REPO)/x", "https://g.example.com/${{ vars.REPO }}",
		"https://g.example.com/&lt;repo&gt;", "https://g.example.com/%3Crepo%3E",
		// a README's stand-ins, and names that resemble them
		"https://YOUR_TOKEN@g.example.com/r.git", "https://TOKEN@g.example.com/r.git", "https://u:password@g.example.com/r.git",
		"https://u:PassWord@g.example.com/r.git", "https://u:%70assword@g.example.com/r.git", "https://ghp_xxxxxxxx@g.example.com/r.git",
		"https://u:glpat-XXXXXXXX@g.example.com/r.git", "https://ghp_xxxxxxxy@g.example.com/r.git", "https://u:tokens@g.example.com/r.git",
		"https://g.example.com/:org/:repo.git", "https://g.example.com/ORG/REPO.git", "https://g.example.com/t/REPO.git",
		"https://g.example.com/your-org/r.git", "https://g.example.com/Your_org/r.git", "https://g.example.com/yourorg/r.git",
		"https://g.example.com/ORGS/r.git", "https://g.example.com/t/REPO", "https://g.example.com/a:b/r.git",
		"http://git.example.com/code.git", "git@git.example.com:team/code.git", "https://g.example.com/r.git?x=1",
		"https://g.example.com/r.git#main", "https://g.example.com/a@b/r.git", "https://",
		// ports
		"https://g.example.com:443/r.git", "https://g.example.com:/r.git", "https://g.example.com:0443/r.git",
		"https://g.example.com:65535/r.git", "https://g.example.com:65536/r.git", "https://g.example.com:0/r.git",
		"https://g.example.com:ab/r.git", "https://[2001:db8::1]:8443/r.git", "https://[2001:db8::1]/r.git",
		"https://oauth2:ghp_TOKEN/r.git", "https://[::1]:70000/r.git",
		// tokens, which are not placeholders
		"https://ghp_abc@git.example.com/code.git", "https://oauth2:glpat-x@git.example.com/code.git",
		"https://user:Pa$$WORD@git.example.com/code.git", "https://user:$ecret99@git.example.com/code.git",
		"https://user:$GitToken9@git.example.com/code.git", "https://user:ab$$cd@git.example.com/code.git",
		"https://user:a&b;c@git.example.com/code.git", "https://u:a:$X@g.example.com/c.git", "https://$(a:b)@g.example.com/c.git",
		"https://$GIT_TOKENx@g.example.com/r.git", "https://a$GIT_TOKEN@g.example.com/r.git", "https://$env@g.example.com/r.git",
		"https://$env:ghp_Real0123@g.example.com/code.git", "https://oauth2:abc%7Bdef%7D@g.example.com/r.git",
		"https://x:%24ecret99@g.example.com/r.git", "https://x:$lower@g.example.com/r.git", "https://x:$patch9@g.example.com/r.git",
		"https://x:$Token@g.example.com/r.git", "https://a@b@g.example.com/r.git", "https://x:&lt@g.example.com/r.git",
		"https://x:&amp;@g.example.com/r.git", "https://x:%26lt@g.example.com/r.git",
		// the template's and CI files' placeholders
		"https://<token>@g.example.com/r.git", "https://${GIT_TOKEN}@g.example.com/r.git", "https://$GIT_TOKEN@g.example.com/r.git",
		"https://oauth2:$GIT_TOKEN@g.example.com/r.git", "https://$(GIT_TOKEN)@g.example.com/r.git", "https://x:${{secrets.T}}@g.example.com/r.git",
		"https://<token>@<repository_url>.git", "https://$GIT_TOKEN:x@g.example.com/r.git", "https://x:$(GIT_TOKEN)@g.example.com/r.git",
		// other shells' and build files' variables
		"https://$git_token@g.example.com/r.git", "https://x:$git_token@g.example.com/r.git", "https://x:$token@g.example.com/r.git",
		"https://x:$pat@g.example.com/r.git", "https://x:$my_pat@g.example.com/r.git", "https://x:$gitlabpat@g.example.com/r.git",
		"https://x:$patx@g.example.com/r.git", "https://x:$credentials@g.example.com/r.git", "https://x:$password@g.example.com/r.git",
		"https://x:$$GIT_TOKEN@g.example.com/r.git", "https://$$git_token@g.example.com/r.git",
		"https://x:$env:GIT_TOKEN@g.example.com/r.git", "https://$env:GIT_TOKEN@g.example.com/r.git", "https://x:$Env:git_token@g.example.com/r.git",
		"https://$ENV:x@g.example.com/r.git", "https://$env%3AGIT_TOKEN@g.example.com/r.git",
		// from a web page
		"https://&lt;token&gt;@g.example.com/r.git", "https://ghp_SECRET9&gt;@g.example.com/r.git", "https://x:&LT;ghp_SECRET9@g.example.com/r.git",
		"https://x:&#60;t&#62;@g.example.com/r.git", "https://x:&#x3C;t&#x3e;@g.example.com/r.git", "https://x:&#00060;t@g.example.com/r.git",
		// percent-encoded
		"https://%3Ctoken%3E@g.example.com/r.git", "https://%3ctoken%3e@g.example.com/r.git", "https://x:%24%7BGIT_TOKEN%7D@g.example.com/r.git",
		"https://x:%24GIT_TOKEN@g.example.com/r.git", "https://x:%26lt%3Btoken%26gt%3B@g.example.com/r.git", "https://%24%24GIT_TOKEN@g.example.com/r.git",
		"https://x:%24env%3AGIT_TOKEN@g.example.com/r.git", "https://x:%24%28GIT_TOKEN%29@g.example.com/r.git", "https://%3C%F0%9F%94%91%3E@g.example.com/r.git",
		// characters an address cannot carry in its user-info
		"https://{ghp_SECRET9}@g.example.com/r.git", "https://%GIT_TOKEN%@g.example.com/r.git", "https://[ghp_SECRET9]@g.example.com/r.git",
		"https://＜token＞@g.example.com/r.git", "https://oauth2:{x}@g.example.com/r.git", "https://x:%zz@g.example.com/r.git",
		// white space
		" https://g.example.com/r.git", "https://g.example.com/r.git ", "https://g.example.com/r.git\t", "https://g.example.com/r.git\u0085",
		// the scheme, which git reads as written
		"HTTPS://g.example.com/r.git", "Https://g.example.com/r.git",
		// a placeholder for the host before a port
		"https://<repository_url>:443/r.git", "https://$HOST:8443/r.git", "https://x:$HOST:8443/r.git",
		// a token as a log masks it or a pipeline templates it (#65, G1)
		"https://***@g.example.com/r.git", "https://x-access-token:***@g.example.com/r.git", "https://%2A%2A%2A@g.example.com/r.git",
		"https://__GIT_TOKEN__@g.example.com/r.git", "https://#{GIT_TOKEN}#@g.example.com/r.git", "https://x:a*b@g.example.com/r.git",
		"https://x:__init@g.example.com/r.git", "https://x:__lower__@g.example.com/r.git",
		// placeholders in the path, escaped or a URI template's (#65, G2)
		"https://g.example.com/&lt;org&gt;/r.git", "https://g.example.com/%3corg%3e/%3crepo%3e.git", "https://g.example.com/{owner}/{repo}.git",
		"https://g.example.com/a%3Eb/r.git", "https://g.example.com/a{b/r.git", "https://g.example.com/a&amp;b/r.git",
		// characters no one sees (#65, G3)
		"https://g.example.com/r.git\u200b", "https://g.example.com/r.git\ufeff", "https://g.example.com/r.git\u2060",
		"\ufeffhttps://g.example.com/r.git", "https://g.example.com/a\u00adb/r.git", "https://x:ghp_a\u034fb@g.example.com/r.git",
		"https://g.example.com/caf\u00e9/r.git",
	} {
		err := checkRepo(repo)
		assert.Equal(t, err == nil, schemaMatches(t, re, repo), "%q: the schema and the parser disagree (parser: %v)", repo, err)
		if err != nil {
			refused++
		}
	}
	assert.Greater(t, refused, 50, "addresses on both sides of the rules")
}

// Where the schema's pattern and the parser part, the description says
// so: the pattern refuses more only where no placeholder is involved.
func TestTheSchemaRepoPatternPartsFromTheParserOnlyWhereItsDescriptionSays(t *testing.T) {
	re := repoPattern(t)
	_, description := schemaRepo(t)
	for _, tc := range []struct {
		repo, said string
		parser     bool // what the parser accepts, which the pattern refuses
	}{
		{"https://g.example.com/My Project/_git/code", "white space or a control character anywhere in the address (write a space as %20)", true},
		{"https://g.example.com/a\u0085b/code.git", "white space or a control character anywhere", true},
		{"https://g.example.com/a\u009bb/code.git", "white space or a control character anywhere", true},
		{"https://:443/code.git", "a port without a host name", true},
		{"https://[1::2::3]/code.git", "an address in [ ] that is not an IPv6 address", false},
		{"https://g.example.com/code.git\U000E0001", "a character no one sees past U+FFFF", false},
	} {
		require.Equal(t, tc.parser, checkRepo(tc.repo) == nil, "%q: %v", tc.repo, checkRepo(tc.repo))
		assert.Equal(t, !tc.parser, schemaMatches(t, re, tc.repo), "%q", tc.repo)
		assert.Contains(t, description, tc.said)
	}
}

// Whatever the parser takes for a placeholder, in the user-info or in the
// address, the schema refuses too.
func FuzzTheSchemaRefusesEveryPlaceholderTheParserRefuses(f *testing.F) {
	for _, seed := range [][2]string{
		{"%3Ctoken%3E", "g.example.com/r.git"}, {"x:$env:GIT_TOKEN", "g.example.com/r.git"}, {"x:&#x3C;", "g.example.com/r.git"},
		{"$$git_token", "g.example.com/r.git"}, {"", "g.example.com:443/<x>"}, {"u:p", "h:1/${{ x }}"}, {"a%24b", "h/$(x)"},
	} {
		f.Add(seed[0], seed[1])
	}
	re := repoPattern(f)
	f.Fuzz(func(t *testing.T, userinfo, address string) {
		if len(userinfo)+len(address) > 200 {
			t.Skip()
		}
		repo := "https://" + userinfo + "@" + address
		if userinfo == "" {
			repo = "https://" + address
		}
		if checkPlaceholders(readAddress(repo)) == nil {
			return
		}
		assert.False(t, schemaMatches(t, re, repo), "%q: a placeholder the schema lets through", repo)
	})
}

// The schema's port is the parser's: 1 to 65535, zeros before it or not,
// or none.
func TestTheSchemaRepoPatternTakesThePortsTheParserTakes(t *testing.T) {
	re := repoPattern(t)
	for _, port := range []int{0, 1, 9, 10, 99, 100, 443, 999, 1000, 9999, 10000, 59999, 60000, 64999, 65000, 65499, 65500,
		65529, 65530, 65535, 65536, 65539, 65540, 65599, 65600, 69999, 70000, 99999, 100000} {
		for _, zeros := range []string{"", "0", "000"} {
			repo := "https://g.example.com:" + zeros + strconv.Itoa(port) + "/r.git"
			assert.Equal(t, checkRepo(repo) == nil, schemaMatches(t, re, repo), repo)
		}
	}
}

// encodeUserinfo writes s as a user-info may carry it: each byte the
// user-info cannot carry as it is, and those mask picks, as %XX, in upper
// case or small letters as mask says.
func encodeUserinfo(s string, raw func(byte) bool, mask uint64) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		bit := mask>>(i%64)&1 == 1
		switch {
		case raw(s[i]) && !bit:
			b.WriteByte(s[i])
		case bit:
			fmt.Fprintf(&b, "%%%02x", s[i])
		default:
			fmt.Fprintf(&b, "%%%02X", s[i])
		}
	}
	return b.String()
}

// A user name or password that the schema's pattern takes for a
// placeholder, written as an address carries it, is one the parser takes
// for one as git reads it: the pattern is the parser's expressions over
// percent-decoded text.
func FuzzTheSchemaReadsAUserNameAsTheParserReadsItDecoded(f *testing.F) {
	for _, s := range []string{"<token>", "${GIT_TOKEN}", "${{ secrets.T }}", "$(GIT_TOKEN)", "$GIT_TOKEN", "$git_token", "$$GIT_TOKEN",
		"$patch", "$mypat", "$Env:x", "a&lt;b", "&#x03c;", "&#00062;", "<\xff>", "<🔑>", "$ecret99", "Pa$$WORD", "<a>b>", "$(a:b)"} {
		f.Add(s, uint64(0))
		f.Add(s, uint64(0x5555))
	}
	type part struct {
		name string
		w    ecmaWriter
		ecma *regexp2.Regexp
	}
	var parts []part
	for _, p := range []struct{ name, except string }{{"user", ":"}, {"token", ""}} { // what ends the part as written
		w := ecmaWriter{raw: userinfoRaw(p.except), encoded: true}
		ecma, err := regexp2.Compile(`^(?:`+w.must(placeholderPartText)+`)$`, regexp2.ECMAScript)
		require.NoError(f, err)
		parts = append(parts, part{p.name, w, ecma})
	}
	goRe := regexp.MustCompile(`^(?:` + placeholderPartText + `)$`)
	f.Fuzz(func(t *testing.T, decoded string, mask uint64) {
		if len(decoded) > 64 {
			t.Skip()
		}
		for _, p := range parts {
			written := encodeUserinfo(decoded, p.w.raw, mask)
			require.Equal(t, decoded, percentDecoded(written))
			assert.Equal(t, goRe.MatchString(decoded), schemaMatches(t, p.ecma, written), "%s %q written %q", p.name, decoded, written)
		}
	})
}

// Only what the writer can say exactly in ECMAScript is written.
func TestTheSchemaWriterRefusesWhatItCannotSayExactly(t *testing.T) {
	w := ecmaWriter{raw: userinfoRaw(""), encoded: true}
	for _, expr := range []string{`\bword`, `^a$`, `a[^b]c`, `[α-ω]`} {
		re, err := syntax.Parse(expr, syntax.Perl)
		require.NoError(t, err)
		assert.Error(t, w.write(new(strings.Builder), re, false), expr)
	}
}
