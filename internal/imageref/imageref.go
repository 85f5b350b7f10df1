// Package imageref checks container image references with the OCI
// distribution project's own reference grammar.
package imageref

import (
	"errors"
	"fmt"

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
