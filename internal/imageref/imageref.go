// Package imageref reads container image references once, into a Ref:
// go-containerregistry's name, held to Docker's grammar where that is the
// stricter (see Parse).
package imageref

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// Ref is an image reference, read (Parse): a repository with its registry
// (Docker Hub's, library/ for a one-part name, when none is named), and a
// tag, a digest, both, or neither.
type Ref struct {
	repo   name.Repository
	tag    string
	digest string // sha256:<64 hex>
	host   string // the registry as named, "" for none
	given  string
}

// Repository is the ref's repository, with its registry.
func (r Ref) Repository() name.Repository { return r.repo }

// Registry is the registry's host[:port] as named; index.docker.io when none is.
func (r Ref) Registry() string { return r.repo.RegistryStr() }

// Host is the registry as the ref names it; "" when it names none.
func (r Ref) Host() string { return r.host }

// Whole reports whether the ref names its registry and its whole
// repository: no Docker Hub default, no implied library/ (Docker's
// canonical name).
func (r Ref) Whole() bool {
	return r.host != "" && (r.repo.RegistryStr() != name.DefaultRegistry || strings.Contains(strings.TrimPrefix(r.given, r.host+"/"), "/"))
}

// Tag is the ref's tag, "" for none.
func (r Ref) Tag() string { return r.tag }

// Digest is the ref's digest, "" for none.
func (r Ref) Digest() string { return r.digest }

// String is the ref as it was given.
func (r Ref) String() string { return r.given }

// IsDockerHubOfficial reports whether the ref names Docker Hub's official
// image repo (library/<repo>), however it is spelled: node, docker.io/node,
// index.docker.io/library/node.
func (r Ref) IsDockerHubOfficial(repo string) bool {
	return r.repo.RegistryStr() == name.DefaultRegistry && r.repo.RepositoryStr() == "library/"+repo
}

// Docker's grammar (github.com/distribution/reference), where it is
// stricter than go-containerregistry's: a path of lower-case components
// joined by one separator, a tag not starting with '.' or '-', a host of
// DNS labels or a bracketed IPv6 address.
var (
	pathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	tagGrammar    = regexp.MustCompile(`^\w[\w.-]*$`)
	hostGrammar   = regexp.MustCompile(`^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?$`)
)

// ErrRegistry is a first part Docker reads as a registry that is none.
var ErrRegistry = errors.New("not a registry host")

const maxName = 255 // registry/repository, as both libraries bound it

// Parse reads ref as Docker does ([registry/]repository[:tag][@sha256:…];
// the first part is the registry when it holds '.' or ':' or is
// localhost) and refuses what Docker's grammar or go-containerregistry's
// refuses: an upper-case letter in the repository, a component that
// starts, ends or doubles a separator, a tag starting with '.' or '-', a
// digest that is not sha256 (Docker's grammar takes sha512 too), an
// upper-case first part without '.' or ':' (Docker reads it as a registry,
// go-containerregistry as the repository). A repository of one character
// (r.example.com/a) is taken, as Docker and the OCI distribution spec take
// it, though go-containerregistry asks for two: no such name is pushed
// (each has its {kind}), and a base image is only read from the engine's
// export of it.
// Errors do not repeat ref: the caller names its flag and value.
func Parse(ref string) (Ref, error) {
	if ref == "" {
		return Ref{}, errors.New("empty image reference")
	}
	rest, digest, hasDigest := strings.Cut(ref, "@")
	if hasDigest && !validDigest(digest) {
		return Ref{}, errors.New("the digest is not sha256:<64 lower-case hex digits>")
	}
	repo, tag := rest, ""
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		repo, tag = rest[:i], rest[i+1:]
		if len(tag) > 128 || !tagGrammar.MatchString(tag) {
			return Ref{}, errors.New("the tag is up to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'")
		}
	}
	host, path := splitHost(repo)
	switch {
	case host == "":
	case !hostGrammar.MatchString(host):
		return Ref{}, fmt.Errorf("%w: %s is not a host name or IP address with an optional :port", ErrRegistry, fielderr.Quote(host))
	case host != "localhost" && !strings.ContainsAny(host, ".:"):
		// Docker reads it as a registry, go-containerregistry as the repository
		return Ref{}, errors.New("repository name must be lowercase")
	}
	if strings.ToLower(path) != path {
		return Ref{}, errors.New("repository name must be lowercase")
	}
	for _, c := range strings.Split(path, "/") {
		if !pathComponent.MatchString(c) {
			return Ref{}, errors.New("the repository is components of lower-case letters and digits, joined by '/', each separated inside by one '.', one or two '_' or '-'s")
		}
	}
	if len(repo) > maxName {
		return Ref{}, fmt.Errorf("the repository name is at most %d characters", maxName)
	}
	// go-containerregistry's registry: docker.io, or none, is index.docker.io
	reg, err := name.NewRegistry(host)
	if err != nil {
		return Ref{}, errors.New("the registry is not a host[:port]")
	}
	return Ref{repo: reg.Repo(path), tag: tag, digest: digest, host: host, given: ref}, nil
}

// splitHost splits the registry off a repository name, as Docker does.
func splitHost(repo string) (host, path string) {
	first, rest, ok := strings.Cut(repo, "/")
	if !ok || (!strings.ContainsAny(first, ".:") && first != "localhost" && strings.ToLower(first) == first) {
		return "", repo
	}
	return first, rest
}

func validDigest(d string) bool {
	hex, ok := strings.CutPrefix(d, "sha256:")
	return ok && len(hex) == 64 && strings.Trim(hex, "0123456789abcdef") == ""
}

// ValidateDeployable accepts a reference that names one image version:
// [registry[:port]/]repository followed by :tag, @digest, or both.
func ValidateDeployable(ref string) error {
	r, err := Parse(ref)
	switch {
	case ref == "":
		return err
	case err != nil:
		return fmt.Errorf("not a valid OCI image reference (want [registry/]repository:tag or …@sha256:<64 hex>): %w", err)
	case r.tag == "" && r.digest == "":
		return errors.New("the reference has neither a tag nor a digest: add :tag and/or @sha256:<digest> so the deployment names one image version")
	}
	return nil
}

// PinnedAs is ref pinned by the digest imageRef names (Container.imageRef
// of ref); "" when it names none. The ref keeps the registry it names: an
// engine's imageRef names the address it first pulled that digest from,
// which may be another (tests/engine-facts.md, fact 50).
func PinnedAs(ref, imageRef string) string {
	_, digest, ok := strings.Cut(imageRef, "@")
	if !ok || digest == "" {
		return ""
	}
	return ref + "@" + digest
}
