package snapshotconfig

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/redact"
)

// tokenFlag is how the module is given the token instead of in git.repo.
const tokenFlag = "push --git-token env://GIT_TOKEN; toolkit-snapshot takes the same flag"

func checkRepo(raw string) error {
	if err := checkPlaceholders(raw); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	shown := redact.Quote(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%s is not a URL: write the repository's https address, https://host/org/repo.git", shown)
	case u.Scheme != "https":
		return fmt.Errorf("%s: must be an https address (https://<repository_url>.git)", shown)
	case u.Host == "":
		return fmt.Errorf("%s: has no host", shown)
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return fmt.Errorf("%s: must not have a query or fragment", shown)
	case redact.Ambiguous(raw):
		return fmt.Errorf("%s: has an @ after the host, which other tools read as credentials: put a token only as https://<token>@host/… (or pass --git-token)", shown)
	}
	return nil
}

// placeholderText is what a template leaves in an address for a person or
// a shell to fill in: <token>, <repository_url>, ${GIT_TOKEN},
// ${{ secrets.GIT_TOKEN }}, $(GIT_TOKEN), $GIT_TOKEN. Nothing fills it in:
// git would send "$GIT_TOKEN" itself as the token.
const placeholderText = `<[^<>]*>|\$\{\{[^{}]*\}\}|\$\{[^{}]*\}|\$\([^()]*\)|\$[A-Z_][A-Z0-9_]*`

var (
	placeholderIn    = regexp.MustCompile(placeholderText)
	placeholderWhole = regexp.MustCompile(`^(?:` + placeholderText + `)$`)
)

// checkPlaceholders refuses git.repo with a placeholder of the interface's
// template (https://<token>@<repository_url>.git) or of a CI file left in
// it, naming it and saying what to write instead. Only what an address
// shows is searched, and in the user-info only a whole user name or token
// is taken for one: no part of a real token or query is ever shown.
func checkPlaceholders(raw string) error {
	userinfo, rest, hasUser := splitUserinfo(raw)
	var inToken, inAddress []string
	if hasUser {
		user, token, _ := strings.Cut(userinfo, ":")
		for _, part := range []string{user, token} {
			if placeholderWhole.MatchString(part) {
				inToken = append(inToken, fielderr.Quote(part)+" (where the token goes)")
			}
		}
	}
	// what redact would show of the address: nothing when an @ follows the
	// host (other tools read credentials up to it), else all but the query
	if !redact.Ambiguous(raw) {
		shown, _, _ := strings.Cut(rest, "?")
		shown, _, _ = strings.Cut(shown, "#")
		for _, p := range placeholderIn.FindAllString(shown, 3) {
			inAddress = append(inAddress, fielderr.Quote(p))
		}
	}
	named := append(inToken, inAddress...)
	if len(named) == 0 {
		return nil
	}
	what := "is a placeholder"
	if len(named) > 1 {
		what = "are placeholders"
	}
	found := fmt.Sprintf("%s %s left in the address, which nothing fills in: the file is read as it is", strings.Join(named, " and "), what)
	switch {
	case len(inToken) > 0 && len(inAddress) > 0:
		return fmt.Errorf("%s: write the repository's own address without a token, https://host/org/repo.git, and give the token apart (%s)", found, tokenFlag)
	case len(inToken) > 0:
		return fmt.Errorf("%s: git.repo carries no token; write %s and give the token apart (%s)", found, withoutUserinfo(rest), tokenFlag)
	}
	return fmt.Errorf("%s: write the repository's own https address, https://host/org/repo.git", found)
}

// splitUserinfo cuts raw into the user-info of its authority (up to the
// last @ before the path) and what follows it.
func splitUserinfo(raw string) (userinfo, rest string, ok bool) {
	scheme, after, found := strings.Cut(raw, "://")
	if !found {
		return "", raw, false
	}
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	at := strings.LastIndex(after[:end], "@")
	if at < 0 {
		return "", raw, false
	}
	return after[:at], scheme + "://" + after[at+1:], true
}

// withoutUserinfo is an address cut of its user-info, quoted as an address
// is shown, or the shape of one when it does not parse.
func withoutUserinfo(rest string) string {
	if shown, ok := redact.URL(rest); ok {
		return fielderr.Quote(shown)
	}
	return "https://host/org/repo.git"
}
