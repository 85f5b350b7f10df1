// A low-code platform's whole delivery as container-native steps
//
// Snapshot code as data into git, build the project in node:24 containers,
// package the frontend, backend and code-as-data images, and deploy them with
// one webhook call: the same pipeline from any CI and from a laptop.
package main

import "dagger/lowcode-pipeline/internal/dagger"

// LowcodePipeline carries one project through the platform's delivery steps.
type LowcodePipeline struct {
	// Project source directory
	Source *dagger.Directory
	// Node.js image the builds run in
	NodeImage string
	// .npmrc for private registries, mounted as a secret
	Npmrc *dagger.Secret
	// Package that npx runs for buildCodeAsData and snapshot
	PlatformCli string
	// Design-tool package whose installed version labels the images
	DrawPackage string
	// Name of the npm cache volume
	NpmCache string
	// Version the images are labelled with (org.opencontainers.image.version)
	ImageVersion string
	// Source revision the images are labelled with (org.opencontainers.image.revision)
	Revision string
	// Source repository URL the images are labelled with (org.opencontainers.image.source)
	SourceUrl string
}

func New(
	// Project to build: a package.json with build:draw and build:node scripts
	// +defaultPath="/"
	// +ignore=["node_modules", "dist", ".git"]
	source *dagger.Directory,
	// Node.js image the builds run in (Node.js 20 or above)
	// +optional
	// +default="node:24"
	nodeImage string,
	// .npmrc for private registries (the platform's packages usually come from one); mounted as a secret, never in a layer
	// +optional
	npmrc *dagger.Secret,
	// Package (with optional @version) that npx runs for buildCodeAsData and snapshot: the platform's CLI
	// +optional
	platformCli string,
	// Design-tool package whose installed version labels the images (draw_version)
	// +optional
	drawPackage string,
	// Name of the npm cache volume, to share or isolate it between projects
	// +optional
	// +default="lowcode-pipeline-npm"
	npmCache string,
	// Version to label the images with (org.opencontainers.image.version), e.g. the release
	// +optional
	imageVersion string,
	// Source revision to label the images with (org.opencontainers.image.revision), e.g. $GITHUB_SHA
	// +optional
	revision string,
	// Source repository URL to label the images with (org.opencontainers.image.source); credentials are dropped
	// +optional
	sourceUrl string,
) *LowcodePipeline {
	return &LowcodePipeline{
		Source:       source,
		NodeImage:    nodeImage,
		Npmrc:        npmrc,
		PlatformCli:  platformCli,
		DrawPackage:  drawPackage,
		NpmCache:     npmCache,
		ImageVersion: imageVersion,
		Revision:     revision,
		SourceUrl:    sourceUrl,
	}
}
