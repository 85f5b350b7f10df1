package loopback

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHost(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"localhost:5000", true},
		{"LocalHost:5000", true},
		{"localhost.", true},
		{"127.0.0.1", true},
		{"127.0.0.1:8080", true},
		{"127.1.2.3:8080", true},
		{"[::1]:5000", true},
		{"::1", true},
		{"[::1]", true},
		{"0.0.0.0:5000", true},
		{"[::]:443", true},
		{"::ffff:127.0.0.1", true},
		{"registry.example.com", false},
		{"registry.example.com:5000", false},
		{"localhost.example.com", false},
		{"mylocalhost", false},
		{"10.87.0.12:5000", false},
		{"128.0.0.1", false},
		{"[::2]:5000", false},
		{"registry", false},
		{"", false},
	} {
		t.Run(tc.host, func(t *testing.T) {
			assert.Equal(t, tc.want, Host(tc.host))
		})
	}
}

// A port, or brackets around an IPv6 address, never change the answer.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"localhost", "127.0.0.1", "::1", "0.0.0.0", "registry.example.com", "10.0.0.1", "::ffff:127.0.0.1"} {
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
	})
}
