package snapshotconfig

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOrchestratorIsUserHostAndPort(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Orchestrator
		env      [][2]string
		err      string
	}{
		{"none: the toolkit's defaults", "", Orchestrator{}, nil, ""},
		{"a host", "draw.example.com", Orchestrator{Host: "draw.example.com"}, [][2]string{{HostEnv, "draw.example.com"}}, ""},
		{"a host and the TLS port", "draw.example.com:443", Orchestrator{Host: "draw.example.com", Port: 443},
			[][2]string{{HostEnv, "draw.example.com"}, {PortEnv, "443"}}, ""},
		{"a user, a host and a port", "ci-bot@orchestrator:8080", Orchestrator{User: "ci-bot", Host: "orchestrator", Port: 8080},
			[][2]string{{HostEnv, "orchestrator"}, {PortEnv, "8080"}, {UserEnv, "ci-bot"}}, ""},
		{"a user that is an email address", "ci@acme.example@draw.acme.example", Orchestrator{User: "ci@acme.example", Host: "draw.acme.example"},
			[][2]string{{HostEnv, "draw.acme.example"}, {UserEnv, "ci@acme.example"}}, ""},
		{"an IPv6 address", "[2001:db8::1]:443", Orchestrator{Host: "2001:db8::1", Port: 443}, [][2]string{{HostEnv, "2001:db8::1"}, {PortEnv, "443"}}, ""},
		{"a URL", "https://draw.example.com", Orchestrator{}, nil, "not an address with a scheme or a path"},
		{"a path", "draw.example.com/OlympeServer", Orchestrator{}, nil, "not an address with a scheme or a path"},
		{"a port of 0", "draw.example.com:0", Orchestrator{}, nil, `port "0": want a number from 1 to 65535`},
		{"a port too high", "draw.example.com:70000", Orchestrator{}, nil, "want a number from 1 to 65535"},
		{"an empty port", "draw.example.com:", Orchestrator{}, nil, "want a number from 1 to 65535"},
		{"an empty user", "@draw.example.com", Orchestrator{}, nil, "the user before @ is empty"},
		{"no host", "ci@", Orchestrator{}, nil, "no host"},
		{"a host with an underscore", "draw_1.example.com", Orchestrator{}, nil, "not a host name or IP address"},
		{"a space", "draw example", Orchestrator{}, nil, "no spaces or control characters"},
		{"this machine", "localhost:8080", Orchestrator{}, nil, "names this machine"},
		{"this machine by address", "127.0.0.1", Orchestrator{}, nil, "names this machine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseOrchestrator("--orchestrator", tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.True(t, strings.HasPrefix(err.Error(), "--orchestrator "), "the error names the flag: %s", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.env, got.Env())
		})
	}
}

// A password in --orchestrator is said first and never echoed, whatever
// else is wrong with the value (a scheme, a path, a space: round-13 probe
// P13-2, #65).
func TestAPasswordInTheOrchestratorIsNeverEchoed(t *testing.T) {
	for _, in := range []string{"ci:hunter2-secret@draw.example.com", "https://ci:hunter2-secret@draw.example.com",
		"ci:hunter2-secret@draw.example.com/path", "ci:hunter2-secret@draw.example.com:443?x", "ci:hunter2-secret#@draw.example.com",
		"ci:hunter2-secret @draw.example.com", "ci:hunter2-secret\n@draw.example.com"} {
		_, err := ParseOrchestrator("--orchestrator", in)
		require.Error(t, err, in)
		assert.NotContains(t, err.Error(), "hunter2-secret", in)
		assert.Contains(t, err.Error(), "--orchestrator: a password in the address: give it with --orchestrator-password", in)
	}
}

func FuzzParseOrchestrator(f *testing.F) {
	for _, s := range []string{"", "draw.example.com:443", "ci@h:1", "[::1]:80", "a:b@c", "https://x", "h:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOrchestrator("--orchestrator", s)
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), "--orchestrator"), "names the flag")
			assert.Less(t, len(err.Error()), 400, "stays small")
			return
		}
		if s == "" {
			assert.Equal(t, Orchestrator{}, o)
			return
		}
		assert.NotEmpty(t, o.Host)
		assert.True(t, o.Port >= 0 && o.Port <= 65535)
		assert.NotContains(t, o.User, ":", "no password ever reaches the environment")
		for _, kv := range o.Env() {
			assert.NotContains(t, kv[1], "\n")
		}
	})
}
