// Package freshload holds no code: its tests keep what a fresh engine
// compiles to load the module close to what it compiles for any Go module.
//
// A Dagger engine with no state builds a module's Go code from the Go SDK's
// image: the standard library and the dependencies of the SDK library's root
// package come compiled, at sdk/go's versions; the rest is downloaded and
// compiled on every hosted runner, for any module the generated code's
// telemetry (github.com/dagger/otel-go: grpc, protobuf, the OTLP exporters)
// among it (engine-facts 32). The module keeps every module it shares with a
// `dagger init --sdk=go` module at the version `dagger init` writes, so a
// dependency asking for a newer grpc, OpenTelemetry or golang.org/x module
// does not move them; every module it compiles beyond them is listed with
// what it is for (beyondAnyModule), and BenchmarkCompileBeyondAnyGoModule
// times that compile (CONTRIBUTING.md, "Performance: what the module does for
// its figures").
package freshload
