package payload

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/rules"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	front = "registry.example.com/team/front:1.4.0"
	back1 = "registry.example.com/team/api:1.4.0"
	back2 = "registry.example.com/team/jobs:1.4.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cad   = "registry.example.com/team/codeasdata:1.4.0"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

func TestDefaultIsTheReferencePayload(t *testing.T) {
	data, err := Default().Marshal()
	require.NoError(t, err)
	golden(t, "default.json", data)
}

func TestComposeDoesTheReferenceBuildUpOnTheDefault(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{
			name: "frontend and backend images, no code-as-data built in this run",
			opts: Options{FrontendImage: front, BackendImages: []string{back1, back2}},
			want: `{"frontend":{"image":"` + front + `"},
				"backends":{"images":["` + back1 + `","` + back2 + `"],"deployRules":[{"source":".*","target":".*"}]},
				"codeAsData":{"updateMode":"manual"},"noDowntime":{"promotionMode":"manual"}}`,
		},
		{
			name: "a code-as-data image built in this run is set",
			opts: Options{FrontendImage: front, CodeAsDataImage: cad},
			want: `{"frontend":{"image":"` + front + `"},
				"backends":{"images":[],"deployRules":[{"source":".*","target":".*"}]},
				"codeAsData":{"image":"` + cad + `","updateMode":"manual"},"noDowntime":{"promotionMode":"manual"}}`,
		},
		{
			name: "without a frontend image the placeholder frontend is dropped",
			opts: Options{BackendImages: []string{back1}},
			want: `{"backends":{"images":["` + back1 + `"],"deployRules":[{"source":".*","target":".*"}]},
				"codeAsData":{"updateMode":"manual"},"noDowntime":{"promotionMode":"manual"}}`,
		},
		{
			name: "rules from flags replace the catch-all, modes and flags are set",
			opts: Options{
				FrontendImage: front, BackendImages: []string{back1},
				DeployRules: []rules.Rule{{Source: "api", Target: "^(?!jobs$).*"}},
				UpdateMode:  ModeAuto, PromotionMode: ModeAuto, SkipUpdateVersions: &yes, ForceSync: true,
			},
			want: `{"frontend":{"image":"` + front + `"},
				"backends":{"images":["` + back1 + `"],"deployRules":[{"source":"api","target":"^(?!jobs$).*"}]},
				"codeAsData":{"updateMode":"auto"},"noDowntime":{"promotionMode":"auto"},
				"skipUpdateVersions":true,"extraArgs":["--force-sync"]}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, _, err := Compose(nil, tc.opts)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(data))
		})
	}
}

func TestBuildLeavesItsBaseUntouchedAndKeepsUserSections(t *testing.T) {
	base, err := Parse([]byte(`{"backends":{"images":["` + back1 + `"],"deployRules":[{"source":"api","target":"api"}]},"extraArgs":["--force-sync"]}`))
	require.NoError(t, err)
	before, _ := base.Marshal()

	p := Build(base, Options{BackendImages: []string{back2}, ForceSync: true})

	after, _ := base.Marshal()
	assert.Equal(t, string(before), string(after), "the base payload must not change")
	assert.Equal(t, []string{back1, back2}, p.Backends.Images)
	assert.Equal(t, []rules.Rule{{Source: "api", Target: "api"}}, p.Backends.DeployRules, "user rules are kept when no rule flag is given")
	assert.Equal(t, []string{ForceSync}, p.ExtraArgs, "--force-sync is not added twice")
	assert.Nil(t, p.Frontend)
	assert.Nil(t, p.CodeAsData)
}

func TestParseRoundTripsWithoutChangingMeaning(t *testing.T) {
	for _, in := range []string{
		`{}`,
		`{"frontend":{"image":"` + front + `"}}`,
		`{"backends":{"images":[],"deployRules":[]}}`,
		`{"backends":{"images":["` + back1 + `"],"deployRules":[{"source":"^(?!a$).*","target":".*"}]}}`,
		`{"codeAsData":{}}`,
		`{"codeAsData":{"image":"` + cad + `","updateMode":"auto"}}`,
		`{"noDowntime":{"promotionMode":"auto"}}`,
		`{"skipUpdateVersions":false}`,
		`{"skipUpdateVersions":true}`,
		`{"extraArgs":[]}`,
		`{"extraArgs":["--force-sync"]}`,
	} {
		t.Run(in, func(t *testing.T) {
			p, err := Parse([]byte(in))
			require.NoError(t, err)
			out, err := p.Marshal()
			require.NoError(t, err)
			assert.JSONEq(t, in, string(out))
		})
	}
}

func TestParseReportsEveryProblemWithItsPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []pathMsg // Message is matched as a substring
	}{
		{"backends needs images", `{"backends":{}}`,
			[]pathMsg{{"backends.images", "required when backends is present"}}},
		{"images need deploy rules", `{"backends":{"images":[]}}`,
			[]pathMsg{{"backends.deployRules", "required when backends.images is present"}}},
		{"images with an empty rule list would reach no backend", `{"backends":{"images":["` + back1 + `","` + back2 + `"],"deployRules":[]}}`,
			[]pathMsg{{"backends.deployRules", `[] while backends.images holds 2 image(s): each would reach no backend; give at least one rule {"source": <image regex>, "target": <backend regex>}`}}},
		{"a frontend needs an image", `{"frontend":{}}`,
			[]pathMsg{{"frontend.image", "required when frontend is present"}}},
		{"noDowntime needs a promotion mode", `{"noDowntime":{}}`,
			[]pathMsg{{"noDowntime.promotionMode", "required when noDowntime is present"}}},
		{"a misspelt section is refused with a suggestion", `{"noDowntim":{"promotionMode":"auto"}}`,
			[]pathMsg{{"noDowntim", `unknown key (did you mean "noDowntime"?)`}}},
		{"an unknown nested key is refused", `{"frontend":{"image":"` + front + `","tag":"x"}}`,
			[]pathMsg{{"frontend.tag", "unknown key; allowed here: image"}}},
		{"an empty key is refused by a path that names it", `{"":1}`,
			[]pathMsg{{`[""]`, "unknown key; allowed here: backends, codeAsData"}}},
		{"a key with a dot is not read as a path", `{"frontend":{"image":"` + front + `","image.tag":"x"}}`,
			[]pathMsg{{`frontend["image.tag"]`, "unknown key"}}},
		{"update mode is an enum", `{"codeAsData":{"updateMode":"Auto"}}`,
			[]pathMsg{{"codeAsData.updateMode", `invalid value "Auto": allowed values are "auto" and "manual"`}}},
		{"promotion mode is an enum", `{"noDowntime":{"promotionMode":"later"}}`,
			[]pathMsg{{"noDowntime.promotionMode", `invalid value "later"`}}},
		{"extraArgs only takes --force-sync", `{"extraArgs":["--force-sync","--force"]}`,
			[]pathMsg{{"extraArgs[1]", `unsupported argument "--force": the only accepted value is "--force-sync"`}}},
		{"skipUpdateVersions is a boolean", `{"skipUpdateVersions":"true"}`,
			[]pathMsg{{"skipUpdateVersions", `must be a boolean (true or false), got string "true"`}}},
		{"an image reference needs a tag or digest", `{"frontend":{"image":"registry.example.com/front"}}`,
			[]pathMsg{{"frontend.image", "neither a tag nor a digest"}}},
		{"an image reference must be a valid OCI reference", `{"frontend":{"image":"Registry/Front:1"}}`,
			[]pathMsg{{"frontend.image", "not a valid OCI image reference"}}},
		{"an empty update mode is refused, as it would be sent", `{"codeAsData":{"updateMode":""}}`,
			[]pathMsg{{"codeAsData.updateMode", `invalid value "": allowed values are "auto" and "manual"`}}},
		{"an empty promotion mode is refused, showing the value given (E1, issue #65)", `{"noDowntime":{"promotionMode":""}}`,
			[]pathMsg{{"noDowntime.promotionMode", `invalid value "": allowed values are "auto" and "manual"`}}},
		{"an empty image reference is refused", `{"codeAsData":{"image":""}}`,
			[]pathMsg{{"codeAsData.image", "empty image reference"}}},
		{"a backend image is checked too", `{"backends":{"images":["api:1","bad image"],"deployRules":[{"source":".*","target":".*"}]}}`,
			[]pathMsg{{"backends.images[1]", "not a valid OCI image reference"}}},
		{"a rule needs source and target", `{"backends":{"images":[],"deployRules":[{"source":".*"}]}}`,
			[]pathMsg{{"backends.deployRules[0].target", "required"}}},
		{"a rule pattern must be JavaScript", `{"backends":{"images":[],"deployRules":[{"source":"(?i)api","target":".*"}]}}`,
			[]pathMsg{{"backends.deployRules[0].source", `invalid regular expression "(?i)api": at offset 0: flags "(?i)" are not JavaScript syntax`}}},
		{"rules must be objects", `{"backends":{"images":[],"deployRules":[".*"]}}`,
			[]pathMsg{{"backends.deployRules[0]", `must be an object, got string ".*"`}}},
		{"images must be strings", `{"backends":{"images":[1],"deployRules":[{"source":".*","target":".*"}]}}`,
			[]pathMsg{{"backends.images[0]", "must be a string, got number 1"}}},
		{"images must be an array", `{"backends":{"images":"api:1","deployRules":[]}}`,
			[]pathMsg{{"backends.images", "must be an array of strings"}}},
		{"a null section is not an absent one", `{"frontend":null}`,
			[]pathMsg{{"frontend", "must be an object, got null"}}},
		{"the payload is an object", `[]`,
			[]pathMsg{{"", "must be an object, got array"}}},
		{"all problems are reported at once", `{"frontend":{},"noDowntime":{"promotionMode":"soon"},"extraArgs":["-f"],"codeAsData":{"updateMode":1}}`,
			[]pathMsg{
				{"codeAsData.updateMode", "must be a string, got number 1"},
				{"frontend.image", "required"},
				{"noDowntime.promotionMode", `invalid value "soon"`},
				{"extraArgs[0]", "unsupported argument"},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(tc.in))
			require.Error(t, err)
			assert.Nil(t, p, "an invalid payload is never returned")
			var list fielderr.List
			require.ErrorAs(t, err, &list)
			require.Len(t, list, len(tc.want), "got: %v", err)
			for i, w := range tc.want {
				assert.Equal(t, w.Path, list[i].Path)
				assert.Contains(t, list[i].Message, w.Message)
			}
		})
	}
}

func TestParseRefusesMalformedJSON(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a duplicate key would lose a value", `{"frontend":{"image":"a:1","image":"b:1"}}`, `frontend.image: duplicate key "image"`},
		{"trailing data", `{} {}`, "unexpected data after the top-level value"},
		{"truncated input", `{"frontend":`, "unexpected end of input"},
		{"not JSON", `frontend=1`, "invalid JSON"},
		{"empty input", ``, "unexpected end of input"},
		{"a rule that is not UTF-8 is refused, not read as U+FFFD", "{\"backends\":{\"images\":[],\"deployRules\":[{\"source\":\"api\xff\",\"target\":\".*\"}]}}",
			`backends.deployRules[0].source: not valid UTF-8: byte 0xff in "api\xff"`},
		{"an image that is not UTF-8 is refused", "{\"frontend\":{\"image\":\"r.example.com/f:1\xe9\"}}", `frontend.image: not valid UTF-8: byte 0xe9`},
		{"a key that is not UTF-8 is refused by its object", "{\"frontend\":{\"imag\xe9\":\"x\"}}", `frontend: not valid UTF-8: byte 0xe9 in "imag\xe9"`},
		{"an escaped lone surrogate is refused", `{"backends":{"images":[],"deployRules":[{"source":".*","target":"\udc00"}]}}`,
			`backends.deployRules[0].target: \udc00 in "\\udc00" is half of a UTF-16 surrogate pair, alone`},
		// round-21 probe F1: the json field shows the payload byte for byte
		{"a carriage return alone between values", "{\"frontend\":\r{\"image\":\"reg.example.com/front:2\"}}",
			"invalid JSON at byte 12: a carriage return without a line feed, which a terminal showing the payload would act on: save the file with LF or CRLF line endings"},
		{"a carriage return alone at the end", "{}\r", "invalid JSON at byte 2: a carriage return without a line feed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestCRLFLineEndingsAreKept(t *testing.T) {
	_, err := Parse([]byte("{\r\n  \"frontend\": {\"image\": \"reg.example.com/front:2\"}\r\n}\r\n"))
	assert.NoError(t, err, "a file saved on Windows")
}

func TestErrorListReadsAsOneMessage(t *testing.T) {
	_, err := Parse([]byte(`{"frontend":{},"noDowntime":{}}`))
	require.Error(t, err)
	assert.Equal(t, "2 problems:\n  - frontend.image: required when frontend is present: the frontend image reference to deploy\n  - noDowntime.promotionMode: required when noDowntime is present: \"auto\" or \"manual\"", err.Error())
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"", "auto", "manual"} {
		m, err := ParseMode("--update-mode", s)
		require.NoError(t, err)
		assert.Equal(t, Mode(s), m)
	}
	_, err := ParseMode("--update-mode", "AUTO")
	assert.EqualError(t, err, `--update-mode: invalid value "AUTO": allowed values are "auto" and "manual"`)
}

func FuzzParse(f *testing.F) {
	d, _ := Default().Marshal()
	f.Add(d)
	f.Add([]byte(`{"backends":{"images":["a:1"],"deployRules":[{"source":"(?!x)","target":".*"}]},"extraArgs":["--force-sync"]}`))
	f.Add([]byte(`{"noDowntim":1,"frontend":{"image":"A"}}`))
	f.Add([]byte(`{"codeAsData":{"updateMode":""},"noDowntime":{"promotionMode":"auto"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		// an approval mode it lets through, as sent (the bytes are kept), is one of the enum
		var raw struct {
			CodeAsData map[string]any `json:"codeAsData"`
			NoDowntime map[string]any `json:"noDowntime"`
		}
		if json.Unmarshal(data, &raw) == nil {
			for _, section := range []map[string]any{raw.CodeAsData, raw.NoDowntime} {
				for _, key := range []string{"updateMode", "promotionMode"} {
					if m, ok := section[key]; ok {
						assert.Contains(t, []any{string(ModeAuto), string(ModeManual)}, m, "%s in %s", key, data)
					}
				}
			}
		}
		// Whatever parses must re-encode to a payload that parses to the same thing.
		out, err := p.Marshal()
		require.NoError(t, err)
		again, err := Parse(out)
		require.NoError(t, err, "re-encoded payload %s", out)
		a, _ := json.Marshal(p)
		b, _ := json.Marshal(again)
		require.JSONEq(t, string(a), string(b))
	})
}

// A mode flag is one of the enum, or empty for "leave as is"; anything else
// is refused naming the flag.
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"", "auto", "manual", "Auto", " manual"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMode("--mode", s)
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), "--mode: invalid value "), err.Error())
			assert.Less(t, len(err.Error()), 1024, "the value is cut")
			return
		}
		assert.Contains(t, []Mode{"", ModeAuto, ModeManual}, m)
		assert.Equal(t, s, string(m))
	})
}

// pathMsg is an expected problem: its path, and a substring of its message.
type pathMsg struct{ Path, Message string }

func TestComposeStartsFromATemplate(t *testing.T) {
	const template = `{"frontend":{},"backends":{"images":[],"deployRules":[{"source":"api","target":"^api$"}]},"noDowntime":{"promotionMode":"auto"}}`
	for _, tc := range []struct {
		name string
		base string
		opts Options
		want string
	}{
		{"the placeholder frontend receives the run's image", template, Options{FrontendImage: front, BackendImages: []string{back1}},
			`{"frontend":{"image":"` + front + `"},"backends":{"images":["` + back1 + `"],"deployRules":[{"source":"api","target":"^api$"}]},"noDowntime":{"promotionMode":"auto"}}`},
		{"a placeholder no image fills is dropped", template, Options{BackendImages: []string{back1}},
			`{"backends":{"images":["` + back1 + `"],"deployRules":[{"source":"api","target":"^api$"}]},"noDowntime":{"promotionMode":"auto"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, _, err := Compose([]byte(tc.base), tc.opts)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(data))
		})
	}
}

func TestARunsPayloadStartsFromOneThatNamesNoImage(t *testing.T) {
	run := Options{FrontendImage: front, BackendImages: []string{back1}, ForARun: true}
	const rules = `"deployRules":[{"source":".*","target":".*"}]`
	for _, tc := range []struct {
		name string
		base string
		want []string // paths refused, in order; none: accepted
	}{
		{"the reference default's shape", `{"frontend":{},"backends":{"images":[],` + rules + `}}`, nil},
		{"no frontend object at all", `{"backends":{"images":[],` + rules + `}}`, nil},
		{"a frontend image the run would replace", `{"frontend":{"image":"` + back2 + `"}}`, []string{"frontend.image"}},
		{"a stale backend image the run's would go out beside", `{"backends":{"images":["` + back2 + `"],` + rules + `}}`, []string{"backends.images[0]"}},
		{"a code-as-data image this run did not build", `{"codeAsData":{"image":"` + back2 + `","updateMode":"auto"}}`, []string{"codeAsData.image"}},
		{"each named", `{"frontend":{"image":"` + back2 + `"},"backends":{"images":["` + back1 + `","` + back2 + `"],` + rules + `},"codeAsData":{"image":"` + back2 + `"}}`,
			[]string{"frontend.image", "backends.images[0]", "backends.images[1]", "codeAsData.image"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Compose([]byte(tc.base), run)
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			var list fielderr.List
			require.ErrorAs(t, err, &list)
			var paths []string
			for _, e := range list {
				paths = append(paths, e.Path)
				assert.Contains(t, e.Message, "is named in the starting payload; the run sets its own images")
			}
			assert.Equal(t, tc.want, paths)
			assert.True(t, strings.HasPrefix(err.Error(), "starting payload: "), err.Error())

			opts := run
			opts.ForARun = false
			_, _, err = Compose([]byte(tc.base), opts)
			assert.NoError(t, err, "payload --from with images: the file's own, kept and added to")
		})
	}
}

func TestComposeSendsAnUnchangedPayloadByteForByte(t *testing.T) {
	base := []byte("{ \"frontend\" : {\"image\": \"" + front + "\"},\n  \"extraArgs\": [\"--force-sync\"] }")
	data, _, err := Compose(base, Options{})
	require.NoError(t, err)
	assert.Equal(t, string(base), string(data))

	data, _, err = Compose(base, Options{ForceSync: true})
	require.NoError(t, err)
	assert.Equal(t, string(base), string(data), "--force-sync is already there: nothing changes")

	data, _, err = Compose(base, Options{UpdateMode: ModeAuto})
	require.NoError(t, err)
	assert.JSONEq(t, `{"frontend":{"image":"`+front+`"},"codeAsData":{"updateMode":"auto"},"extraArgs":["--force-sync"]}`, string(data))
}

// Compose returns only what Parse accepts: the same check reads its bytes.
func TestComposeNeverReturnsWhatParseRefuses(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{"backends":{"images":[`)
	for i := 0; many.Len() < MaxSize-100; i++ {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"r.example.com/a:%d"`, i)
	}
	many.WriteString(`],"deployRules":[{"source":".*","target":".*"}]}}`)
	require.LessOrEqual(t, many.Len(), MaxSize)
	_, err := Parse([]byte(many.String()))
	require.NoError(t, err, "a starting payload just under the cap")

	for _, tc := range []struct {
		name string
		base string
		opts Options
		want string
	}{
		{"an edit that takes a payload over the size cap", many.String(), Options{ForceSync: true},
			"the built payload is invalid: the payload has"},
		{"backend images added to a starting payload with no rule", `{"backends":{"images":[],"deployRules":[]}}`, Options{BackendImages: []string{back1}},
			"the built payload is invalid: backends.deployRules: [] while backends.images holds 1 image(s): each would reach no backend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Compose([]byte(tc.base), tc.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, _, err = Compose([]byte(`{"backends":{"images":[],"deployRules":[]}}`), Options{})
	assert.NoError(t, err, "no image and no rule: nothing reaches nothing")
}

// The reference default's build-up always gives a backend image a rule:
// the catch-all, or the rules given.
func TestTheReferenceDefaultNeverLeavesAnImageWithoutARule(t *testing.T) {
	for _, opts := range []Options{
		{BackendImages: []string{back1}},
		{BackendImages: []string{back1}, DeployRules: []rules.Rule{}},
		{BackendImages: []string{back1, back2}, DeployRules: []rules.Rule{{Source: "api", Target: "api"}}},
		{DeployRules: []rules.Rule{{Source: "api", Target: "api"}}},
	} {
		_, p, err := Compose(nil, opts)
		require.NoError(t, err)
		require.NotNil(t, p.Backends)
		assert.NotEmpty(t, p.Backends.DeployRules, "%+v", opts)
	}
}

func TestComposeRefusesABadStartOrResult(t *testing.T) {
	_, _, err := Compose([]byte(`{"frontend":{"img":"x"}}`), Options{})
	assert.ErrorContains(t, err, "starting payload: frontend.img: unknown key")

	_, _, err = Compose([]byte(`{"backends":{"images":[],"deployRules":[{"source":".*","target":".*"}]}}`), Options{BackendImages: []string{"Not A Ref"}})
	assert.ErrorContains(t, err, "the built payload is invalid: backends.images[0]")

	_, err = Parse([]byte(`{"frontend":{}}`))
	assert.ErrorContains(t, err, "frontend.image: required", "a payload to send is no template")
}

func TestImagesListsWhatThePayloadDeploys(t *testing.T) {
	p, err := Parse([]byte(`{"codeAsData":{"image":"` + cad + `"},"backends":{"images":["` + back1 + `","` + back2 + `"],"deployRules":[{"source":".*","target":".*"}]},"frontend":{"image":"` + front + `"}}`))
	require.NoError(t, err)
	assert.Equal(t, []string{front, back1, back2, cad}, p.Images(), "frontend, backends, then code as data")
	assert.Empty(t, Default().Images())
}

// Whatever Compose accepts, from any starting payload and any image, is a
// payload the strict parser accepts: a run never sends what deploy refuses.
func FuzzCompose(f *testing.F) {
	d, _ := Default().Marshal()
	f.Add(d, front, back1, true)
	f.Add([]byte(`{"frontend":{},"backends":{"images":[],"deployRules":[{"source":"a","target":"b"}]}}`), "", back2, false)
	f.Add([]byte(`{"frontend":{}}`), "", "", true)
	f.Add([]byte(`{"backends":{"images":["`+back1+`"],"deployRules":[{"source":"a","target":"b"}]}}`), front, back2, true)
	f.Add([]byte(`{"backends":{"images":[],"deployRules":[]}}`), "", back1, false)
	f.Add([]byte(nil), front, back1, true)
	f.Fuzz(func(t *testing.T, base []byte, frontendImage, backendImage string, forARun bool) {
		if len(base) == 0 {
			base = nil // the reference default
		}
		opts := Options{FrontendImage: frontendImage, ForARun: forARun}
		if backendImage != "" {
			opts.BackendImages = []string{backendImage}
			// a rule from a flag, as payload --deploy-rule gives it
			opts.DeployRules = []rules.Rule{{Source: backendImage, Target: frontendImage}}
		}
		out, built, err := Compose(base, opts)
		if err != nil {
			return
		}
		sent, err := Parse(out)
		require.NoError(t, err, "composed payload %s", out)
		assert.Equal(t, built, sent, "the payload passed on is what its bytes say: %s", out)
		if sent.Backends != nil && len(sent.Backends.Images) > 0 {
			assert.NotEmpty(t, sent.Backends.DeployRules, "an image reaches a backend through a rule: %s", out)
		}
		if forARun {
			// a run's payload carries the run's images and no other
			images := slices.DeleteFunc([]string{frontendImage, backendImage}, func(s string) bool { return s == "" })
			assert.ElementsMatch(t, images, sent.Images(), "composed payload %s", out)
		}
	})
}

func TestHugeInputsGiveSmallErrors(t *testing.T) {
	number := strings.Repeat("9", 1<<20)
	_, err := Parse([]byte(`{"skipUpdateVersions": ` + number + `}`))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 400, "a 1 MB number is not echoed whole")

	var b strings.Builder
	b.WriteString("{")
	for i := range 50_000 {
		fmt.Fprintf(&b, `"unknown%d": 1,`, i)
	}
	b.WriteString(`"extraArgs": []}`)
	_, err = Parse([]byte(b.String()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "50000 problems")
	assert.Less(t, len(err.Error()), 20_000, "50 000 unknown keys give a short error")
}

func TestAByteOrderMarkIsAccepted(t *testing.T) {
	withBOM := append([]byte{0xEF, 0xBB, 0xBF}, `{"frontend":{"image":"`+front+`"}}`...)
	_, err := Parse(withBOM)
	require.NoError(t, err, "editors on Windows write it")
	out, _, err := Compose(withBOM, Options{})
	require.NoError(t, err)
	assert.Equal(t, `{"frontend":{"image":"`+front+`"}}`, string(out), "what is sent has no byte-order mark")
}

func TestTheDefaultIsATemplateNotAPayload(t *testing.T) {
	d, err := Default().Marshal()
	require.NoError(t, err)
	_, err = Parse(d)
	assert.ErrorContains(t, err, "frontend.image: required", "its frontend waits for the run's image")
	out, _, err := Compose(nil, Options{})
	require.NoError(t, err)
	_, err = Parse(out)
	assert.NoError(t, err, "what Compose makes of it is always valid")
}

func TestAPayloadOverOneMebibyteIsRefusedSayingSo(t *testing.T) {
	big := `{"frontend":{"image":"r.example.com/f:1"},"extraArgs":["` + strings.Repeat("x", MaxSize) + `"]}`
	_, err := Parse([]byte(big))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at most 1048576 (1 MiB)")
	assert.Less(t, len(err.Error()), 200)
}

// A rule given as a flag holding invalid UTF-8 is refused as a payload read
// holding it is: Marshal would send U+FFFD in its place, not the rule given.
func TestComposeRefusesARuleOfInvalidUTF8(t *testing.T) {
	_, _, err := Compose(nil, Options{BackendImages: []string{back1}, DeployRules: []rules.Rule{{Source: "api\xff", Target: ".*"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "backends.deployRules[0].source")
}
