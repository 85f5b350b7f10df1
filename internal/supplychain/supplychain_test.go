package supplychain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ref = "registry.example.com/team/app-frontend@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestSigningScriptSignsTheDigestAndAttestsTheSBOM(t *testing.T) {
	script, err := Signing{Ref: ref, Registry: "registry.example.com", Username: "ci", SBOM: "/sbom/frontend.spdx.json"}.Script()
	require.NoError(t, err)
	assert.Equal(t, `set -eu
printf '%s' "$REGISTRY_PASSWORD" | cosign login 'registry.example.com' --username 'ci' --password-stdin
cosign sign --yes --key /run/cosign/cosign.key --tlog-upload=false '`+ref+`'
cosign attest --yes --key /run/cosign/cosign.key --tlog-upload=false --type spdxjson --predicate '/sbom/frontend.spdx.json' '`+ref+`'
`, script)

	script, err = Signing{Ref: ref}.Script()
	require.NoError(t, err)
	assert.NotContains(t, script, "login", "no user name: no login")
	assert.NotContains(t, script, "attest", "no SBOM: no attestation")

	script, err = Signing{Ref: ref, Registry: "localhost:5000", ServiceHost: "registry"}.Script()
	require.NoError(t, err)
	assert.Contains(t, script, "socat TCP-LISTEN:5000,fork,reuseaddr TCP:registry:5000 &\nsleep 1\ncosign sign", "a registry service named localhost is forwarded first")

	_, err = Signing{Ref: "registry.example.com/team/app:1.0"}.Script()
	assert.ErrorContains(t, err, "only a digest is signed")
}

// The script is real shell: run with stand-in cosign and a hostile user
// name, it passes each value as one word and the password only on stdin.
func TestSigningScriptRunsInARealShell(t *testing.T) {
	bin := t.TempDir()
	log := filepath.Join(t.TempDir(), "calls")
	stub := "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\" >> " + log + "; done\nprintf ' stdin=' >> " + log + "\ncat >> " + log + " 2>/dev/null || true\necho >> " + log + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "cosign"), []byte(stub), 0o755))
	script, err := Signing{Ref: ref, Registry: "r.example.com", Username: "ci'; rm -rf / #", SBOM: "/s.json"}.Script()
	require.NoError(t, err)
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "REGISTRY_PASSWORD=pw-123")
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	calls, err := os.ReadFile(log)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, "[login][r.example.com][--username][ci'; rm -rf / #][--password-stdin] stdin=pw-123", lines[0])
	assert.Equal(t, "[sign][--yes][--key][/run/cosign/cosign.key][--tlog-upload=false]["+ref+"] stdin=", lines[1])
	assert.Contains(t, lines[2], "[attest]")
	assert.NotContains(t, script, "pw-123")
}

func TestToolsArePinned(t *testing.T) {
	for _, pkg := range []string{Syft, Cosign} {
		_, version, ok := strings.Cut(pkg, "@v")
		assert.True(t, ok && version != "" && !strings.Contains(version, "latest"), pkg)
	}
	assert.Equal(t, []string{"syft", "scan", "oci-archive:/image.tar", "--output", "spdx-json=/out/x.spdx.json", "--quiet"}, SBOMCommand("/image.tar", "/out/x.spdx.json"))
	assert.Equal(t, "backend.spdx.json", SBOMName("backend"))
}
