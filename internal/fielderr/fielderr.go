// Package fielderr collects validation problems that each name the place in the
// user's input (a JSON path such as backends.deployRules[2].source) so that all
// of them can be reported at once instead of one per run.
package fielderr

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Error is one problem at one place of the input.
type Error struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (e Error) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// List accumulates problems in the order they were found.
type List []Error

// Addf records a problem at path.
func (l *List) Addf(path, format string, args ...any) {
	*l = append(*l, Error{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Err returns nil when nothing was recorded, else the list as an error.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

func (l List) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	if len(l) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%d problems:\n  - %s", len(l), strings.Join(lines, "\n  - "))
}

// Join builds a child path: Join("backends", "images") is "backends.images";
// Join("", "frontend") is "frontend".
func Join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// Index builds an element path: Index("extraArgs", 0) is "extraArgs[0]".
func Index(parent string, i int) string {
	return fmt.Sprintf("%s[%d]", parent, i)
}

// Quote shows a user value in an error, shortened so a huge input cannot
// flood the output.
func Quote(s string) string {
	const max = 200
	if len(s) > max {
		return fmt.Sprintf("%q… (%d bytes)", s[:max], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// MarshalJSON lists the problems as [{"path": …, "message": …}].
func (l List) MarshalJSON() ([]byte, error) {
	return json.Marshal([]Error(l))
}
