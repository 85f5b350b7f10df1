package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rootFiles are the root package's own files, parsed: not the tests, not
// the generated bindings.
func rootFiles(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	files := map[string]*ast.File{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, ".gen.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files[name] = f
	}
	require.Contains(t, files, "main.go")
	return fset, files
}

// The checks of the flags: each is made in one function of the root
// package, so a flag's rule lives in one place and every step that takes
// the flag goes through it. A checker that takes the flag's name is counted
// per flag.
var flagCheckers = map[string]bool{
	"nodebuild.CodeAsDataStep": true, "nodebuild.ParseImage": true, "nodebuild.CheckCLI": true,
	"drawversion.CheckPackageName": true,
	"images.ParseBuildArgs":        true, "images.ParseCreated": true, "images.ParseLabels": true, ".Targets": true,
	"webhook.CheckConnectAttempts": true, "webhook.ParseAddress": true, "webhook.Prepare": true, "webhook.CAPool": true, "webhook.CheckPort": true,
	"durationflag.Optional": true, "payload.ParseMode": true, "rules.ParseFlags": true, "imageref.ValidateDeployable": true,
	"snapshotconfig.ParseOrchestrator": true, "snapshotconfig.ConfigPath": true, ".Check": true,
}

func TestEachFlagIsCheckedInOneFunction(t *testing.T) {
	fset, files := rootFiles(t)
	where := map[string]map[string]bool{} // checker (and flag) → functions calling it
	for _, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				name := "." + sel.Sel.Name
				if pkg, ok := sel.X.(*ast.Ident); ok && flagCheckers[pkg.Name+name] {
					name = pkg.Name + name
				}
				if !flagCheckers[name] {
					return true
				}
				if len(call.Args) > 0 {
					if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if flag, _ := strconv.Unquote(lit.Value); strings.HasPrefix(flag, "--") {
							name += " " + flag
						}
					}
				}
				if where[name] == nil {
					where[name] = map[string]bool{}
				}
				where[name][funcName(fn)+" ("+fset.Position(fn.Pos()).Filename+")"] = true
				return true
			})
		}
	}
	found := map[string]bool{}
	for name, fns := range where {
		found[strings.Fields(name)[0]] = true
		var list []string
		for fn := range fns {
			list = append(list, fn)
		}
		sort.Strings(list)
		assert.Len(t, list, 1, "%s is called in %d functions: %s", name, len(list), strings.Join(list, ", "))
	}
	for checker := range flagCheckers {
		assert.True(t, found[checker], "%s is checked nowhere: the list above is stale", checker)
	}
}

// Each Dagger object's functions are in one file, and no file holds two
// objects' functions.
func TestEachObjectsFunctionsAreInOneFile(t *testing.T) {
	_, files := rootFiles(t)
	objects := map[string]bool{}
	for _, f := range files {
		for _, decl := range f.Decls {
			if gen, ok := decl.(*ast.GenDecl); ok && gen.Tok == token.TYPE {
				for _, spec := range gen.Specs {
					ts := spec.(*ast.TypeSpec)
					if _, isStruct := ts.Type.(*ast.StructType); isStruct && ts.Name.IsExported() {
						objects[ts.Name.Name] = true
					}
				}
			}
		}
	}
	require.Contains(t, objects, "Release")
	fileOf := map[string]string{}
	for name, f := range files {
		inFile := map[string]bool{}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil {
				continue
			}
			recv := receiver(fn)
			if !objects[recv] {
				continue
			}
			inFile[recv] = true
			if other, ok := fileOf[recv]; ok && other != name {
				t.Errorf("%s's functions are in %s and %s", recv, other, name)
			}
			fileOf[recv] = name
		}
		assert.LessOrEqual(t, len(inFile), 1, "%s holds the functions of %v", name, inFile)
	}
}

// funcName is fn's name, with its receiver's type.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil {
		return fn.Name.Name
	}
	return receiver(fn) + "." + fn.Name.Name
}

// receiver is the name of fn's receiver's type.
func receiver(fn *ast.FuncDecl) string {
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
