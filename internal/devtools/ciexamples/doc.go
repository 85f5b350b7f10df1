// Package ciexamples holds no code: its tests lint the CI configurations in
// examples/ci, offline, for real (YAML parsing, actionlint, the module's own
// flags) and check the rules every example keeps.
package ciexamples
