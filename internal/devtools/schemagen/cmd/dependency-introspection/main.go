// Command dependency-introspection writes the introspection a module that
// depends on this one is generated from (see schemagen.DependencyIntrospection):
// scripts/bindings generates examples/go from it to compile it in CI.
//
//	go run ./internal/devtools/schemagen/cmd/dependency-introspection -o deps.json
package main

import (
	"flag"
	"fmt"
	"os"

	"dagger/lowcode-pipeline/internal/devtools/schemagen"
)

func main() {
	dir := flag.String("module", ".", "directory of the module depended on")
	name := flag.String("name", "lowcode-pipeline", "its name in dagger.json")
	core := flag.String("core", "internal/devtools/schemagen/testdata/introspection-v0.21.8.json", "the core API's introspection")
	out := flag.String("o", "", "file to write (required)")
	flag.Parse()
	if err := run(*dir, *name, *core, *out); err != nil {
		fmt.Fprintln(os.Stderr, "dependency-introspection:", err)
		os.Exit(1)
	}
}

func run(dir, name, corePath, out string) error {
	if out == "" {
		return fmt.Errorf("-o is required")
	}
	mod, err := schemagen.Load(name, dir)
	if err != nil {
		return err
	}
	core, err := os.ReadFile(corePath)
	if err != nil {
		return err
	}
	data, err := mod.DependencyIntrospection(core)
	if err != nil {
		return err
	}
	return os.WriteFile(out, data, 0o644)
}
