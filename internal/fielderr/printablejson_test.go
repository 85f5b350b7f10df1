package fielderr

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrintableJSONEscapesWhatATerminalWouldActOnAndKeepsTheDocument(t *testing.T) {
	for _, tc := range []struct{ name, doc, shown string }{
		{"a document with nothing to escape", "{\n  \"a\": \"x y\"\n}", "{\n  \"a\": \"x y\"\n}"},
		{"a C1 control sequence introducer in a string", "{\"a\":\"\u009b2J\"}", `{"a":"\u009b2J"}`},
		{"a next-line character in a string", "{\"a\":\"x\u0085y\"}", `{"a":"x\u0085y"}`},
		{"a right-to-left override in a string", "{\"a\":\"abc\u202edef\"}", `{"a":"abc\u202edef"}`},
		{"a line separator in a string", "{\"a\":\"x\u2028y\"}", `{"a":"x\u2028y"}`},
		{"an invisible character past U+FFFF", "{\"a\":\"x\U000E0001y\"}", `{"a":"x\udb40\udc01y"}`},
		{"a carriage return between values", "{\"a\":1,\r\"b\":2}", "{\"a\":1, \"b\":2}"},
		{"tabs and line breaks between values", "{\n\t\"a\": 1\r\n}", "{\n\t\"a\": 1 \n}"},
		{"printable escapes kept as they are", `{"a":"\u001b\n"}`, `{"a":"\u001b\n"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown := PrintableJSON([]byte(tc.doc))
			assert.Equal(t, tc.shown, shown)
			var before, after any
			require.NoError(t, json.Unmarshal([]byte(tc.doc), &before))
			require.NoError(t, json.Unmarshal([]byte(shown), &after), "the same JSON")
			assert.Equal(t, before, after)
		})
	}
}

// Any JSON document is shown as the same JSON, with no character a
// terminal would act on but line breaks and tabs between values.
func FuzzPrintableJSON(f *testing.F) {
	for _, s := range []string{`{"a":"x"}`, "[\"\u009b\",\r\n\"\u202e\"]", "\"\U000E0001\"", `"\ud800"`, "\"to\u034fken\u3164\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var before any
		if json.Unmarshal([]byte(doc), &before) != nil {
			t.Skip()
		}
		shown := PrintableJSON([]byte(doc))
		var after any
		require.NoError(t, json.Unmarshal([]byte(shown), &after), "%q", shown)
		assert.Equal(t, before, after)
		assert.False(t, strings.ContainsFunc(shown, func(r rune) bool { return !visible(r) && r != '\n' && r != '\t' }), "%q", shown)
	})
}
