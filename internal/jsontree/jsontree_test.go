package jsontree

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseKeepsKeyOrderAndTypes(t *testing.T) {
	v, err := Parse([]byte(`{"b":1,"a":[true,null,"x",{"c":2.5}]}`))
	require.NoError(t, err)
	obj := v.(*Object)
	assert.Equal(t, []string{"b", "a"}, obj.Keys)
	assert.Equal(t, json.Number("1"), obj.Fields["b"])
	arr := obj.Fields["a"].([]any)
	assert.Equal(t, []string{"boolean", "null", "string", "object"}, []string{TypeName(arr[0]), TypeName(arr[1]), TypeName(arr[2]), TypeName(arr[3])})
}

func TestParseRefusesDuplicateKeysWithTheirPath(t *testing.T) {
	_, err := Parse([]byte(`{"a":{"list":[{"k":1,"k":2}]}}`))
	assert.EqualError(t, err, `a.list[0].k: duplicate key "k" (a second value would silently replace the first)`)
}

func TestParseRefusesWhatIsNotOneJSONValue(t *testing.T) {
	for in, want := range map[string]string{
		``:        "unexpected end of input",
		`{`:       "unexpected end of input",
		`{} []`:   "unexpected data after the top-level value",
		`{"a" 1}`: "invalid JSON",
		`nul`:     "invalid JSON",
		// named by what the file holds, not a Latin-1 reading of its first
		// byte (round-17 probe F4)
		"{\"frontend\":\u00a0{}}": `invalid JSON at byte 12: U+00A0 '\u00a0' stands where JSON takes its own syntax, in which only ASCII spaces, tabs and line breaks separate values`,
		"{\"a\": \u201cx\u201d}":  `invalid JSON at byte 6: U+201C '“' stands where JSON takes its own syntax`,
		"\xff\xfe{\x00}\x00":      "invalid JSON at byte 0: the byte 0xff is not UTF-8: save the file as UTF-8",
	} {
		_, err := Parse([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
		assert.NotContains(t, err.Error(), "Â", in)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":null}]}`, `{"a":1,"a":2}`, `[`, `"x"`, "{\"a\xff\":\"\\ud800\"}", `["\\ud83d\\ude00"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse(data)
		valid := json.Valid(data)
		if err == nil && !valid {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if err == nil && !utf8.Valid(data) {
			t.Fatalf("accepted text that is not UTF-8 %q", data)
		}
		if err != nil && valid && !strings.Contains(err.Error(), "duplicate key") && !strings.Contains(err.Error(), "not valid UTF-8") && !strings.Contains(err.Error(), "surrogate pair, alone") {
			t.Fatalf("refused valid JSON %q: %v", data, err)
		}
	})
}

func TestParseBoundsNestingAndStaysLinear(t *testing.T) {
	_, err := Parse([]byte(strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)))
	assert.ErrorContains(t, err, "nested deeper than 1000 levels")

	deep := strings.Repeat(`{"a":[`, MaxDepth/2-1) + "1" + strings.Repeat("]}", MaxDepth/2-1)
	_, err = Parse([]byte(deep))
	assert.NoError(t, err)
}

func BenchmarkParseDeep(b *testing.B) {
	deep := []byte(strings.Repeat(`{"a":[`, MaxDepth/2-1) + "1" + strings.Repeat("]}", MaxDepth/2-1))
	for b.Loop() {
		if _, err := Parse(deep); err != nil {
			b.Fatal(err)
		}
	}
}

func TestADuplicateHugeKeyGivesASmallError(t *testing.T) {
	k := strings.Repeat("k", 1<<20)
	_, err := Parse([]byte(`{"` + k + `":1,"` + k + `":2}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "duplicate key")
	assert.Less(t, len(err.Error()), 1024, "a 1 MB key is not echoed twice (it gave 2 MB)")
}

func TestADuplicateKeyIsNamedEvenWhenItReadsOddly(t *testing.T) {
	for in, want := range map[string]string{
		`{"":1,"":2}`:               `[""]: duplicate key ""`,
		`{"a":{"b.c":1,"b.c":2}}`:   `a["b.c"]: duplicate key "b.c"`,
		`[{"x":[0,{"k":1,"k":2}]}]`: `[0].x[1].k: duplicate key "k"`,
	} {
		_, err := Parse([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

// A string is the text its bytes say, or it is refused by its path: what a
// check reads must be what the receiver reads.
func TestATextThatWouldReadAsAnotherIsRefusedByItsPath(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a byte that is not UTF-8 in a value", "{\"a\":[\"x\",\"b\xffc\"]}", `a[1]: not valid UTF-8: byte 0xff in "b\xffc"; JSON text is UTF-8, and a reader takes the byte for U+FFFD`},
		{"a truncated sequence in a value", "{\"a\":\"caf\xc3\"}", `a: not valid UTF-8: byte 0xc3 in "caf\xc3"`},
		{"a byte that is not UTF-8 in a key", "{\"a\":{\"k\xe9\":1}}", `a: not valid UTF-8: byte 0xe9 in "k\xe9"`},
		{"a top-level string", "\"\xff\"", `not valid UTF-8: byte 0xff in "\xff"`},
		{"an escaped lone low surrogate", `{"a":"x\udc00"}`, `a: \udc00 in "x\\udc00" is half of a UTF-16 surrogate pair, alone`},
		{"an escaped high surrogate without its pair", `{"a":["\ud83dx"]}`, `a[0]: \ud83d in "\\ud83dx" is half of a UTF-16 surrogate pair, alone`},
		{"two high surrogates", `{"a":"\ud83d\ud83d"}`, `a: \ud83d in`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got %v", err)
		})
	}
	for _, ok := range []string{`{"a":"\ud83d\ude00"}`, `{"a":"😀 café"}`, `{"a":"\\udc00"}`, `{"a":"\ufffd"}`, "{\"\xef\xbf\xbd\":1}"} {
		_, err := Parse([]byte(ok))
		assert.NoError(t, err, "%s: UTF-8 text, a surrogate pair, an escaped backslash, U+FFFD written as such", ok)
	}
}
