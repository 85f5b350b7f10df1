// Package secret holds a secret's text in the module's own process (a
// webhook token, a registry password, a git token: read from a
// *dagger.Secret or a secret variable to speak HTTP or git) so that no fmt
// verb and no JSON encoding prints it, even inside a struct printed whole.
// fmt calls no method on an unexported field, so a String method on a
// string type would not do: the text is behind a pointer, which fmt prints
// as an address wherever it cannot call Format.
package secret

import (
	"fmt"
	"io"
)

// Text is a secret's text. The zero value is no secret.
type Text struct{ text *string }

// New holds text; "" is no secret.
func New(text string) Text {
	if text == "" {
		return Text{}
	}
	return Text{text: &text}
}

// Set reports whether there is a secret.
func (t Text) Set() bool { return t.text != nil }

// Reveal is the text itself, for the one use it is held for: a header, a
// login. Never print it.
func (t Text) Reveal() string {
	if t.text == nil {
		return ""
	}
	return *t.text
}

// Format prints a mask, whatever the verb.
func (t Text) Format(f fmt.State, _ rune) {
	if t.Set() {
		_, _ = io.WriteString(f, "[secret]")
		return
	}
	_, _ = io.WriteString(f, "[none]")
}
