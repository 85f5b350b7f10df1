// Package redact is the one place that decides how an address may be shown:
// in an image label, a git remote in an error, a webhook receipt. It keeps
// the scheme, host and path, and drops the user-info (tokens), the query
// (private_token=…, sig=…) and the fragment. A secret the module holds may
// still stand in what is kept, or in anything else a server sends back:
// Scrubber hides it there, in every spelling.
package redact

import (
	"net/url"
	"regexp"
	"strings"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// URL returns raw without user-info, query and fragment. A value that does
// not parse as an absolute URL with a host is not shown at all: ok is false
// and the result is a placeholder, since its secret part cannot be found.
func URL(raw string) (shown string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" || Ambiguous(raw) {
		return Unparsable, false
	}
	clean := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return clean.String(), true
}

// Ambiguous reports an "@" after the authority (in the path, query or
// fragment): https://user:12/SECRET@host/repo reads as host "user" to Go
// but as credentials "user:12/SECRET" to other parsers, and
// https://ab?SECRET@host likewise. No part of such an address can be told
// safe to show, and none is a usable remote.
func Ambiguous(raw string) bool {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		return false
	}
	return strings.Contains(rest[end:], "@")
}

// Unparsable stands in for an address that could not be shown safely.
const Unparsable = "<address not shown: not a URL>"

// String is URL's result alone, for messages.
func String(raw string) string {
	shown, _ := URL(raw)
	return shown
}

// Quote is String quoted for a message, cut as fielderr.Quote cuts any
// value an error shows: an address can be as long as its author likes.
func Quote(raw string) string {
	return fielderr.Quote(String(raw))
}

var addressIn = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>]+`)

// URLsIn shows every address in a text (a tool's output, an error) as URL
// shows it: what git prints of a remote keeps its query (private_token=…).
// Git's own output is read through it (ls-remote's refs), so it changes
// nothing but addresses.
func URLsIn(text string) string {
	return addressIn.ReplaceAllStringFunc(text, String)
}

var wordIn = regexp.MustCompile(`\S+`)

// Shown is a tool's output as a person reads it, never parsed again: URLsIn,
// and any other word that holds a login (https:/user:token@host, an escaped
// @) as fielderr.WithoutLogins shows it.
func Shown(text string) string {
	return wordIn.ReplaceAllStringFunc(URLsIn(text), fielderr.WithoutLogins)
}
