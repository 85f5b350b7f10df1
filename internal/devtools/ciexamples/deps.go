//go:build tools

package ciexamples

// The tests' dependencies, named where the module's upload keeps them:
// dagger.json's include list leaves every _test.go out, and the engine's
// `go mod tidy` (dagger develop) reads what is uploaded, so it would drop
// them from go.mod. Tidy reads every build tag; builds never set this one.
import (
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/rhysd/actionlint"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "gopkg.in/yaml.v3"
)
