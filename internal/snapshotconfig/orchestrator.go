package snapshotconfig

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/loopback"
)

// Orchestrator is where the toolkit's snapshot connects, --orchestrator
// [user@]host[:port]: the platform's orchestrator, whose WebSocket the
// toolkit opens (over TLS when the port is 443). The password is a secret of
// its own (PasswordEnv), never part of it.
type Orchestrator struct {
	User string
	Host string
	Port int // 0: the toolkit's default (8080)
}

// The environment the toolkit reads its orchestrator options' defaults from
// (@olympeio/toolkit 1.2.3: --orchestrator.host, .port, .userName, .password).
const (
	HostEnv     = "ORCHESTRATOR_HOST"
	PortEnv     = "ORCHESTRATOR_SERVICE_PORT"
	UserEnv     = "DRAW_USERNAME"
	PasswordEnv = "DRAW_PASSWORD"
)

var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$`)

// ParseOrchestrator reads flag's value s; "" is the zero Orchestrator (the
// toolkit's own defaults, or the environment the caller gives it).
func ParseOrchestrator(flag, s string) (Orchestrator, error) {
	bad := func(why string) (Orchestrator, error) {
		return Orchestrator{}, fmt.Errorf("%s %s: %s", flag, fielderr.Quote(s), why)
	}
	if s == "" {
		return Orchestrator{}, nil
	}
	if at := strings.LastIndex(s, "@"); at >= 0 && strings.Contains(s[:at], ":") {
		// user:password@, first: the password is never echoed, so neither
		// is the value, whatever else is wrong with it
		return Orchestrator{}, fmt.Errorf("%s: a password in the address: give it with --orchestrator-password (a secret) and --orchestrator user@host[:port]", flag)
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return bad("no spaces or control characters: want [user@]host[:port], e.g. ci@draw.example.com:443")
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#") {
		return bad("want [user@]host[:port], not an address with a scheme or a path: the toolkit speaks TLS by itself on port 443")
	}
	var o Orchestrator
	rest := s
	if at := strings.LastIndex(s, "@"); at >= 0 {
		o.User, rest = s[:at], s[at+1:]
		if o.User == "" {
			return bad("the user before @ is empty")
		}
	}
	o.Host = rest
	if h, p, err := net.SplitHostPort(rest); err == nil {
		port, perr := strconv.Atoi(p)
		if perr != nil || port < 1 || port > 65535 {
			what := "port"
			if len(p) <= len("65535") {
				// a longer one is in the value quoted already: twice would not stay small
				what += " " + fielderr.Quote(p)
			}
			return bad(what + ": want a number from 1 to 65535")
		}
		o.Host, o.Port = h, port
	} else if strings.Count(rest, ":") == 1 || strings.HasPrefix(rest, "[") {
		return bad("want host[:port] with a port from 1 to 65535 (an IPv6 address in brackets)")
	}
	switch {
	case o.Host == "":
		return bad("no host: want [user@]host[:port]")
	case net.ParseIP(o.Host) == nil && !hostName.MatchString(o.Host):
		return bad("not a host name or IP address")
	case loopback.Host(o.Host):
		return bad("names this machine, but the toolkit runs in a container of the engine, whose loopback has no orchestrator: give an address the engine reaches")
	}
	return o, nil
}

// Env is what the toolkit is given of o, as environment variables (never as
// options, so that no printed command holds them).
func (o Orchestrator) Env() [][2]string {
	var env [][2]string
	if o.Host != "" {
		env = append(env, [2]string{HostEnv, o.Host})
	}
	if o.Port != 0 {
		env = append(env, [2]string{PortEnv, strconv.Itoa(o.Port)})
	}
	if o.User != "" {
		env = append(env, [2]string{UserEnv, o.User})
	}
	return env
}

// ErrNoOrchestrator is a password given without an address to use it at.
var ErrNoOrchestrator = errors.New("--orchestrator-password needs --orchestrator [user@]host[:port]: the toolkit would send it to its default, localhost")
