// Package realtoolkit holds no code: its tests run the platform's real
// toolkit, @olympeio/toolkit from the npm registry, on every command line the
// module builds for it, and hold the example's stand-in to the real one's
// options.
package realtoolkit
