package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The TLS front's start, run with the real openssl: it issues itself a
// certificate the check's CA signs, for the bare name Endpoint gives and for
// its full hostname, and for nothing else.
func TestTLSFrontIssuesACertificateForItsOwnName(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl on this machine")
	}
	ca, err := newPrivateCA()
	require.NoError(t, err)
	dir := t.TempDir()
	script := strings.NewReplacer("/ca/", dir+"/ca/", "/tls", dir+"/tls").Replace(issueAndServe)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ca"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca/ca.pem"), []byte(ca.CA), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca/ca.key"), []byte(ca.Key), 0o600))
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "TLS_HOST=k2mvd3p1sl6le.dpxs8e3q3i0ng.dagger.local", "ISSUE_ONLY=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))

	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM([]byte(ca.CA)))
	certPEM, err := os.ReadFile(filepath.Join(dir, "tls/cert.pem"))
	require.NoError(t, err)
	keyPEM, err := os.ReadFile(filepath.Join(dir, "tls/key.pem"))
	require.NoError(t, err)
	block, _ := pem.Decode(certPEM)
	require.NotNil(t, block)
	leaf, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	for _, name := range []string{"k2mvd3p1sl6le", "k2mvd3p1sl6le.dpxs8e3q3i0ng.dagger.local"} {
		_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		assert.NoError(t, err, name)
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "lowcode-hooks.test"})
	assert.Error(t, err, "no other name")
	_, err = tls.X509KeyPair(certPEM, keyPEM)
	assert.NoError(t, err, "certificate and key go together")
}
