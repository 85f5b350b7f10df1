package ocipublish

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A target is printed whole by mistake (a log line, an error's %v): its
// password must not be in it, with any verb, however deep the target sits.
func TestAPrintedTargetHidesItsPassword(t *testing.T) {
	const secret = "s3cr3t-registry-token"
	target := Target{Refs: []string{"r.example.com/app:1"}, Username: "ci", Password: NewPassword(secret)}
	// what the module's glue keeps: a target in an unexported field, where
	// fmt calls no method
	type held struct{ target Target }
	for _, tc := range []struct {
		name  string
		value any
	}{
		{"the target", target},
		{"a pointer to it", &target},
		{"in an unexported field", held{target: target}},
		{"a pointer to that", &held{target: target}},
		{"in a slice", []Target{target}},
		{"the password alone", target.Password},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X"} {
				out := fmt.Sprintf(verb, tc.value)
				assert.NotContains(t, out, secret, verb)
				assert.NotContains(t, out, fmt.Sprintf("%x", secret), verb)
				assert.NotContains(t, out, fmt.Sprintf("%X", secret), verb)
			}
			out, err := json.Marshal(tc.value)
			require.NoError(t, err)
			assert.NotContains(t, string(out), secret, "JSON")
		})
	}
	assert.Equal(t, "[password]", fmt.Sprint(target.Password))
	assert.Equal(t, "[none]", fmt.Sprint(Target{}.Password))
}

func TestNewPassword(t *testing.T) {
	for _, tc := range []struct {
		text string
		set  bool
	}{
		{"", false},
		{"x", true},
		{" ", true},
	} {
		p := NewPassword(tc.text)
		assert.Equal(t, tc.set, p.Set(), "%q", tc.text)
		assert.Equal(t, tc.text, p.reveal(), "the login gets the text as given")
	}
	assert.False(t, Password{}.Set(), "the zero value is no password")
}
