package ciexamples

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/devtools/schemagen"
	"dagger/lowcode-pipeline/internal/supplychain"
)

var flagInText = regexp.MustCompile(`--[a-z][a-z0-9-]*`)

// otherCommands are spans of an error that quote another tool's command line.
var otherCommands = regexp.MustCompile("`[^`]*`|\\((?:git|npm|npx|cosign|syft) [^)]*\\)")

// The internal packages name the module's flags in their errors (the flag
// that is wrong, the flag that fixes it). Every flag an error names is one
// the module has: renaming a flag in the glue without its errors fails here,
// naming the file.
func TestEveryFlagAnErrorNamesIsTheModules(t *testing.T) {
	mod, err := schemagen.Load("lowcode-pipeline", "../../..")
	require.NoError(t, err)
	flags := mod.Flags()
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			switch d.Name() {
			case "dagger", "devtools", "testsupport", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isErrorCall(call) {
				return true
			}
			for _, arg := range call.Args {
				lit, ok := arg.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				text, _ := strconv.Unquote(lit.Value)
				text = otherCommands.ReplaceAllString(text, "")
				for _, flag := range flagInText.FindAllString(text, -1) {
					checked++
					assert.True(t, flags[flag], "%s: an error names %s, which is no flag of the module", fset.Position(lit.Pos()), flag)
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, checked, 20, "the errors of the internal packages are read")
}

// isErrorCall: fmt.Errorf, errors.New.
func isErrorCall(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && ((pkg.Name == "fmt" && sel.Sel.Name == "Errorf") || (pkg.Name == "errors" && sel.Sel.Name == "New"))
}

// The engine check of sign verifies with the cosign the module signs with:
// its default image, or the same version built from source where the
// engine cannot pull that image.
func TestTheSigningCheckVerifiesWithTheModulesCosign(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("../../..", "tests", "images.go"), nil, 0)
	require.NoError(t, err)
	consts := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if spec, ok := n.(*ast.ValueSpec); ok && len(spec.Values) == len(spec.Names) {
			for i, name := range spec.Names {
				if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					consts[name.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
		return true
	})
	assert.Equal(t, supplychain.CosignImage, consts["cosignImage"], "the check's cosign image")
	assert.Equal(t, supplychain.Cosign, consts["cosignPackage"], "the check's cosign built from source")
}
