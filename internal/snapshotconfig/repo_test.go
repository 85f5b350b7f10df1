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
		{"a variable in the query, after a token", "https://ghp_REAL0123@git.example.com/code.git?t=$GIT_TOKEN", "ghp_REAL0123", true},
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
