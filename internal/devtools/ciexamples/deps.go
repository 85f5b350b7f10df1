//go:build tools

package ciexamples

// The module's tests' dependencies (these tests' and others'), named where
// the module's upload keeps them:
// dagger.json's include list leaves every _test.go out, and the engine's
// `go mod tidy` (dagger develop) reads what is uploaded, so it would drop
// them from go.mod. Tidy reads every build tag; builds never set this one.
import (
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/google/go-containerregistry/pkg/registry" // the publish tests' registry
	_ "github.com/google/go-containerregistry/pkg/v1/empty" // and what they make and read images with
	_ "github.com/google/go-containerregistry/pkg/v1/layout"
	_ "github.com/google/go-containerregistry/pkg/v1/mutate"
	_ "github.com/google/go-containerregistry/pkg/v1/random"
	_ "github.com/google/go-containerregistry/pkg/v1/static"
	_ "github.com/google/go-containerregistry/pkg/v1/tarball"
	_ "github.com/google/go-containerregistry/pkg/v1/validate"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "golang.org/x/mod/modfile"
	_ "gopkg.in/yaml.v3"
)
