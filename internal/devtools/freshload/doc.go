// Package freshload holds no code: its tests keep what a fresh engine
// compiles to load the module close to what it compiles for any Go module.
//
// A Dagger engine with no state builds a module's Go code from nothing but the
// Go SDK's image: the standard library and the SDK's own dependencies come
// compiled, the rest is downloaded and compiled on every hosted runner. A
// dependency that asks for a newer grpc, OpenTelemetry or golang.org/x module
// than the SDK's moves the whole build list up, and the SDK's part is then
// compiled again too: 26 s of an 85 s load on the engine (CONTRIBUTING.md,
// "Performance: what the module does for its figures").
package freshload
