// Package supplychain holds the command lines of the opt-in supply-chain
// steps of a release: an SPDX SBOM of each image (syft), and a signature
// and an SBOM attestation on each pushed digest (cosign). Both tools come
// from their published images at the versions pinned here, their binaries
// copied out (a download, not a compile: built from source, on an empty
// engine cache, they took 5 min 15 s); building them from their public Go
// modules at the same versions stays an option.
package supplychain

import (
	"fmt"
	"strings"
)

// The tools' Go packages, pinned.
const (
	Syft   = "github.com/anchore/syft/cmd/syft@v1.51.0"
	Cosign = "github.com/sigstore/cosign/v2/cmd/cosign@v2.6.5"
)

// The tools' published images at the same versions, and where each keeps
// its binary (syft's image is the binary at /syft; cosign's is built with
// ko, which puts it at /ko-app/cosign). Each is pinned by its index digest
// as independent public repositories pin it (2026: cosign's by four, syft's
// by three, one of which read it from the registry's Docker-Content-Digest);
// no registry is reachable where this module is developed, and the engine
// checks a digest when it pulls. syft is v1.51.0, the newest release whose
// digest could be confirmed that way.
const (
	SyftImage    = "docker.io/anchore/syft:v1.51.0@sha256:678bfa565b60f747aac0f8e964fe5588a24445b8d0a480e91f6efd70020dfbb0"
	SyftBinary   = "/syft"
	CosignImage  = "gcr.io/projectsigstore/cosign:v2.6.5@sha256:ad281047f85c5e1fc6ffbc30c2b55be3b07b4032bef715a12122ce5829619aca"
	CosignBinary = "/ko-app/cosign"
)

// Where the signing container finds its inputs.
const (
	KeyPath       = "/run/cosign/cosign.key"
	PasswordEnv   = "COSIGN_PASSWORD"
	RegistryPWEnv = "REGISTRY_PASSWORD"
)

// BuildCommand builds one tool into /out.
func BuildCommand(pkg string) []string {
	return []string{"go", "install", "-trimpath", pkg}
}

// SBOMCommand writes an SPDX JSON SBOM of an image saved as an OCI archive.
func SBOMCommand(archive, out string) []string {
	return []string{"syft", "scan", "oci-archive:" + archive, "--output", "spdx-json=" + out, "--quiet"}
}

// SBOMName is the file an image's SBOM is returned as.
func SBOMName(kind string) string { return kind + ".spdx.json" }

// Signing is one pushed image to sign.
type Signing struct {
	Ref      string // registry/repository@sha256:…, the digest that is signed
	Registry string // host[:port], for cosign login
	Username string // registry user name; empty: no login
	SBOM     string // path of the SBOM to attest; empty: none
	// ServiceHost, for a registry run as a Dagger service and named
	// localhost:PORT: the host the service is bound under; the registry's
	// localhost port is forwarded to the same port there.
	ServiceHost string
}

// Script is the shell script that signs the digest (and attests the SBOM)
// with the key at KeyPath; the key's password and the registry password come
// from the environment, never from the command line. The signature is not
// uploaded to a public transparency log: verify with the public key.
func (s Signing) Script() (string, error) {
	if !strings.Contains(s.Ref, "@sha256:") {
		return "", fmt.Errorf("sign %s: only a digest is signed", s.Ref)
	}
	var b strings.Builder
	b.WriteString("set -eu\n")
	if s.ServiceHost != "" {
		_, port, ok := strings.Cut(s.Registry, ":")
		if !ok {
			return "", fmt.Errorf("forward to %s: the registry %s names no port", s.ServiceHost, s.Registry)
		}
		fmt.Fprintf(&b, "socat TCP-LISTEN:%s,fork,reuseaddr TCP:%s:%s &\nsleep 1\n", port, s.ServiceHost, port)
	}
	if s.Username != "" {
		fmt.Fprintf(&b, "printf '%%s' \"$%s\" | cosign login %s --username %s --password-stdin\n", RegistryPWEnv, quote(s.Registry), quote(s.Username))
	}
	fmt.Fprintf(&b, "cosign sign --yes --key %s --tlog-upload=false %s\n", KeyPath, quote(s.Ref))
	if s.SBOM != "" {
		fmt.Fprintf(&b, "cosign attest --yes --key %s --tlog-upload=false --type spdxjson --predicate %s %s\n", KeyPath, quote(s.SBOM), quote(s.Ref))
	}
	return b.String(), nil
}

// VerifyCommand is how a user checks a signature with the public key.
func VerifyCommand(ref, publicKey string) []string {
	return []string{"cosign", "verify", "--key", publicKey, "--insecure-ignore-tlog=true", ref}
}

// quote makes s one shell word.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
