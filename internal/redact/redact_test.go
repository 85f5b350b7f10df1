package redact

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"dagger/lowcode-pipeline/internal/fielderr"
)

func TestURL(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		ok             bool
	}{
		{"a plain address", "https://git.example.com/team/app.git", "https://git.example.com/team/app.git", true},
		{"a token as user", "https://ghp_abc@git.example.com/team/app.git", "https://git.example.com/team/app.git", true},
		{"user and password", "https://user:s3cret@git.example.com/team/app.git", "https://git.example.com/team/app.git", true},
		{"a token in the query", "https://git.example.com/team/app.git?private_token=glpat-x", "https://git.example.com/team/app.git", true},
		{"everything at once", "https://u:p@hooks.example.com:8443/acme/prod?sig=abc#frag", "https://hooks.example.com:8443/acme/prod", true},
		{"an escaped path stays escaped", "https://h.example.com/a%2Fb", "https://h.example.com/a%2Fb", true},
		{"no scheme", "git.example.com/team/app.git", Unparsable, false},
		{"not a URL at all", "https://user:…@git.example.com/%zz?private_token=glpat-x", Unparsable, false},
		{"an opaque URL", "mailto:someone@example.com", Unparsable, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := URL(tc.in)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.ok, ok)
		})
	}
	assert.Equal(t, `"https://h.example.com/x"`, Quote("https://t@h.example.com/x?a=b"))
}

// For any input, what is shown holds no part of its user-info, query or
// fragment: it is only scheme, host and path, or the placeholder.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"https://u:p@h.example.com/p?q=1#f", "http://[::1]:80/x", "https://h/%zz", "ftp://a@b/c?d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		shown, ok := URL(raw)
		if !ok {
			assert.Equal(t, Unparsable, shown)
			return
		}
		u, err := url.Parse(shown)
		if !assert.NoError(t, err, "what is shown parses again") {
			return
		}
		assert.Nil(t, u.User)
		assert.Empty(t, u.RawQuery)
		assert.Empty(t, u.Fragment)
		// What is shown is exactly scheme://host/path of the input: nothing of its
		// user-info, query or fragment can be in it but by coincidence of text.
		orig, _ := url.Parse(raw)
		assert.Equal(t, (&url.URL{Scheme: orig.Scheme, Host: orig.Host, Path: orig.Path, RawPath: orig.RawPath}).String(), shown)
		assert.Equal(t, orig.Host, u.Host)
		if orig.User != nil && len(orig.User.String()) >= 4 && !strings.Contains(orig.Host+orig.Path, orig.User.String()) {
			assert.NotContains(t, shown, orig.User.String()+"@")
		}
	})
}

func TestAnAtAfterTheHostMakesAnAddressUnshowable(t *testing.T) {
	for _, raw := range []string{
		"https://user:12/SECRET@host/repo",
		"https://ab?SECRET@host",
		"https://host/path#frag@x",
	} {
		shown, ok := URL(raw)
		assert.False(t, ok, raw)
		assert.Equal(t, Unparsable, shown)
		assert.True(t, Ambiguous(raw))
	}
	assert.False(t, Ambiguous("https://tok@host/repo.git"), "user-info before the host is where a token goes")
	assert.False(t, Ambiguous("https://host"))
}

func TestURLsInATextAreShownWithoutSecrets(t *testing.T) {
	text := "fatal: unable to access 'https://git.example.com/code.git/?private_token=glpat-SECRET': 403\n" +
		"remote: see https://u:SECRET@git.example.com/x and plain text"
	got := URLsIn(text)
	assert.NotContains(t, got, "SECRET")
	assert.Contains(t, got, "'https://git.example.com/code.git/'")
	assert.Contains(t, got, "see https://git.example.com/x and plain text")
}

// A login spelt so that no address is found in it (one slash, none, an
// escaped @) is hidden all the same (round-15 probe F7).
func TestShownHidesALoginNoAddressHolds(t *testing.T) {
	for _, line := range []string{"snapshot-push: https:/ci:Pa55wordSecretXY@git.example.com/a.git",
		"snapshot-push: //ci:Pa55wordSecretXY@git.example.com/a.git", "snapshot-push: ci:Pa55wordSecretXY%40git.example.com",
		"host ci:Pa55wordSecretXY@host"} {
		got := Shown(line)
		assert.NotContains(t, got, "Pa55word", line)
		assert.Contains(t, got, "…", line)
	}
	assert.Equal(t, "To ci@git.example.com:team/app.git, as git@github.com", Shown("To ci@git.example.com:team/app.git, as git@github.com"), "a user alone")
	// git's output read again (round-17 probes F1, F2): a ref with an @ is no login
	const refs = "0123456789abcdef0123456789abcdef01234567\trefs/heads/snap@2024\nref: refs/heads/team/main@v2\tHEAD"
	assert.Equal(t, refs, URLsIn(refs))
}

func TestQuoteCutsALongAddressAsAnyValueInAnErrorIsCut(t *testing.T) {
	long := "https://ghp_token@git.example.com/" + strings.Repeat("team/", 600) + "app.git"
	for _, tc := range []struct {
		name, in   string
		wantPrefix string
		maxLen     int
	}{
		{"a short address whole, without its token", "https://t@h.example.com/x", `"https://h.example.com/x"`, 0},
		{"a long one cut, with its length", long, `"https://git.example.com/team/team/`, 2*fielderr.MaxValue + 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Quote(tc.in)
			assert.True(t, strings.HasPrefix(got, tc.wantPrefix), got)
			assert.NotContains(t, got, "ghp_token")
			if tc.maxLen > 0 {
				assert.LessOrEqual(t, len(got), tc.maxLen)
				assert.Contains(t, got, "… (")
			}
		})
	}
}
