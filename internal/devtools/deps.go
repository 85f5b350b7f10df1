//go:build tools

package devtools

// The module's tests' dependencies that its own code does not have, named
// here so that this module's go.mod holds them: the Go workspace (go.work)
// gives them to the tests of both modules. The module's go.mod holds only
// what its uploaded code imports (dagger.json leaves every _test.go, this
// folder and go.work out), so that an engine's first call downloads no more
// (tests/engine-facts.md, fact 39). Tidy reads every build tag; builds never
// set this one.
import (
	_ "github.com/google/go-containerregistry/pkg/registry" // the publish tests' registry
	_ "github.com/google/go-containerregistry/pkg/v1/empty" // and what they make and read images with
	_ "github.com/google/go-containerregistry/pkg/v1/layout"
	_ "github.com/google/go-containerregistry/pkg/v1/mutate"
	_ "github.com/google/go-containerregistry/pkg/v1/random"
	_ "github.com/google/go-containerregistry/pkg/v1/static"
	_ "github.com/google/go-containerregistry/pkg/v1/tarball"
	_ "github.com/google/go-containerregistry/pkg/v1/validate"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/stretchr/testify/assert"
	_ "github.com/stretchr/testify/require"
	_ "gopkg.in/yaml.v3"
)
