//go:build race

package rules

// raceDetector says the tests run under -race, which slows matching many
// times over: a test of wall-clock time says nothing then.
const raceDetector = true
