// Package loopback tells whether an address names the machine it is used
// on. In the engine, that machine is a container of its own: the module's,
// or the one a tool runs in (tests/engine-facts.md, facts 22, 24), where no
// registry or webhook of the user's listens.
package loopback

import (
	"net"
	"strings"
)

// Host says whether host — a name or an IP address, with a port or not, an
// IPv6 address in brackets or not — names the machine itself: localhost, a
// loopback address (127.0.0.0/8, ::1), or the unspecified address (0.0.0.0,
// ::), which a connection takes for the machine too.
func Host(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}
