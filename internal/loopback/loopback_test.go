package loopback

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/net/idna"
)

func TestHostTellsThisMachineFromOthers(t *testing.T) {
	for _, tc := range []struct {
		name, host string
		want       bool
	}{
		{"localhost", "localhost", true},
		{"localhost with a port", "localhost:5000", true},
		{"localhost in mixed case", "LocalHost:5000", true},
		{"localhost in capitals", "LOCALHOST", true},
		{"localhost with the root's dot", "localhost.", true},
		{"a name under localhost (RFC 6761)", "registry.localhost:5000", true},
		{"127.0.0.1", "127.0.0.1", true},
		{"127.0.0.1 with a port", "127.0.0.1:8080", true},
		{"anywhere in 127/8", "127.1.2.3:8080", true},
		{"IPv4 with a trailing dot", "127.0.0.1.", true},
		{"IPv4 of two parts", "127.1", true},
		{"IPv4 of three parts", "127.0.1:8080", true},
		{"IPv4 as one hexadecimal number", "0x7f000001", true},
		{"IPv4 as one hexadecimal number in capitals", "0X7F000001:80", true},
		{"IPv4 as one decimal number", "2130706433", true},
		{"IPv4 in octal parts", "0177.0.0.1", true},
		{"IPv4 in hexadecimal parts", "0x7f.0x0.0x0.0x1", true},
		{"the unspecified address as 0", "0:8080", true},
		{"IPv6 loopback", "::1", true},
		{"IPv6 loopback in brackets", "[::1]", true},
		{"IPv6 loopback in brackets with a port", "[::1]:5000", true},
		{"IPv6 loopback written out", "0:0:0:0:0:0:0:1", true},
		{"IPv6 loopback with a zone", "[::1%lo]:5000", true},
		{"IPv4-mapped loopback", "::ffff:127.0.0.1", true},
		{"IPv4-mapped loopback in hexadecimal", "[::ffff:7f00:1]:80", true},
		{"the unspecified IPv4 address", "0.0.0.0:5000", true},
		{"the unspecified IPv6 address", "[::]:443", true},
		{"localhost in full-width letters", "ｌｏｃａｌｈｏｓｔ", true},
		{"localhost in full-width capitals", "ＬＯＣＡＬＨＯＳＴ", true},
		{"localhost in full-width letters with a port", "ｌｏｃａｌｈｏｓｔ:5000", true},
		{"localhost with a long s", "localhoſt", true},
		{"localhost with an ideographic full stop", "localhost。", true},
		{"a name under localhost after an ideographic full stop", "registry。localhost", true},
		{"a name under localhost that IDNA's label checks refuse", "ａｂ--ｃ。ｌｏｃａｌｈｏｓｔ", true},
		{"127.0.0.1 in full-width digits", "１２７.０.０.１", true},
		{"127.0.0.1 with ideographic full stops", "127。0。0。1", true},
		{"127.0.0.1 with full-width full stops", "127．0．0．1", true},
		{"127.0.0.1 with half-width ideographic full stops", "127｡0｡0｡1", true},
		{"127.0.0.1 in circled digits", "①②⑦.0.0.1", true},
		{"IPv4 as one full-width hexadecimal number", "０ｘ７ｆ０００００１", true},
		{"localhost with a zero-width joiner, which transitional IDNA drops", "local\u200dhost", true},
		{"localhost with a zero-width non-joiner, which transitional IDNA drops", "local\u200chost", true},
		{"localhost with a zero-width joiner and a port", "local\u200dhost:5000", true},
		{"localhost ending in a zero-width joiner", "localhost\u200d", true},
		{"a name under localhost with a zero-width joiner", "reg\u200distry.local\u200chost.", true},
		{"127.0.0.1 with a zero-width joiner", "127.0.0\u200d.1", true},
		{"a name under localhost with ß, which transitional IDNA writes ss", "ß.localhost", true},
		{"BuildKit's name with a zero-width non-joiner", "buildkit\u200csandbox", true},
		{"BuildKit's name for ::1", "ip6-localhost", true},
		{"BuildKit's other name for ::1", "IP6-Loopback:443", true},
		{"BuildKit's name for the container itself", "buildkitsandbox", true},
		{"BuildKit's name for the container with the root's dot", "buildkitsandbox.", true},
		{"a registry's name", "registry.example.com", false},
		{"a registry's name with a port", "registry.example.com:5000", false},
		{"a name that starts with localhost", "localhost.example.com", false},
		{"a name that ends in localhost", "mylocalhost", false},
		{"a private address", "10.87.0.12:5000", false},
		{"next to 127/8", "128.0.0.1", false},
		{"next to 127/8 as one number", "2147483648", false},
		{"octal that reads as 10.0.0.1", "012.0.0.1", false},
		{"another IPv6 address", "[::2]:5000", false},
		{"a short name", "registry", false},
		{"a Dagger service's name", "2d4e8a1b0c3f5d6e", false},
		{"a number too big for IPv4", "4294967296", false},
		{"a part too big for its place", "127.256.0.1", false},
		{"five parts", "127.0.0.0.1", false},
		{"not octal", "0179.0.0.1", false},
		{"nothing", "", false},
		{"a registry's name in full-width letters", "ｒｅｇｉｓｔｒｙ.example.com", false},
		{"a full-width name with more after localhost", "ｌｏｃａｌｈｏｓｔ_", false},
		{"a name under BuildKit's name", "x.buildkitsandbox", false},
		{"a private address in full-width digits", "１０.０.０.１", false},
		{"a registry's name with a zero-width joiner", "reg\u200distry.example.com", false},
		{"a name that ends in localhost with a zero-width non-joiner", "my\u200clocalhost", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Host(tc.host), tc.host)
		})
	}
}

// A port, or brackets around an IPv6 address, never change the answer; nor
// does what IDNA maps a name to (a client dials that), nor writing an ASCII
// name's letters and digits full-width, or in capitals.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"localhost", "127.0.0.1", "::1", "0.0.0.0", "registry.example.com", "10.0.0.1", "::ffff:127.0.0.1", "127.1", "0x7f000001", "0177.0.0.1",
		"ｌｏｃａｌｈｏｓｔ", "localhoſt", "127。0。0。1", "①②⑦.0.0.1", "ip6-localhost", "buildkitsandbox",
		"local\u200dhost", "local\u200chost", "ß.localhost", "reg\u200distry.example.com", "127.0.0\u200d.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		if strings.ContainsAny(host, "[]") || (strings.Contains(host, ":") && net.ParseIP(host) == nil) {
			return // a port of its own, or not a host
		}
		want := Host(host)
		assert.Equal(t, want, Host(net.JoinHostPort(host, "5000")), "with a port")
		if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
			assert.Equal(t, want, Host("["+host+"]"), "in brackets")
		}
		if a, err := idna.Lookup.ToASCII(host); err == nil {
			assert.Equal(t, want, Host(a), "as IDNA maps it: %q", a)
		}
		// libcurl retries libidn2 in transitional mode: what that mapping
		// reaches, the host reaches.
		if a, err := idna.New(idna.MapForLookup(), idna.Transitional(true)).ToASCII(host); err == nil && Host(a) {
			assert.True(t, want, "as transitional IDNA maps it: %q", a)
		}
		if fw, ok := fullWidth(host); ok {
			assert.Equal(t, want, Host(fw), "full-width: %q", fw)
			assert.Equal(t, want, Host(strings.ToUpper(host)), "in capitals")
			// Transitional IDNA drops a zero-width joiner or non-joiner
			// anywhere in a name.
			for _, j := range []string{"\u200d", "\u200c"} {
				for i := 0; i <= len(host); i++ {
					joined := host[:i] + j + host[i:]
					assert.Equal(t, want, Host(joined), "with a joiner: %q", joined)
				}
			}
		}
	})
}

// fullWidth writes an ASCII name of letters, digits, dots and hyphens with
// the full-width forms of its letters and digits and ideographic full
// stops, as an East Asian keyboard may.
func fullWidth(s string) (string, bool) {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '.':
			b.WriteRune('。')
		case r == '-':
			b.WriteRune(r)
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			b.WriteRune(r + 0xFEE0)
		default:
			return "", false
		}
	}
	return b.String(), s != ""
}

// Every spelling of an IPv4 address a resolver takes says the same as the
// address itself: this machine for 127/8 and 0.0.0.0, another one else.
func FuzzEverySpellingOfAnIPv4AddressIsTheAddress(f *testing.F) {
	for _, v := range []uint32{0x7f000001, 0x7fffffff, 0, 0x0a000001, 0x80000000, 0x7effffff} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v uint32) {
		a, b, c, d := v>>24, v>>16&0xff, v>>8&0xff, v&0xff
		want := a == 127 || v == 0
		for _, spelling := range []string{
			fmt.Sprintf("%d.%d.%d.%d", a, b, c, d),
			fmt.Sprintf("%d.%d.%d.%d.", a, b, c, d),
			fmt.Sprintf("%d", v),
			fmt.Sprintf("0x%x", v),
			fmt.Sprintf("0X%08X", v),
			fmt.Sprintf("0%o.0%o.0%o.0%o", a, b, c, d),
			fmt.Sprintf("0x%x.0x%x.0x%x.0x%x", a, b, c, d),
			fmt.Sprintf("%d.%d.%d", a, b, v&0xffff),
			fmt.Sprintf("%d.0x%x", a, v&0xffffff),
			fmt.Sprintf("::ffff:%d.%d.%d.%d", a, b, c, d),
			fmt.Sprintf("[::ffff:%x:%x]:443", v>>16, v&0xffff),
			fmt.Sprintf("%d。%d．%d｡%d", a, b, c, d),
			strings.Map(fullWidthDigit, fmt.Sprintf("%d.%d.%d.%d", a, b, c, d)),
			strings.Map(fullWidthDigit, fmt.Sprintf("0x%x", v)),
			strings.Map(circledDigit, fmt.Sprintf("%d.%d.%d.%d", a, b, c, d)),
		} {
			assert.Equal(t, want, Host(spelling), spelling)
		}
	})
}

func fullWidthDigit(r rune) rune {
	if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' {
		return r + 0xFEE0
	}
	return r
}

// circledDigit writes 1 to 9 circled (①), as IDNA reads them back; 0 stays.
func circledDigit(r rune) rune {
	if r >= '1' && r <= '9' {
		return '①' + r - '1'
	}
	return r
}
