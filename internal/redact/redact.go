// Package redact is the one place that decides how an address may be shown:
// in an image label, a git remote in an error, a webhook receipt. It keeps
// the scheme, host and path, and drops the user-info (tokens), the query
// (private_token=…, sig=…) and the fragment.
package redact

import (
	"net/url"
	"strings"
)

// URL returns raw without user-info, query and fragment. A value that does
// not parse as an absolute URL with a host is not shown at all: ok is false
// and the result is a placeholder, since its secret part cannot be found.
func URL(raw string) (shown string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return Unparsable, false
	}
	clean := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return clean.String(), true
}

// Unparsable stands in for an address that could not be shown safely.
const Unparsable = "<address not shown: not a URL>"

// String is URL's result alone, for messages.
func String(raw string) string {
	shown, _ := URL(raw)
	return shown
}

// Quote is String in double quotes, for messages that quote values.
func Quote(raw string) string {
	return `"` + strings.ReplaceAll(String(raw), `"`, `\"`) + `"`
}
