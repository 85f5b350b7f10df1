package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strconv"
	"time"

	"dagger/tests/internal/dagger"
)

// privateCA is a certificate authority a check makes for one run: what a
// self-hosted endpoint with a private CA looks like.
type privateCA struct {
	CA, Key string // PEM: the CA's certificate and private key
}

func newPrivateCA() (*privateCA, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lowcode-pipeline checks CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(caKey)
	if err != nil {
		return nil, err
	}
	return &privateCA{
		CA:  string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})),
		Key: string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})),
	}, nil
}

// issueAndServe is the TLS front's start: it issues itself a certificate,
// signed by the CA in /ca, for the name the engine gave the service (its
// hostname, <hash>.<session domain>, and the bare <hash> that Endpoint
// returns and that resolves from every module of the session), then
// terminates TLS on $LISTEN and forwards to $UPSTREAM. The name is known
// only once the service runs: it is a hash of the service's definition,
// which holds the CA. ($TLS_HOST stands in for hostname in the unit test.)
const issueAndServe = `set -eu
host=${TLS_HOST:-$(hostname)}
short=${host%%.*}
mkdir -p /tls
openssl ecparam -name prime256v1 -genkey -noout -out /tls/key.pem
openssl req -new -key /tls/key.pem -subj "/CN=$short" -out /tls/req.csr
printf 'subjectAltName=DNS:%s,DNS:%s\nextendedKeyUsage=serverAuth\n' "$short" "$host" > /tls/ext.cnf
openssl x509 -req -in /tls/req.csr -CA /ca/ca.pem -CAkey /ca/ca.key -CAcreateserial -days 1 -extfile /tls/ext.cnf -out /tls/cert.pem 2>/dev/null
[ -n "${ISSUE_ONLY:-}" ] && exit 0
exec socat "OPENSSL-LISTEN:$LISTEN,fork,reuseaddr,cert=/tls/cert.pem,key=/tls/key.pem,verify=0" "TCP:$UPSTREAM"`

// tlsFront serves upstream (bound as "upstream", reached at upstreamPort)
// over https on listen, with a certificate the CA signs for the front's own
// name. A name given with Service.withHostname would resolve only in this
// module (engine-facts.md); the front's endpoint resolves in the module
// under test too.
// name keeps the CA key's secret apart from another check's.
func tlsFront(name string, ca *privateCA, upstream *dagger.Service, upstreamPort, listen int) *dagger.Service {
	return dag.Container().From("alpine:3.22").
		WithExec([]string{"apk", "add", "--no-cache", "openssl", "socat"}).
		WithNewFile("/ca/ca.pem", ca.CA).
		WithMountedSecret("/ca/ca.key", dag.SetSecret(name+"-ca-key", ca.Key)).
		WithServiceBinding("upstream", upstream).
		WithEnvVariable("LISTEN", strconv.Itoa(listen)).
		WithEnvVariable("UPSTREAM", "upstream:"+strconv.Itoa(upstreamPort)).
		WithExposedPort(listen).
		AsService(dagger.ContainerAsServiceOpts{Args: []string{"sh", "-c", issueAndServe}})
}
