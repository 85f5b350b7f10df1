// Package loopback tells whether an address names the machine it is used
// on. In the engine, that machine is a container of its own: the module's,
// or the one a tool runs in (tests/engine-facts.md, facts 22, 24), where no
// registry or webhook of the user's listens.
package loopback

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// sandboxNames are what BuildKit's generated /etc/hosts maps to loopback in
// every container of the engine (moby/buildkit executor/oci/hosts.go:
// "127.0.0.1 localhost buildkitsandbox", "::1 localhost ip6-localhost
// ip6-loopback").
var sandboxNames = map[string]bool{"buildkitsandbox": true, "ip6-localhost": true, "ip6-loopback": true}

// Host says whether host — a name or an IP address, with a port or not, an
// IPv6 address in brackets or not — names the machine itself: localhost or
// a name under it (RFC 6761), a name the engine's containers map to
// loopback (ip6-localhost, buildkitsandbox), a loopback address
// (127.0.0.0/8, ::1, an IPv4-mapped one), or the unspecified address
// (0.0.0.0, ::), which a connection takes for the machine too. A host counts
// in every spelling a client takes: 127.1, 0x7f000001, 2130706433,
// 0177.0.0.1, 0:0:0:0:0:0:0:1, ::1%lo, a trailing dot, and what IDNA maps to
// one of them (ｌｏｃａｌｈｏｓｔ, localhoſt, １２７。０。０。１, ①②⑦.0.0.1).
func Host(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if !hasNonASCII(host) {
		return itself(host) // net/http leaves ASCII alone, and so does libidn2
	}
	for _, p := range []*idna.Profile{lookup, transitional} {
		if a, err := p.ToASCII(host); err == nil && itself(a) {
			return true
		}
	}
	return itself(host)
}

// itself judges host once it is mapped: a name or an address of this
// machine.
func itself(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || sandboxNames[host] {
		return true
	}
	ip, ok := address(host)
	return ok && (ip.IsLoopback() || ip.IsUnspecified())
}

// lookup and transitional map a name that is not ASCII as Go's net/http
// dials it, and git's libcurl with libidn2 resolves it: IDNA (UTS #46)
// mapping for lookup, which turns full-width letters and digits, ſ, circled
// digits and the ideographic full stops into ASCII. lookup is the
// non-transitional mapping, which keeps the zero-width joiner and
// non-joiner (U+200D, U+200C) and ß, ς; when that fails, libcurl retries
// libidn2 in transitional mode, which drops the joiners and writes ß as ss,
// so local\u200dhost reaches localhost. A name is judged by both, and by
// itself unmapped. The label checks that only say whether a name is valid
// are left out (Go's and libidn2's differ), so a name either client might
// dial mapped is judged mapped.
var (
	lookup       = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false), idna.CheckHyphens(false), idna.CheckJoiners(false), idna.BidiRule())
	transitional = idna.New(idna.MapForLookup(), idna.Transitional(true), idna.StrictDomainName(false), idna.CheckHyphens(false), idna.CheckJoiners(false), idna.BidiRule())
)

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// address reads host as an IP address: IPv6 (a zone dropped, an
// IPv4-mapped one unmapped), or IPv4 as inet_aton reads it.
func address(host string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.WithZone("").Unmap(), true
	}
	return inetAton(host)
}

// inetAton reads IPv4 as the C library's resolver does (curl, git, ping):
// one to four numbers, each decimal, octal (a leading 0) or hexadecimal
// (0x), the last filling the bytes left: 127.1 is 127.0.0.1, 2130706433
// and 0x7f000001 are too.
func inetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := number(p)
		bits := 8
		if i == len(parts)-1 {
			bits = 8 * (4 - i)
		}
		if !ok || n >= 1<<bits {
			return netip.Addr{}, false
		}
		v = v<<bits | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// number is one part of an inet_aton address.
func number(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		if p = p[2:]; p == "" {
			return 0, true // "0x" alone is 0 to the C library
		}
		base = 16
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 32) // no sign, no "_": as the C library

	return n, err == nil
}
