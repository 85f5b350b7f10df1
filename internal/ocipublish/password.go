package ocipublish

import (
	"fmt"
	"io"
)

// Password is a registry password or token that no fmt verb and no JSON
// encoding prints, even inside a struct that is printed whole (fmt calls no
// method on an unexported field, so a String method alone would not do: the
// text is behind a pointer, which fmt prints as an address). The zero value
// is no password.
type Password struct{ text *string }

// NewPassword holds text; "" is no password.
func NewPassword(text string) Password {
	if text == "" {
		return Password{}
	}
	return Password{text: &text}
}

// Set reports whether there is a password.
func (p Password) Set() bool { return p.text != nil }

// reveal is the password itself, for the registry's login only.
func (p Password) reveal() string {
	if p.text == nil {
		return ""
	}
	return *p.text
}

// Format prints the password, with any verb, as a mask.
func (p Password) Format(f fmt.State, _ rune) {
	if p.Set() {
		_, _ = io.WriteString(f, "[password]")
		return
	}
	_, _ = io.WriteString(f, "[none]")
}
