// Package ciexamples holds no code: its tests lint the CI configurations in
// examples/ci, offline, for real (YAML parsing, the CI vendors' JSON Schemas,
// the module's own flags) and check the rules every example keeps; the GitHub
// workflow is linted by actionlint's command in scripts/test.
package ciexamples
