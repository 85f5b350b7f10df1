package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompileAcceptsJavaScriptSyntax(t *testing.T) {
	for _, p := range []string{
		`.*`, `^(?!backend-a$).*`, `(?<=v)1`, `(?<!x)y`, `(?<name>a)\k<name>`, `(?:a|b)`,
		`(?=a)a`, `[\s\S]`, `\d+\.\d+`, `\/`, `a{2,3}`, `\u0041`, `\x41`, `\cJ`, `[\b]`,
		`^registry\.example\.com/team/app-[a-z]+:v?\d+$`, `(a)\1`, ``,
	} {
		t.Run(p, func(t *testing.T) {
			_, err := Compile(p, 0)
			assert.NoError(t, err)
		})
	}
}

func TestCompileRejectsWhatJavaScriptRejectsOrReadsDifferently(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{`(?i)api`, `inline flags "(?i)"`},
		{`(?i:api)`, `inline flags`},
		{`(?-i)api`, `inline flags`},
		{`(?>a+)b`, `atomic group`},
		{`(?#note)a`, `comment group`},
		{`(?(a)b|c)`, `conditional group`},
		{`(?'n'x)`, `JavaScript writes (?<name>…)`},
		{`(?<a-b>x)`, `balancing groups`},
		{`(?P<n>x)`, `not ECMAScript syntax`},
		{`\Aapi`, `escape "\A"`},
		{`api\Z`, `escape "\Z"`},
		{`api\z`, `escape "\z"`},
		{`\Gx`, `escape "\G"`},
		{`\e`, `escape "\e"`},
		{`\p{L}`, `needs the u flag`},
		{`\P{L}`, `needs the u flag`},
		{`\u{41}`, `code point escape`},
		{`\k`, `must name a group`},
		{`[a-z-[aeiou]]`, `character class subtraction`},
		{`x[]`, `empty class`},
		{`[^]`, `any character`},
		{`(`, `missing closing )`},
		{`a\`, `trailing backslash`},
		{`a++`, `nested repetition`},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			_, err := Compile(tc.pattern, 0)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestMatchHasRegExpTestSemantics(t *testing.T) {
	for _, tc := range []struct {
		name, pattern, input string
		want                 bool
	}{
		{"unanchored search finds a substring", `api`, "registry.example.com/api:1.0", true},
		{"a leading ^ anchors at the start", `^api`, "registry.example.com/api:1.0", false},
		{"a trailing $ anchors at the end", `:1\.0$`, "registry.example.com/api:1.0", true},
		{"dot is not escaped by magic", `a.i`, "registry/api:1", true},
		{"catch-all matches the empty name", `.*`, "", true},
		{"negative look-ahead excludes one backend", `^(?!backend-a$).*`, "backend-a", false},
		{"negative look-ahead keeps the others", `^(?!backend-a$).*`, "backend-b", true},
		{"negative look-ahead keeps a longer name", `^(?!backend-a$).*`, "backend-ab", true},
		{"matching is case-sensitive", `API`, "api", false},
		{"look-behind works", `(?<=:)v2`, "app:v2", true},
		{"\\d is ASCII digits only, as in JavaScript", `^\d$`, "٣", false},
		{"\\w is ASCII word characters only, as in JavaScript", `^\w$`, "é", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			re, err := Compile(tc.pattern, 0)
			require.NoError(t, err)
			got, err := Match(re, tc.input)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestMatchTimeoutIsAnErrorNamingThePattern(t *testing.T) {
	re, err := Compile(`^(a+)+$`, 20*time.Millisecond)
	require.NoError(t, err)
	_, err = Match(re, strings.Repeat("a", 40)+"!")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `pattern "^(a+)+$"`)
	assert.Contains(t, err.Error(), "timeout")
}

func TestParseFlag(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Rule
		err      string
	}{
		{name: "arrow with spaces", in: "app-a:.* -> backend-a", want: Rule{"app-a:.*", "backend-a"}},
		{name: "arrow without spaces", in: ".*->.*", want: Rule{".*", ".*"}},
		{name: "look-ahead target", in: "app-b -> ^(?!backend-a$).*", want: Rule{"app-b", "^(?!backend-a$).*"}},
		{name: "look-ahead with = stays intact", in: "(?=app) -> x", want: Rule{"(?=app)", "x"}},
		{name: "no arrow", in: "app-a backend-a", err: "found 0"},
		{name: "two arrows", in: "a -> b -> c", err: "found 2"},
		{name: "empty target", in: "a -> ", err: "must be non-empty"},
		{name: "empty source", in: " -> b", err: "must be non-empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFlag(tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func FuzzCompileAndMatch(f *testing.F) {
	for _, s := range []string{`.*`, `^(?!a$).*`, `(?i)x`, `[a-z-[b]]`, `(?<n>a)\k<n>`, `\p{L}`, `(a+)+$`, `[^]`} {
		f.Add(s, "backend-a")
	}
	f.Fuzz(func(t *testing.T, pattern, input string) {
		re, err := Compile(pattern, 20*time.Millisecond)
		if err != nil {
			return
		}
		_, _ = Match(re, input) // must not panic or hang past the limit
	})
}

func FuzzParseFlag(f *testing.F) {
	f.Add("a -> b")
	f.Add("->")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseFlag(s)
		if err == nil && (r.Source == "" || r.Target == "" || strings.Contains(r.Source, RuleSeparator)) {
			t.Fatalf("ParseFlag(%q) accepted %+v", s, r)
		}
	})
}
