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
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// schema is the core API and the modules' SDL, as one schema: what the
// engine serves to this module when it serves lowcode-pipeline and its Go
// example.
func schema(t *testing.T) *ast.Schema {
	t.Helper()
	var sources []*ast.Source
	for _, name := range []string{"dagger-core.v0.21.8.graphql", "lowcode-pipeline.graphql", "lowcode-pipeline-example.graphql"} {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		sources = append(sources, &ast.Source{Name: name, Input: string(data)})
	}
	s, err := gqlparser.LoadSchema(sources...)
	require.NoError(t, err)
	return s
}

// Every query the checks send is valid against the schema the engine serves:
// a wrong argument, field or variable type fails here, not only on an engine.
func TestEveryCheckQueryIsValid(t *testing.T) {
	s := schema(t)
	require.NotEmpty(t, queries, "the checks declare their queries with gql")
	names := map[string]bool{}
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) {
			assert.False(t, names[q.name], "query names are unique")
			names[q.name] = true
			doc, errs := gqlparser.LoadQueryWithRules(s, q.text, rules.NewDefaultRules())
			require.Empty(t, errs, "%s", q.text)
			// A query is sent to the module that serves its top field.
			want := map[string]string{".": "lowcodePipeline", "examples/go": "lowcodePipelineExample"}[q.dir]
			for _, op := range doc.Operations {
				for _, sel := range op.SelectionSet {
					assert.Equal(t, want, sel.(*ast.Field).Name, "query %s is sent to the module in %s", q.name, q.dir)
				}
			}
		})
	}
}

// The validator catches the mistakes a v0.21.8 engine refuses, so a green
// run means something.
func TestValidationRefusesWhatTheEngineRefuses(t *testing.T) {
	s := schema(t)
	for _, tc := range []struct {
		name, query, want string
	}{
		{"an object argument declared with its own ID type",
			`query($s: DirectoryID!) { lowcodePipeline(source: $s) { build { drawVersion } } }`,
			`Variable "$s" of type "DirectoryID!" used in position expecting type "ID"`},
		{"an argument the function does not have",
			`{ lowcodePipeline { payload(frontend: "x") { json } } }`, `Unknown argument "frontend"`},
		{"a field the object does not have",
			`{ lowcodePipeline { payload { deploy } } }`, `must have a selection of subfields`},
		{"a required argument left out",
			`{ lowcodePipeline { payload { plan { warnings } } } }`, `argument "backend" of type "[String!]!" is required`},
		{"an enum value as a string",
			`{ lowcodePipeline { payload { withUpdateMode(mode: "auto") { json } } } }`, `cannot represent non-enum value: "auto"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := gqlparser.LoadQueryWithRules(s, tc.query, rules.NewDefaultRules())
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.Error(), tc.want)
		})
	}
}

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
