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
		`(?<\u0061b>x)\k<ab>`, `(?<ab>x)\k<\u0061b>`, `(?<\u{61}>x)`, `(?<\ud835\udc9c>x)`, `(?<a\u200c>x)`,
	} {
		t.Run(p, func(t *testing.T) {
			_, err := Compile(p)
			assert.NoError(t, err)
		})
	}
}

// What JavaScript rejects is refused with a message that says why (that
// Node accepts and refuses the same patterns is node_test.go's business).
func TestCompileExplainsWhatJavaScriptRejects(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{`(?i)api`, `flags "(?i)" are not JavaScript syntax: JavaScript takes (?ims-ims:…) around a part of the pattern`},
		{`(?>a+)b`, `atomic group`},
		{`(?#note)a`, `comment group`},
		{`(?(a)b|c)`, `conditional group`},
		{`(?'n'x)`, `JavaScript writes (?<name>…)`},
		{`(?<a-b>x)`, `with an identifier name`},
		{`(?<\u0020>x)`, `with an identifier name`},
		{`(?<\u0030>x)`, `with an identifier name`},
		{`(?<\ud835>x)`, `with an identifier name`},
		{`(?<a\x41>x)`, `with an identifier name`},
		{`(?<\u{110000}>x)`, `with an identifier name`},
		{`(?<ab>x)(?<\u0061b>y)`, `duplicate group name "ab": a name repeats only in different alternatives`},
		{`(?<a>x)\k<\u0020>`, `\k<\u0020>: a group's name is an identifier`},
		{`(?P<n>x)`, `group "(?P<n>x)" is not JavaScript syntax`},
		{`(?<n>a)(?<n>b)`, `duplicate group name "n": a name repeats only in different alternatives`},
		{`(?<a>x|(?<a>y))`, `duplicate group name "a"`},
		{`(?<a>x)[\k]`, `\k in a character class: in a pattern with named groups \k only refers to a group`},
		{`[\k](?<a>x)`, `\k in a character class`},
		{`(?<a>x)[a-\k]`, `\k in a character class`},
		{`(?i:api|[w]orker)`, `character class "[w]" after a | inside a (?i:…) group: there Node's V8 matches it case-sensitively, unlike the ECMAScript standard`},
		{`(?i:x|(?:[^a]))`, `give each alternative its own group, e.g. (?i:api)|(?i:[w]orker)`},
		{`(?<=a)*`, `nothing to repeat: JavaScript does not repeat the assertion`},
		{`^*`, `nothing to repeat`},
		{`\b+`, `nothing to repeat`},
		{`x{3,2}`, `numbers out of order in the {3,2} quantifier`},
		{`[z-a]`, `range out of order in character class`},
		{`\k<x>(?<n>a)`, `\k<x> names no group of the pattern`},
		{`^(.)(?i:\1)$`, `at offset 10: a back-reference inside a case-insensitive (?i:…) part`},
		{`^(?<x>.)(?i:\k<x>)$`, `put the back-reference outside (?i:…)`},
		{"(?<a>x)\\k<\u3164>", `\k<\u3164> names no group of the pattern`},
		{"(?<a>x)\\k<a\x1b[2J>", `\k<a\x1b[2J>: a group's name is an identifier`},
		{`(`, `unterminated group`},
		{`a)`, `unmatched ")"`},
		{`[a`, `unterminated character class`},
		{`a\`, `\ at end of pattern`},
		{`a++`, `nothing to repeat before +`},
		{"a\xff", `not valid UTF-8`},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			_, err := Compile(tc.pattern)
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
		{"\\b is an ASCII word boundary", `caf\b`, "café", true},
		{"dot is one UTF-16 unit", `^.$`, "😀", false},
		{"two units make an emoji", `^.{2}$`, "😀", true},
		{"a class holds units, not code points", `^[😀]$`, "😀", false},
		{"dot stops at JavaScript's line terminators", `^.$`, "\u2028", false},
		{"[^] is any unit", `^[^]$`, "\n", true},
		{"[] matches nothing", `[]`, "anything", false},
		{"\\u{41} is u repeated 41 times", `^\u{41}$`, strings.Repeat("u", 41), true},
		{"a modifier makes a part case-insensitive", `(?i:a)b`, "Ab", true},
		{"a case-insensitive class takes the other case of its range", `^(?i:[a-c])$`, "B", true},
		{"a negated case-insensitive class leaves out the other case too", `^(?i:[^a-c])$`, "B", false},
		{"(?-i:…) is case-sensitive again", `^(?i:a(?-i:b))$`, "AB", false},
		{"the Kelvin sign is not k: its upper case is itself", `^(?i:\u212a)$`, "k", false},
		{"k is not the Kelvin sign", `^(?i:k)$`, "\u212a", false},
		{"the Angstrom sign is not å", `^(?i:\u212b)$`, "å", false},
		{"ſ is not s: a non-ASCII letter never folds to ASCII", `^(?i:ſ)$`, "s", false},
		{"İ is not i", `^(?i:İ)$`, "i", false},
		{"final sigma is sigma: both are Σ in upper case", `^(?i:ς)$`, "σ", true},
		{"ϑ is θ", `^(?i:θ)$`, "ϑ", true},
		{"the micro sign is mu", `^(?i:µ)$`, "μ", true},
		{"ß is not ẞ: its upper case is SS, two units", `^(?i:ß)$`, "ẞ", false},
		{"ǅ is Ǆ and ǆ", `^(?i:ǅ)$`, "ǆ", true},
		{"a class escape is not widened", `^(?i:\W)$`, "\u212a", true},
		{"an escaped letter folds", `^(?i:\x6b)$`, "K", true},
		{"a back-reference to a case-insensitive group is compared as it was matched", `^(?i:(a))\1$`, "AA", true},
		{"... and with its own case", `^(?i:(a))\1$`, "Aa", false},
		{"a named group written with an escape", `^(?<\u0061b>x)\k<ab>$`, "xx", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			re, err := Compile(tc.pattern)
			require.NoError(t, err)
			assert.Equal(t, tc.want, Match(re, tc.input))
		})
	}
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
	for _, s := range []string{`.*`, `^(?!a$).*`, `(?i)x`, `[a-z-[b]]`, `(?<n>a)\k<n>`, `\p{L}`, `(a+)+$`, `[^]`,
		`(?i:[^\u212a-z]ſ\x41)`, `(?<\u0061\u{62}>x)\k<ab>`, `(?i:(?<a>k)\k<a>\1)`, `^(?:(a)|b)+\1$`, `^((a)|b)+\1$`, `^(?=((?:b?|a)+))\1$`} {
		f.Add(s, "backend-a")
	}
	f.Fuzz(func(t *testing.T, pattern, input string) {
		re, err := Compile(pattern)
		if err != nil {
			// the reason, with a cut of the pattern at most, however long it is
			assert.Less(t, len(err.Error()), 600, "a short error: %.300s", err)
			return
		}
		_ = Match(re, input) // must not panic (nor hang: see backtrack_test.go)
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

func TestParseFlagsChecksEveryRule(t *testing.T) {
	rs, err := ParseFlags("--deploy-rule", []string{"/api: -> ^api$", ".*->.*"})
	require.NoError(t, err)
	assert.Equal(t, []Rule{{"/api:", "^api$"}, {".*", ".*"}}, rs)

	_, err = ParseFlags("--deploy-rule", []string{"no arrow", "a -> b -> c"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--deploy-rule: deploy rule "no arrow"`)
	assert.Contains(t, err.Error(), `--deploy-rule: deploy rule "a -> b -> c"`, "every malformed rule is named")

	_, err = ParseFlags("--deploy-rule", []string{"(?i)api -> .*"})
	assert.ErrorContains(t, err, "--deploy-rule[0].source")

	_, err = ParseFlags("--deploy-rule", nil)
	assert.EqualError(t, err, "--deploy-rule: give at least one rule, e.g. --deploy-rule '.* -> .*'")
}

func TestALongPatternIsRefusedBeforeItCostsCompiling(t *testing.T) {
	start := time.Now()
	_, err := Compile(strings.Repeat("(a)", 100_000))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "300000 characters: a pattern has at most 4096")
	assert.Less(t, time.Since(start), 5*time.Second, "refused, not compiled (it took 79 s)")
	_, err = Compile(strings.Repeat("(a)", 1365))
	assert.NoError(t, err, "4095 characters compile")
}

func TestAPatternIsTranslatedOnceForTheCheckAndThePlan(t *testing.T) {
	const p = `^registry\.example\.com/(?<team>[a-z]+)/api:`
	_, err := Compile(p)
	require.NoError(t, err)
	translations.Lock()
	_, kept := translations.m[p]
	translations.Unlock()
	assert.True(t, kept, "the translation is kept for the next Compile of the same pattern")
}

func BenchmarkTranslateManyGroups(b *testing.B) {
	p := strings.Repeat("(a)", 1365)
	for b.Loop() {
		if _, err := translate(p); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHugeRulesGiveSmallErrors(t *testing.T) {
	_, err := ParseFlag(strings.Repeat("a", 300_000))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 1024, "a 300 KB flag is not echoed whole")
	_, err = Compile(`\k<` + strings.Repeat("b", 3000) + ">(?<a>x)")
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 1024, "a long group name is cut")
}

// A class written with many ranges costs no more than the units it holds
// once case-insensitive.
func TestACaseInsensitiveClassOfManyRangesTranslatesQuickly(t *testing.T) {
	start := time.Now()
	_, err := Compile(`(?i:[` + strings.Repeat(`\0-\u0177`, 450) + `])`) // short of Ÿ (v8OneByteFolds)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 2*time.Second)
}

// A (?i:…) part matching Ÿ, Μ or μ is refused: V8 matches none of them
// against a text of Latin-1 characters alone ("µ-svc"), though µ and ÿ are
// their case variants (round-22 probe F1). The Latin-1 forms, and the same
// characters outside (?i:…), are kept.
func TestACaseInsensitivePartMatchingAUnitV8FoldsOnlyInLongTextsIsRefused(t *testing.T) {
	for _, p := range []string{"(?i:μ)", "(?i:Μ)", "(?i:Ÿ)", `(?i:[\u0100-\u017f])`, `^svc-(?i:\u03bc)$`} {
		_, err := Compile(p)
		require.Error(t, err, p)
		assert.Contains(t, err.Error(), "Node's V8 does not match them in a text of Latin-1 characters alone", p)
		assert.Contains(t, err.Error(), "spell the cases out in a class outside (?i:…), e.g. [", p)
	}
	// a class that excludes them is said to, with the rewrite that keeps its meaning (round-23 probe F1)
	_, err := Compile(`(?i:[^\u0370-\u03ff])`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `a (?i:…) part excludes U+039C Μ, whose case variant in Latin-1 is "µ"`)
	assert.Contains(t, err.Error(), `put the class outside (?i:…), spelling out the cases it excludes, e.g. [^…\u00B5]`)
	_, err = Compile(`(?i:[^μ])`)
	assert.ErrorContains(t, err, `e.g. [^…\u00B5\u039C]`, "every case it excludes that the class does not name")
	re, err := Compile(`[^\u0370-\u03ff\u00B5]`)
	require.NoError(t, err)
	assert.False(t, Match(re, "µ"), "the rewrite excludes µ, as the standard's (?i:[^\u0370-\u03ff]) does")
	for _, p := range []string{"(?i:µ)", "(?i:ÿ)", "μ", `[\u00B5\u039C\u03BC]`, "(?i:[a-z])"} {
		re, err := Compile(p)
		require.NoError(t, err, p)
		if p == `[\u00B5\u039C\u03BC]` {
			assert.True(t, Match(re, "µ-svc"), "the rewrite the error offers matches µ")
		}
	}
}
