package snapshotconfig

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/redact"
)

// tokenFlag is how the module is given the token instead of in git.repo.
const tokenFlag = "push --git-token env://GIT_TOKEN; toolkit-snapshot takes the same flag"

// address is git.repo read once: as written, cut at its user-info (what
// git and curl read as the login: up to the last @ before the path), and as
// Go's parser reads it. Each check takes what it needs of it.
type address struct {
	raw      string
	userinfo string // the user-info, without its @
	hasUser  bool
	rest     string // raw without the user-info and its @
	url      *url.URL
	urlErr   error
}

func readAddress(raw string) address {
	a := address{raw: raw, rest: raw}
	if scheme, after, found := strings.Cut(raw, "://"); found {
		end := strings.IndexAny(after, "/?#")
		if end < 0 {
			end = len(after)
		}
		if at := strings.LastIndex(after[:end], "@"); at >= 0 {
			a.userinfo, a.hasUser, a.rest = after[:at], true, scheme+"://"+after[at+1:]
		}
	}
	a.url, a.urlErr = url.Parse(raw)
	return a
}

func checkRepo(raw string) error {
	a := readAddress(raw)
	for _, check := range []func(address) error{checkSpace, checkInvisible, checkPlaceholders, checkUserinfo, checkPort, checkSchemeTwice} {
		if err := check(a); err != nil {
			return err
		}
	}
	u, err := a.url, a.urlErr
	shown := redact.Quote(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%s is not a URL: write the repository's https address, https://host/org/repo.git", shown)
	case u.Scheme != "https":
		return fmt.Errorf("%s: must be an https address (https://<repository_url>.git)", shown)
	case !strings.HasPrefix(strings.ToLower(raw), "https://"):
		return fmt.Errorf("%s: write two forward slashes after https:, https://host/org/repo.git", shown)
	case !strings.HasPrefix(raw, "https://"):
		return fmt.Errorf("%s: write the scheme in small letters, https://: git takes any other spelling for another protocol", shown)
	case u.Host == "":
		return fmt.Errorf("%s: has no host", shown)
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return fmt.Errorf("%s: must not have a query or fragment (not shown): git.repo carries no token or other setting; remove it and give the token apart (%s)", shown, tokenFlag)
	case redact.Ambiguous(raw):
		return fmt.Errorf("%s: has an @ after the host, which other tools read as credentials: put a token only as https://<token>@host/… (or pass --git-token)", shown)
	}
	return nil
}

// placeholderText is what a template leaves in an address for a person or
// a shell to fill in: <token>, <repository_url>, ${GIT_TOKEN},
// ${{ secrets.GIT_TOKEN }}, $(GIT_TOKEN), $GIT_TOKEN. Nothing fills it in:
// git would send "$GIT_TOKEN" itself as the token. It, and the texts below,
// are also the source of the schema's repo pattern (schemagen_test.go).
const placeholderText = `<[^<>]*>|\$\{\{[^{}]*\}\}|\$\{[^{}]*\}|\$\([^()]*\)|\$[A-Z_][A-Z0-9_]*`

// What else a user name or password that is a placeholder may be, whole.
const (
	// powerShellText is PowerShell's $env:GIT_TOKEN, in any case.
	powerShellText = `(?i:\$env):[A-Za-z_][A-Za-z0-9_]*`
	// shellVariableText is $git_token, or $$GIT_TOKEN as a Makefile or
	// Compose file escapes it, when its name is all capitals, or all small
	// letters that hold an _ or say what it is for (token, secret, passw,
	// cred, pat at either end). A real password may start with a $
	// ($ecret99, $GIT_TOKENx), so other names are not taken for one.
	shellVariableText = `\$\$?(?:[A-Z_][A-Z0-9_]*|(?:[a-z_][a-z0-9_]*)?(?:_|token|secret|passw|cred)[a-z0-9_]*|pat[a-z0-9_]*|[a-z_][a-z0-9_]*pat)`
	// htmlEscapedText is < or > as a web page escapes them, &lt;token&gt;:
	// anywhere in a user name or password
	htmlEscapedText = `(?i)&(?:lt|gt);|&#0*(?:60|62);|&#x0*3[ce];`
	// maskedText is a token as a log masks it (*** in GitHub Actions' and
	// Dagger's output) or Azure's Replace Tokens template, __GIT_TOKEN__:
	// copied from a log or a pipeline, never a token itself
	maskedText = `\*+|__[A-Z][A-Z0-9_]*__`
	// readmeText is a README's or a guide's stand-in for a token or a
	// password, whole: YOUR_TOKEN, your-password, TOKEN, password,
	// access_token, or a known token prefix then a run of x (ghp_xxxx…).
	// No host issues such a token, and no one picks such a password for a
	// bot that pushes.
	readmeText = `(?i:your[-_][a-z0-9_-]*|token|password|passwd|secret|(?:access|api|git|personal[-_]access)[-_]?token)|(?:gh[pousr]_|github_pat_|glpat-)(?:x{4,}|X{4,})`
	// readmePathText is a README's stand-in for a path segment: a route
	// parameter (/:org), a word in capitals that names what goes there
	// (/ORG/, /REPO.git), or your-… (/your-org/). An organization or
	// repository named so in earnest is unlikely: it is refused too.
	readmePathText = `/:[A-Za-z_][A-Za-z0-9_]*|/(?:ORG|ORGANI[SZ]ATION|OWNER|USER|USERNAME|GROUP|NAMESPACE|PROJECT|REPO|REPOSITORY|ORG_NAME|REPO_NAME)(?:/|\.git)|/(?i:your)[-_][A-Za-z0-9_-]*`
	// addressOnlyText is what the address (past the user-info) may not hold
	// besides placeholderText: <…> HTML-escaped or percent-encoded, either
	// bracket alone, raw or escaped, a URI template's {owner}, a [[repo]], a
	// pipeline template's __REPO__, ${ or $( left unclosed, and the
	// interface's own template word, repository_url.
	addressOnlyText = `(?i:&lt;|&#0*60;|&#x0*3c;|%3c)(?:[^/?#<>&%]*(?i:&gt;|&#0*62;|&#x0*3e;|%3e))?|(?i:&gt;|&#0*62;|&#x0*3e;|%3e)|[<>]|\{[^{}/]*\}|\[\[[^\[\]/]*\]\]|__[A-Z][A-Z0-9_]*__|\$[{(]|(?i:repository_url)`
	// addressPlaceholderText is every placeholder searched for in the address.
	addressPlaceholderText = placeholderText + `|` + addressOnlyText + `|` + readmePathText
)

var (
	placeholderIn = regexp.MustCompile(addressPlaceholderText)
	masked        = regexp.MustCompile(`^(?:` + maskedText + `)$`)
	// hashPlaceholder is Octopus' #{GIT_TOKEN} and Replace Tokens'
	// #{GIT_TOKEN}#: its # starts a fragment, so no parser sees a host.
	hashPlaceholder = regexp.MustCompile(`#\{([^{}]*)\}#?`)
	// templateName is a variable's name as templates write it, in capitals
	// or dotted (Git.Token), which may be shown: never a token's shape
	templateName     = regexp.MustCompile(`^(?:[A-Z_][A-Z0-9_]*|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)$`)
	placeholderWhole = regexp.MustCompile(`^(?:` + placeholderText + `)$`)
	powerShellEnv    = regexp.MustCompile(`^(?:` + powerShellText + `)$`)
	shellVariable    = regexp.MustCompile(`^(?:` + shellVariableText + `)$`)
	htmlEscaped      = regexp.MustCompile(htmlEscapedText)
	readme           = regexp.MustCompile(`^(?:` + readmeText + `)$`)
	upperName        = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
)

// placeholderPartText is what userinfoPlaceholder takes for a placeholder,
// as one expression a whole user name or password (as git reads it) matches.
const placeholderPartText = placeholderText + `|` + powerShellText + `|` + shellVariableText + `|` + maskedText + `|` + readmeText + `|(?s:.*)(?:` + htmlEscapedText + `)(?s:.*)|` + leftoverText

// leftoverText is a placeholder a shell or a hand left half done: quoted
// ('$GIT_TOKEN'), followed by colons ($GIT_TOKEN:), or ${ or $( unclosed
// before a name in capitals (never a token's shape, so it may be shown).
const leftoverText = `'(?:` + placeholderText + `|` + shellVariableText + `)'|(?:` + placeholderText + `|` + shellVariableText + `):+|\$[{(][A-Z_][A-Z0-9_]*`

var leftover = regexp.MustCompile(`^(?:` + leftoverText + `)$`)

// userinfoPlaceholder says whether part, a user name or password that git
// reads as read, is a placeholder, and how it is shown: whole when it
// cannot be a token, else by the marks that make it one alone.
func userinfoPlaceholder(part, read string) (string, bool) {
	switch {
	case placeholderWhole.MatchString(read):
		return fielderr.Quote(part), true
	case masked.MatchString(read), readme.MatchString(read), leftover.MatchString(read):
		return fielderr.Quote(part), true
	case powerShellEnv.MatchString(read):
		if _, name, _ := strings.Cut(read, ":"); upperName.MatchString(name) {
			return fielderr.Quote(part), true
		}
		return `"$env:…" (PowerShell's variable, its name not shown)`, true
	case htmlEscaped.MatchString(read):
		return fmt.Sprintf("%s (an HTML-escaped < or >, copied from a web page; the rest not shown)", fielderr.Quote(htmlEscaped.FindString(read))), true
	}
	if shellVariable.MatchString(read) {
		return fielderr.Quote(part), true
	}
	return "", false
}

// checkPlaceholders refuses git.repo with a placeholder of the interface's
// template (https://<token>@<repository_url>.git) or of a CI file left in
// it, naming it and saying what to write instead. Only what an address
// shows is searched, and in the user-info only a whole user name or token
// is taken for one: no part of a real token or query is ever shown.
func checkPlaceholders(a address) error {
	raw, userinfo, rest, hasUser := a.raw, a.userinfo, a.rest, a.hasUser
	if err := checkHashPlaceholder(raw); err != nil {
		return err
	}
	var inToken, inAddress []string
	if hasUser {
		user, token, _ := strings.Cut(userinfo, ":")
		parts := []string{user, token}
		if powerShellEnv.MatchString(percentDecoded(userinfo)) {
			parts = []string{userinfo} // $env:GIT_TOKEN, which git reads as a user name and a password
		}
		for _, part := range parts {
			// git decodes the user-info before it sends it
			read := percentDecoded(part)
			shown, ok := userinfoPlaceholder(part, read)
			if !ok {
				continue
			}
			var what []string
			if read != part && shown == fielderr.Quote(part) {
				what = append(what, "git reads "+fielderr.Quote(read))
			}
			switch {
			case masked.MatchString(read) && strings.HasPrefix(read, "*"):
				what = append(what, "a token as a log masks it")
			case masked.MatchString(read):
				what = append(what, "a pipeline's token template")
			case readme.MatchString(read):
				what = append(what, "a README's stand-in")
			}
			where := "(" + strings.Join(append(what, "where the token goes"), "; ") + ")"
			inToken = append(inToken, shown+" "+where)
		}
	}
	// what redact would show of the address: nothing when an @ follows the
	// host (other tools read credentials up to it), else all but the query
	if !redact.Ambiguous(raw) {
		shown, _, _ := strings.Cut(rest, "?")
		shown, _, _ = strings.Cut(shown, "#")
		for _, p := range placeholderIn.FindAllString(withoutPortLike(shown), 3) {
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

// checkHashPlaceholder refuses #{GIT_TOKEN} or #{GIT_TOKEN}# anywhere in
// raw, before its # is read as a fragment's start. Only a name is shown.
func checkHashPlaceholder(raw string) error {
	m := hashPlaceholder.FindStringSubmatchIndex(raw)
	if m == nil {
		return nil
	}
	shown := `"#{…}"`
	if templateName.MatchString(raw[m[2]:m[3]]) {
		shown = fielderr.Quote(raw[m[0]:m[1]])
	}
	const found = " is a placeholder of a pipeline's token template left in the address, which nothing fills in: the file is read as it is"
	if host, ok := strings.CutPrefix(raw[m[1]:], "@"); ok {
		rest := "https://" + host
		return fmt.Errorf("%s (where the token goes)%s: git.repo carries no token; write %s and give the token apart (%s)", shown, found, withoutUserinfo(rest), tokenFlag)
	}
	return fmt.Errorf("%s%s: write the repository's own https address, https://host/org/repo.git, and give the token apart (%s)", shown, found, tokenFlag)
}

// withoutPortLike is address without its host when what follows a colon in
// it is not a port number: it may be a token whose @ was left out
// (https://user:<token>/…), which no placeholder named may show part of.
func withoutPortLike(address string) string {
	scheme, after, found := strings.Cut(address, "://")
	if !found {
		return address
	}
	end := strings.IndexAny(after, "/")
	if end < 0 {
		end = len(after)
	}
	if _, port, hasPort := strings.Cut(after[:end], ":"); !hasPort || strings.Trim(port, "0123456789") == "" {
		return address
	}
	return scheme + "://" + after[end:]
}

// withoutUserinfo is an address cut of its user-info, quoted as an address
// is shown, or the shape of one when it does not parse.
func withoutUserinfo(rest string) string {
	if shown, ok := redact.URL(rest); ok {
		return fielderr.Quote(shown)
	}
	return "https://host/org/repo.git"
}

// checkSpace refuses white space around git.repo: git keeps it, and a
// person reading the file does not see it.
func checkSpace(a address) error {
	raw := a.raw
	const keeps = " white space, which git keeps as part of the address: remove it"
	first, _ := utf8.DecodeRuneInString(raw)
	last, _ := utf8.DecodeLastRuneInString(raw)
	switch {
	case raw == "":
		return nil
	case unicode.IsSpace(first):
		return errors.New("starts with" + keeps)
	case unicode.IsSpace(last):
		return errors.New("ends with" + keeps)
	}
	return nil
}

// checkInvisible refuses a character no one sees anywhere in git.repo (a
// format character such as U+200B or U+FEFF, or another default-ignorable
// one): like white space around it, git keeps it, and a person reading the
// file does not see it. It is named by its code point alone.
func checkInvisible(a address) error {
	raw := a.raw
	i := strings.IndexFunc(raw, invisible)
	if i < 0 {
		return nil
	}
	r, size := utf8.DecodeRuneInString(raw[i:])
	where := "inside it"
	switch {
	case i == 0:
		where = "at its start"
	case i+size == len(raw):
		where = "at its end"
	}
	return fmt.Errorf("holds %U %s, a character no one sees, which git keeps as part of the address: remove it", r, where)
}

// invisible is a character a reader does not see: a format character or
// another default-ignorable one, as redact reads a gap.
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// checkUserinfo refuses a user-info with characters an address cannot carry
// as they are ({token}, [token], %GIT_TOKEN%, ＜token＞, a space), naming the
// characters alone: the rest may be a token.
func checkUserinfo(a address) error {
	userinfo := a.userinfo
	if !a.hasUser {
		return nil
	}
	var bad []string
	seen := map[rune]bool{}
	badPercent := false
	for i, r := range userinfo {
		switch {
		case r == '%':
			badPercent = badPercent || !escape(userinfo[i:])
		case userinfoChar(r) || seen[r]:
		case len(bad) < 6:
			seen[r] = true
			bad = append(bad, fielderr.Quote(string(r)))
		}
	}
	if badPercent {
		bad = append(bad, `"%" not followed by two hexadecimal digits`)
	}
	// the user name is not shown: it may be a token itself
	if _, token, hasToken := strings.Cut(userinfo, ":"); len(bad) == 0 && hasToken && token == "" {
		return fmt.Errorf("the user-info (before the @) has an empty token after its \":\" (a variable that was empty when the file was written?): "+
			"git.repo carries no token; leave the user-info out and give the token apart (%s)", tokenFlag)
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("the user-info (before the @) holds characters an address cannot carry: %s; "+
		"a placeholder? leave it out and give the token apart (%s); a token that holds them is written percent-encoded",
		strings.Join(bad, ", "), tokenFlag)
}

// userinfoSigns are the signs RFC 3986 lets a user-info carry as they are
// besides letters and digits (and "@", which Go's parser takes and
// redact.Ambiguous judges); "%" starts an escape.
const userinfoSigns = "-._~!$&'()*+,;=:@"

// userinfoChar is what a user-info may carry as it is.
func userinfoChar(r rune) bool {
	return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		strings.ContainsRune(userinfoSigns, r))
}

// escape says whether s starts with a percent-encoded byte, %XX.
func escape(s string) bool {
	if len(s) < 3 || s[0] != '%' {
		return false
	}
	_, err := strconv.ParseUint(s[1:3], 16, 8)
	return err == nil
}

// percentDecoded is s with each %XX decoded, as git and curl decode a
// user-info: an escape that is not one stays as it is.
func percentDecoded(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if escape(s[i:]) {
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// checkSchemeTwice refuses an address whose scheme is written twice
// (https://https://host/…): git would look for a host named https.
func checkSchemeTwice(a address) error {
	_, after, _ := strings.Cut(a.rest, "://")
	if lower := strings.ToLower(after); strings.HasPrefix(lower, "https:") || strings.HasPrefix(lower, "http:") {
		return errors.New("its scheme is written twice, so git would look for a host named https: write https://host/org/repo.git once")
	}
	return nil
}

// checkPort refuses a port out of 1–65535. One that is not a number is not
// shown: it may be a token whose @ was left out (https://user:<token>/…).
func checkPort(a address) error {
	const allowed = "a port is a number from 1 to 65535, or none for https's 443"
	_, after, found := strings.Cut(a.rest, "://")
	if !found {
		return nil
	}
	if end := strings.IndexAny(after, "/?#"); end >= 0 {
		after = after[:end]
	}
	if strings.HasPrefix(after, "[") {
		_, after, _ = strings.Cut(after, "]")
	}
	_, port, hasPort := strings.Cut(after, ":")
	if !hasPort || port == "" {
		return nil
	}
	if strings.Trim(port, "0123456789") != "" {
		return fmt.Errorf("the port after the host is not a number (not shown): %s", allowed)
	}
	if n, err := strconv.Atoi(port); err == nil && n >= 1 && n <= 65535 {
		return nil
	}
	shown := fmt.Sprintf("a number of %d digits", len(port))
	if len(port) <= 6 {
		shown = fielderr.Quote(port)
	}
	return fmt.Errorf("the port after the host, %s, is out of range: %s", shown, allowed)
}
