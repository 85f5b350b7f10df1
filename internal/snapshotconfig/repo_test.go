package snapshotconfig

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The interface's own template, https://<token>@<repository_url>.git, or a
// CI file's variable, left in git.repo: the error names the placeholder and
// says how the token is given instead.
func TestARepoWithATemplatePlaceholderSaysWhatToWriteInstead(t *testing.T) {
	const apart = "give the token apart (push --git-token env://GIT_TOKEN; toolkit-snapshot takes the same flag)"
	for _, tc := range []struct {
		name, repo string
		want       []string
	}{
		{"the template's <token>", "https://<token>@git.example.com/team/code.git",
			[]string{`[0].git.repo: "<token>" (where the token goes) is a placeholder left in the address, which nothing fills in: the file is read as it is`, `git.repo carries no token; write "https://git.example.com/team/code.git"`, apart}},
		{"a shell variable with braces", "https://${GIT_TOKEN}@git.example.com/team/code.git",
			[]string{`"${GIT_TOKEN}" (where the token goes) is a placeholder`, `write "https://git.example.com/team/code.git"`, apart}},
		{"a shell variable, which parses as a token", "https://$GIT_TOKEN@git.example.com/team/code.git",
			[]string{`"$GIT_TOKEN" (where the token goes) is a placeholder`, "which nothing fills in: the file is read as it is", apart}},
		{"a variable after a user name", "https://oauth2:$GIT_TOKEN@git.example.com/team/code.git",
			[]string{`"$GIT_TOKEN" (where the token goes) is a placeholder`, `write "https://git.example.com/team/code.git"`}},
		{"GitHub Actions' expression", "https://x-access-token:${{ secrets.GIT_TOKEN }}@github.com/team/code.git",
			[]string{`"${{ secrets.GIT_TOKEN }}" (where the token goes)`, `write "https://github.com/team/code.git"`}},
		{"Azure Pipelines' macro", "https://$(GIT_TOKEN)@dev.azure.com/org/p/_git/code",
			[]string{`"$(GIT_TOKEN)" (where the token goes)`, `write "https://dev.azure.com/org/p/_git/code"`}},
		{"the template's <repository_url>", "https://<repository_url>.git",
			[]string{`"<repository_url>" is a placeholder left in the address`, "write the repository's own https address, https://host/org/repo.git"}},
		{"the template's <repository_url> before a port", "https://<repository_url>:8443/team/code.git",
			[]string{`"<repository_url>" is a placeholder left in the address`, "write the repository's own https address, https://host/org/repo.git"}},
		{"the whole template", "https://<token>@<repository_url>.git",
			[]string{`"<token>" (where the token goes) and "<repository_url>" are placeholders`, "without a token, https://host/org/repo.git", apart}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(withGitSection(tc.repo, "main", "m")))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), "not a URL")
		})
	}
}

// Placeholders as other shells, build files and web pages write them:
// refused, named, and the way to give the token said; a token is never
// shown.
func TestAPlaceholderOfAnotherShellOrAWebPageIsRefused(t *testing.T) {
	const apart = "give the token apart (push --git-token env://GIT_TOKEN; toolkit-snapshot takes the same flag)"
	for _, tc := range []struct {
		name, repo, want string
	}{
		{"a shell variable in small letters after a user name", "https://x-access-token:$git_token@github.com/org/repo.git", `"$git_token" (where the token goes) is a placeholder`},
		{"a shell variable in small letters", "https://$git_token@github.com/org/repo.git", `"$git_token" (where the token goes) is a placeholder`},
		{"a shell variable in small letters that names a token", "https://x:$token@github.com/org/repo.git", `"$token" (where the token goes) is a placeholder`},
		{"PowerShell's variable", "https://x:$env:GIT_TOKEN@github.com/org/repo.git", `"$env:GIT_TOKEN" (where the token goes) is a placeholder`},
		{"PowerShell's variable alone, which git reads as a user and a password", "https://$env:GIT_TOKEN@github.com/org/repo.git", `"$env:GIT_TOKEN" (where the token goes) is a placeholder`},
		{"PowerShell's variable in small letters", "https://x:$Env:git_token@github.com/org/repo.git", `"$env:…" (PowerShell's variable, its name not shown) (where the token goes) is a placeholder`},
		{"a variable escaped for a Makefile or Compose", "https://x:$$GIT_TOKEN@github.com/org/repo.git", `"$$GIT_TOKEN" (where the token goes) is a placeholder`},
		{"the template's <token>, HTML-escaped", "https://&lt;token&gt;@github.com/org/repo.git", `"&lt;" (an HTML-escaped < or >, copied from a web page; the rest not shown) (where the token goes) is a placeholder`},
		{"the template's <token>, HTML-escaped and percent-encoded", "https://x:%26lt%3Btoken%26gt%3B@github.com/org/repo.git", `"&lt;" (an HTML-escaped < or >, copied from a web page; the rest not shown)`},
		{"an HTML-escaped > after a token", "https://ghp_SECRET9&gt;@github.com/org/repo.git", `"&gt;" (an HTML-escaped < or >`},
		{"an HTML-escaped < in capitals", "https://x:&LT;ghp_SECRET9@github.com/org/repo.git", `"&LT;" (an HTML-escaped < or >`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusesRepo(t, tc.repo, "[0].git.repo: "+tc.want)
			refusesRepo(t, tc.repo, `write "https://github.com/org/repo.git" and `+apart)
		})
	}
}

// What is not a whole placeholder in the user-info is a token: never
// shown, nor taken for a variable; nor is what follows the path.
func TestAPlaceholderNeverShowsARealToken(t *testing.T) {
	for _, tc := range []struct {
		name, repo, secret string
		refused            bool
	}{
		{"a token beside a placeholder in the address", "https://ghp_REAL0123@<repository_url>.git", "ghp_REAL0123", true},
		{"a password with a $ and capitals in it", "https://user:Pa$$WORD@git.example.com/code.git", "Pa$$WORD", false},
		{"a whole password that is $ and small letters", "https://user:$ecret99@git.example.com/code.git", "$ecret99", false},
		{"a whole password that is $ and mixed case", "https://user:$GitToken9@git.example.com/code.git", "$GitToken9", false},
		{"a password with $$ inside", "https://user:ab$$cd@git.example.com/code.git", "ab$$cd", false},
		{"a password with & and ; in it", "https://user:a&b;c@git.example.com/code.git", "a&b;c", false},
		{"a token after a user named $env", "https://$env:ghp_Real0123@git.example.com/code.git", "ghp_Real0123", true},
		{"a variable in the query, after a token", "https://ghp_REAL0123@git.example.com/code.git?t=$GIT_TOKEN", "ghp_REAL0123", true},
		{"a password with a $ written without its @, where a port goes", "https://user:Pa$$WORD/code.git", "WORD", true},
		{"a token in Azure's macro shape written without its @", "https://$(x:ghp_REAL0123)/code.git", "ghp_REAL0123", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(withGitSection(tc.repo, "main", "m")))
			if !tc.refused {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.NotContains(t, err.Error(), tc.secret)
			assert.NotContains(t, err.Error(), "$GIT_TOKEN", "a query is never searched, so never shown")
		})
	}
}

// For any user name and address around a token in git.repo's user-info,
// no error shows the token: a placeholder is named only where it cannot
// hold part of one.
func FuzzCheckRepo(f *testing.F) {
	f.Add("", "<repository_url>.git", false)
	f.Add("oauth2", "git.example.com/$REPO/x.git", true)
	f.Add("$GIT_TOKEN", "git.example.com/code.git", true)
	f.Add("a/<", "h>/y?q=${Y}", true)
	f.Add("%3Ctoken%3E", "github.com/org/repo.git", true)
	f.Add("%24%7BGIT_TOKEN%7D", "github.com/org/repo.git", true)
	f.Add("{x}", "github.com/org/repo.git", true)
	f.Add("%GIT_TOKEN%", "github.com/org/repo.git", true)
	f.Add("＜token＞ ", "github.com/org/repo.git", true)
	f.Add("", "github.com:99999/org/repo.git", false)
	f.Add("oauth2", "github.com:ab/org/repo.git", true)
	f.Add("", "[::1]:0/org/repo.git ", false)
	f.Add("$env", "github.com/org/repo.git", true)
	f.Add("x:$env", "github.com/org/repo.git", true)
	f.Add("&lt;", "github.com/org/repo.git", true)
	f.Add("x:&lt;", "&gt;@github.com/org/repo.git", true)
	f.Add("$git_token", "github.com/org/repo.git", true)
	f.Add("x:$$", "github.com/org/repo.git", true)
	f.Add("%26lt%3B", "github.com/org/repo.git", true)
	f.Add("***", "github.com/org/repo.git", true)
	f.Add("#{", "}#@github.com/org/repo.git", true)
	f.Add("", "github.com/org/repo.git#{x}", false)
	f.Add("", "github.com/{owner}/%3Crepo%3E.git\u200b", false)
	f.Fuzz(func(t *testing.T, user, address string, withUser bool) {
		const token = "ghp_Z9q8X7w6V5u4T3s2R1"
		userinfo := token
		if withUser {
			userinfo = user + ":" + token
		}
		err := checkRepo("https://" + userinfo + "@" + address)
		if err == nil || strings.Contains(user+address, "Z9q8") {
			return
		}
		assert.NotContains(t, err.Error(), "Z9q8", "the token is shown")
	})
}

// git decodes the user-info before it sends it, so a placeholder written
// percent-encoded is the placeholder itself: refused the same way.
func TestAPercentEncodedPlaceholderIsRefusedAsGitReadsIt(t *testing.T) {
	for _, tc := range []struct {
		name, repo, want string
	}{
		{"the template's <token>, encoded", "https://%3Ctoken%3E@github.com/org/repo.git", `"%3Ctoken%3E" (git reads "<token>"; where the token goes) is a placeholder`},
		{"a shell variable with braces after a user name, encoded", "https://x:%24%7BGIT_TOKEN%7D@github.com/org/repo.git", `"%24%7BGIT_TOKEN%7D" (git reads "${GIT_TOKEN}"; where the token goes) is a placeholder`},
		{"a shell variable after a user name, its $ encoded", "https://x:%24GIT_TOKEN@github.com/org/repo.git", `"%24GIT_TOKEN" (git reads "$GIT_TOKEN"; where the token goes) is a placeholder`},
		{"an encoding in small letters", "https://%3ctoken%3e@github.com/org/repo.git", `(git reads "<token>"; where the token goes)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(withGitSection(tc.repo, "main", "m")))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "[0].git.repo: ")
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), `write "https://github.com/org/repo.git" and give the token apart (push --git-token env://GIT_TOKEN`)
		})
	}
}

// What git would send as it is, or refuse, in the user-info is named by its
// characters alone, never by the value around them, which may be a token.
func TestAUserInfoAnAddressCannotCarrySaysWhichCharactersAreWrong(t *testing.T) {
	const placeholder = "a placeholder? leave it out and give the token apart (push --git-token env://GIT_TOKEN"
	for _, tc := range []struct {
		name, userinfo, chars string
	}{
		{"a token in braces", "{ghp_SECRET9}", `"{", "}"`},
		{"a token in double braces", "{{ghp_SECRET9}}", `"{", "}"`},
		{"a Windows variable", "%ghp_SECRET9%", `"%" not followed by two hexadecimal digits`},
		{"a token in square brackets", "[ghp_SECRET9]", `"[", "]"`},
		{"a token in full-width angle brackets", "＜ghp_SECRET9＞", `"＜", "＞"`},
		{"a token after a space", " ghp_SECRET9", `" "`},
		{"a token after a user name, in braces", "oauth2:{ghp_SECRET9}", `"{", "}"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(withGitSection("https://"+tc.userinfo+"@github.com/org/repo.git", "main", "m")))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "[0].git.repo: the user-info (before the @) holds characters an address cannot carry: "+tc.chars+"; ")
			assert.Contains(t, err.Error(), placeholder)
			assert.NotContains(t, err.Error(), "SECRET9")
			assert.NotContains(t, err.Error(), "not a URL")
		})
	}
}

// git.repo starting or ending with white space is refused for it, showing
// nothing else of the value.
func TestARepoWithWhiteSpaceAroundItSaysWhere(t *testing.T) {
	for _, tc := range []struct {
		name, repo, want string
	}{
		{"a leading space", " https://ghp_SECRET9@github.com/org/repo.git", "[0].git.repo: starts with white space, which git keeps as part of the address: remove it"},
		{"a trailing space", "https://ghp_SECRET9@github.com/org/repo.git ", "[0].git.repo: ends with white space, which git keeps as part of the address: remove it"},
		{"a trailing tab", "https://github.com/org/repo.git\t", "[0].git.repo: ends with white space"},
	} {
		t.Run(tc.name, func(t *testing.T) { refusesRepo(t, tc.repo, tc.want) })
	}
}

// A port is a number from 1 to 65535; one that is not a number is not
// shown, as it may be a token written without its @.
func TestARepoWithAPortOutOfRangeSaysWhatIsAllowed(t *testing.T) {
	const allowed = "a port is a number from 1 to 65535, or none for https's 443"
	for _, tc := range []struct {
		name, repo, want string
	}{
		{"a port too big", "https://ghp_SECRET9@github.com:99999/org/repo.git", `[0].git.repo: the port after the host, "99999", is out of range: ` + allowed},
		{"port 0", "https://ghp_SECRET9@github.com:0/org/repo.git", `[0].git.repo: the port after the host, "0", is out of range: ` + allowed},
		{"a port too big on an IPv6 address", "https://[2001:db8::1]:70000/org/repo.git", `the port after the host, "70000", is out of range: ` + allowed},
		{"a port that is not a number", "https://ghp_SECRET9@github.com:ab/org/repo.git", "[0].git.repo: the port after the host is not a number (not shown): " + allowed},
		{"a token written without its @", "https://oauth2:ghp_SECRET9/org/repo.git", "[0].git.repo: the port after the host is not a number (not shown): " + allowed},
	} {
		t.Run(tc.name, func(t *testing.T) { refusesRepo(t, tc.repo, tc.want) })
	}
}

// What is allowed stays allowed: a port in range, an empty one (https's
// own), percent-encoded characters of a real token.
func TestARepoWithAPortOrAnEncodedTokenIsAccepted(t *testing.T) {
	for _, repo := range []string{
		"https://github.com:443/org/repo.git",
		"https://ghp_TOKEN@git.example.com:65535/org/repo.git",
		"https://[2001:db8::1]:8443/org/repo.git",
		"https://ghp_TOKEN@git.example.com:/org/repo.git",
		"https://oauth2:abc%7Bdef%7D@git.example.com/org/repo.git",
		"https://x:%24ecret99@git.example.com/org/repo.git",
	} {
		t.Run(repo, func(t *testing.T) {
			_, err := Parse([]byte(withGitSection(repo, "main", "m")))
			assert.NoError(t, err)
		})
	}
}

// A token written without its @ reads as a port (https://user:<token>/…):
// no error shows it either. (A user name with a / puts it in the path,
// which an address shows.)
func FuzzCheckRepoNeverShowsATokenWrittenWithoutItsAt(f *testing.F) {
	f.Add("oauth2", "/org/repo.git")
	f.Add("x", "@github.com/org/repo.git")
	f.Add("[::1]", "/org/repo.git")
	f.Add("{x}", "")
	f.Add("$env", "/org/repo.git")
	f.Add("&lt;", "@github.com/org/repo.git")
	f.Add("x:$$", "@github.com/org/repo.git")
	f.Fuzz(func(t *testing.T, user, address string) {
		const token = "ghp_Z9q8X7w6V5u4T3s2R1"
		err := checkRepo("https://" + user + ":" + token + address)
		if err == nil || strings.Contains(user+address, "Z9q8") || strings.ContainsAny(user, "/?#") {
			return
		}
		assert.NotContains(t, err.Error(), "Z9q8", "the token is shown")
	})
}

// refusesRepo checks that a git.repo is refused saying want, and that the
// error shows nothing of the token SECRET9 it may hold.
func refusesRepo(t *testing.T, repo, want string) {
	t.Helper()
	_, err := Parse([]byte(withGitSection(repo, "main", "m")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
	assert.NotContains(t, err.Error(), "SECRET9")
}

// git reads the scheme as written and knows no "HTTPS" protocol: a scheme
// in capitals is refused, saying how to write it.
func TestARepoWhoseSchemeIsNotInSmallLettersIsRefused(t *testing.T) {
	for _, repo := range []string{"HTTPS://github.com/org/repo.git", "Https://ghp_SECRET9@github.com/org/repo.git"} {
		t.Run(repo, func(t *testing.T) {
			refusesRepo(t, repo, "[0].git.repo: \"https://github.com/org/repo.git\": write the scheme in small letters, https://: git takes any other spelling for another protocol")
		})
	}
}

// A scheme without its two slashes (https:/host, https:host, https:\\host)
// is refused saying so, not that its letters are wrong (round-12 probe
// P12-2, #65).
func TestARepoMissingASlashIsToldToWriteTwo(t *testing.T) {
	for _, repo := range []string{"https:/github.com/org/repo.git", "https:github.com/org/repo.git", `https:\\github.com\org\repo.git`,
		"https:/ghp_SECRET9@github.com/org/repo.git"} {
		t.Run(repo, func(t *testing.T) {
			refusesRepo(t, repo, "[0].git.repo: ")
			refusesRepo(t, repo, "write two forward slashes after https:, https://host/org/repo.git")
		})
	}
}

// A token copied masked from a log (*** as GitHub Actions and Dagger print
// a secret) or a pipeline's token template (__GIT_TOKEN__, #{GIT_TOKEN}#)
// is refused, named, and the way to give the token said (#65, G1).
func TestAMaskedOrTemplatedTokenIsRefusedSayingWhatToDo(t *testing.T) {
	const apart = "give the token apart (push --git-token env://GIT_TOKEN"
	for _, tc := range []struct{ name, repo, want string }{
		{"masked", "https://***@github.com/org/repo.git", `"***" (a token as a log masks it; where the token goes) is a placeholder`},
		{"masked after a user name", "https://x-access-token:***@github.com/org/repo.git", `"***" (a token as a log masks it; where the token goes)`},
		{"masked and percent-encoded", "https://%2A%2A%2A@github.com/org/repo.git", `"%2A%2A%2A" (git reads "***"; a token as a log masks it; where the token goes)`},
		{"Azure's Replace Tokens", "https://__GIT_TOKEN__@github.com/org/repo.git", `"__GIT_TOKEN__" (a pipeline's token template; where the token goes)`},
		{"Replace Tokens' #{…}#", "https://#{GIT_TOKEN}#@github.com/org/repo.git", `"#{GIT_TOKEN}#" (where the token goes) is a placeholder of a pipeline's token template`},
		{"Octopus' #{…} after a user name", "https://x:#{Git.Token}@github.com/org/repo.git", `"#{Git.Token}" (where the token goes) is a placeholder`},
		{"#{…} holding what may be a token", "https://#{ghp_SECRET9}#@github.com/org/repo.git", `"#{…}" (where the token goes)`},
		{"#{…} in a fragment holding what may be a token", "https://github.com/org/repo.git#{ghp_SECRET9}", `"#{…}" is a placeholder`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusesRepo(t, tc.repo, tc.want)
			refusesRepo(t, tc.repo, apart)
		})
	}
	refusesRepo(t, "https://#{GIT_TOKEN}#@github.com/org/repo.git", `write "https://github.com/org/repo.git"`)
}

// A placeholder in the path, HTML-escaped, percent-encoded or a URI
// template's, is refused as <org> is (#65, G2).
func TestAPlaceholderInThePathIsRefusedInEverySpelling(t *testing.T) {
	for _, tc := range []struct{ repo, want string }{
		{"https://github.com/&lt;org&gt;/repo.git", `"&lt;org&gt;" is a placeholder left in the address`},
		{"https://github.com/%3Corg%3E/repo.git", `"%3Corg%3E" is a placeholder`},
		{"https://github.com/%3corg%3e/%3crepo%3e.git", `"%3corg%3e" and "%3crepo%3e" are placeholders`},
		{"https://github.com/{owner}/{repo}.git", `"{owner}" and "{repo}" are placeholders`},
		{"https://github.com/org&gt;/repo.git", `"&gt;" is a placeholder`},
	} {
		t.Run(tc.repo, func(t *testing.T) {
			refusesRepo(t, tc.repo, tc.want)
			refusesRepo(t, tc.repo, "write the repository's own https address, https://host/org/repo.git")
		})
	}
}

// A character no one sees anywhere in git.repo is refused, as white space
// around it is, named by its code point alone (#65, G3).
func TestARepoWithAnInvisibleCharacterIsRefusedNamingIt(t *testing.T) {
	for _, tc := range []struct{ repo, want string }{
		{"https://github.com/org/repo.git\u200b", "[0].git.repo: holds U+200B at its end, a character no one sees, which git keeps as part of the address: remove it"},
		{"https://github.com/org/repo.git\ufeff", "holds U+FEFF at its end"},
		{"https://github.com/org/repo.git\u2060", "holds U+2060 at its end"},
		{"\ufeffhttps://github.com/org/repo.git", "holds U+FEFF at its start"},
		{"https://ghp_SECRET9\u00ad@github.com/org/repo.git", "holds U+00AD inside it"},
		{"https://github.com/org/repo.git\U000E0001", "holds U+E0001 at its end"},
	} {
		t.Run(tc.want, func(t *testing.T) { refusesRepo(t, tc.repo, tc.want) })
	}
}

// A README's stand-ins left in git.repo are refused, saying what to do;
// a query is refused without being shown, pointing at --git-token; real
// names that merely resemble a stand-in are taken (#65, G1).
func TestAReadmesStandInIsRefusedAndARealNameTaken(t *testing.T) {
	for _, tc := range []struct{ repo, want string }{
		{"https://YOUR_TOKEN@github.com/org/repo.git", `"YOUR_TOKEN" (a README's stand-in; where the token goes) is a placeholder`},
		{"https://x-access-token:your-token@github.com/org/repo.git", `"your-token" (a README's stand-in; where the token goes)`},
		{"https://TOKEN@github.com/org/repo.git", `"TOKEN" (a README's stand-in; where the token goes)`},
		{"https://ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx@github.com/org/repo.git", `"ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" (a README's stand-in`},
		{"https://oauth2:glpat-XXXXXXXXXXXXXXXXXXXX@gitlab.com/org/repo.git", `"glpat-XXXXXXXXXXXXXXXXXXXX" (a README's stand-in`},
		{"https://user:password@github.com/org/repo.git", `"password" (a README's stand-in; where the token goes)`},
		{"https://github.com/:org/:repo.git", `"/:org" and "/:repo" are placeholders left in the address`},
		{"https://github.com/ORG/REPO.git", `"/ORG/" is a placeholder left in the address`},
		{"https://github.com/team/REPO.git", `"/REPO.git" is a placeholder`},
		{"https://github.com/your-org/your-repo.git", `"/your-org" and "/your-repo" are placeholders left in the address`},
		{"https://github.com/org/[[repo]].git", `"[[repo]]" is a placeholder left in the address`},
		{"https://https://github.com/org/repo.git", `its scheme is written twice, so git would look for a host named https: write https://host/org/repo.git once`},
		{"https://repository_url.git", `"repository_url" is a placeholder left in the address`},
		{"https://github.com/${ORG/repo.git", `"${" is a placeholder left in the address`},
		{"https://github.com/<org/repo.git", `"<" is a placeholder left in the address`},
		{"https://x-access-token:$(GIT_TOKEN@github.com/org/repo.git", `"$(GIT_TOKEN" (where the token goes) is a placeholder`},
		{"https://x-access-token:$GIT_TOKEN:@github.com/org/repo.git", `"$GIT_TOKEN:" (where the token goes) is a placeholder`},
		{"https://x-access-token:'$GIT_TOKEN'@github.com/org/repo.git", `"'$GIT_TOKEN'" (where the token goes) is a placeholder`},
		{"https://github.com/org/__REPO__.git", `"__REPO__" is a placeholder left in the address`},
		{"https://oauth2:@gitlab.com/org/repo.git", `the user-info (before the @) has an empty token after its ":" (a variable that was empty when the file was written?): git.repo carries no token; leave the user-info out and give the token apart (push --git-token`},
		{"https://github.com/org/repo.git?token=${GIT_TOKEN}", `must not have a query or fragment (not shown): git.repo carries no token or other setting; remove it and give the token apart (push --git-token`},
	} {
		_, err := Parse([]byte(withGitSection(tc.repo, "main", "m")))
		if assert.Error(t, err, tc.repo) {
			assert.Contains(t, err.Error(), tc.want, tc.repo)
			assert.NotContains(t, err.Error(), "token=", tc.repo)
		}
	}
	for _, repo := range []string{
		"https://github.com/yourcompany/tokens.git",
		"https://github.com/Org/Repo.git",
		"https://github.com/team/REPORTS.git",
		"https://github.com/team/__init__.git",
		"https://oauth2@gitlab.com/org/repo.git",
		"https://github.com/team/repo:x.git",
		"https://x-access-token:ghp_Tq7wMx2Rb9Lk4Vz8Nc3Hs6Jd5Fp1Ya0Ue@github.com/org/repo.git",
		"https://tokenbot:s3cret-passw0rd@git.example.com/org/repo.git",
	} {
		_, err := Parse([]byte(withGitSection(repo, "main", "m")))
		assert.NoError(t, err, repo)
	}
}
