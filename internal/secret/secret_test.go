package secret

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What holds a secret gets printed whole by mistake (a log line, an
// error's %v): the text must not be in it, with any verb, however deep it
// sits.
func TestAPrintedSecretIsMasked(t *testing.T) {
	const text = "s3cr3t-token-value"
	type config struct {
		URL   string
		Token Text
	}
	// as the packages keep it: in an unexported field, where fmt calls no method
	type held struct{ cfg config }
	cfg := config{URL: "https://hooks.example.com/a", Token: New(text)}
	for _, tc := range []struct {
		name  string
		value any
	}{
		{"the secret", cfg.Token},
		{"a pointer to it", &cfg.Token},
		{"in an exported field", cfg},
		{"a pointer to that", &cfg},
		{"in an unexported field", held{cfg: cfg}},
		{"a pointer to that", &held{cfg: cfg}},
		{"in a slice", []Text{cfg.Token}},
		{"in a map", map[string]Text{"token": cfg.Token}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X"} {
				out := fmt.Sprintf(verb, tc.value)
				for _, spelling := range []string{text, fmt.Sprintf("%x", text), fmt.Sprintf("%X", text)} {
					assert.NotContains(t, out, spelling, verb)
				}
			}
			out, err := json.Marshal(tc.value)
			require.NoError(t, err)
			assert.NotContains(t, string(out), text, "JSON")
		})
	}
	assert.Equal(t, "[secret]", fmt.Sprint(cfg.Token))
	assert.Equal(t, "[none]", fmt.Sprint(Text{}))
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		text string
		set  bool
	}{
		{"", false},
		{"x", true},
		{" ", true},
		{"a\x00b", true},
	} {
		s := New(tc.text)
		assert.Equal(t, tc.set, s.Set(), "%q", tc.text)
		assert.Equal(t, tc.text, s.Reveal(), "the use gets the text as given")
	}
	assert.False(t, Text{}.Set(), "the zero value is no secret")
}
