// Package imageref checks container image references with the OCI
// distribution project's own reference grammar.
package imageref

import (
	"errors"
	"fmt"
	"strings"

	"github.com/distribution/reference"
)

// ValidateDeployable accepts a reference that names one image version:
// [registry[:port]/]repository followed by :tag, @digest, or both.
func ValidateDeployable(ref string) error {
	if ref == "" {
		return errors.New("empty image reference")
	}
	parsed, err := reference.Parse(ref)
	if err != nil {
		return fmt.Errorf("not a valid OCI image reference (want [registry/]repository:tag or …@sha256:<64 hex>): %w", err)
	}
	_, tagged := parsed.(reference.Tagged)
	_, digested := parsed.(reference.Digested)
	if !tagged && !digested {
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
