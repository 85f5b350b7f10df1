// A low-code platform's whole delivery as container-native steps.
package main

import "dagger/lowcode-pipeline/internal/dagger"

// LowcodePipeline builds, packages and deploys a low-code platform project.
type LowcodePipeline struct {
	// Project source directory
	Source *dagger.Directory
}

func New(
	// Project to build: a package.json with build:draw and build:node scripts
	// +defaultPath="/"
	// +ignore=["node_modules", "dist", ".git"]
	source *dagger.Directory,
) *LowcodePipeline {
	return &LowcodePipeline{Source: source}
}
