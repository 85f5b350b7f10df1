// A low-code platform's whole delivery as container-native steps
//
// Snapshot code as data into git, build the project in node:24 containers,
// package the frontend, backend and code-as-data images, and deploy them with
// one webhook call: the same pipeline from any CI and from a laptop. Each step
// returns an object whose fields are its result and whose functions are the
// next steps: build → publish → payload → deploy.
package main

import (
	"time"

	"dagger/lowcode-pipeline/internal/dagger"
)

// LowcodePipeline carries one project through the platform's delivery steps.
type LowcodePipeline struct {
	// Project source directory
	Source *dagger.Directory
	// +private
	NodeImage string
	// +private
	Npmrc *dagger.Secret
	// +private
	PlatformCli string
	// +private
	DrawPackage string
	// +private
	NpmCache string
	// +private
	FrontendBaseImage string
	// +private
	WebUser string
	// +private
	DocumentRoot string
	// +private
	BackendBaseImage string
	// +private
	Created string
	// +private
	ImageVersion string
	// +private
	VcsRevision string
	// +private
	VcsUrl string
}

func New(
	// Project to build: a package.json with build:draw and build:node scripts (required when the module is called with -m from elsewhere: pass --source .)
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
	// Base image of the frontend image: the vendor's frontend base image at tag stable, or pinned (name:stable@sha256:…); default: a public web server
	// +optional
	frontendBaseImage string,
	// The frontend base image's web-server user, which owns the files (with group root)
	// +optional
	// +default="nginx"
	webUser string,
	// The frontend base image's document root, where dist/web goes
	// +optional
	// +default="/usr/share/nginx/html"
	documentRoot string,
	// Runtime base of the backend image (default: the slim variant of --node-image, same C library as the build)
	// +optional
	backendBaseImage string,
	// Creation time of the images (org.opencontainers.image.created): the commit time, RFC 3339 or Unix seconds ($SOURCE_DATE_EPOCH); never the clock
	// +optional
	created string,
	// Version to label the images with (org.opencontainers.image.version), e.g. the release
	// +optional
	imageVersion string,
	// Source revision to label the images with (org.opencontainers.image.revision), e.g. $GITHUB_SHA
	// +optional
	vcsRevision string,
	// Source repository URL to label the images with (org.opencontainers.image.source); credentials are dropped
	// +optional
	vcsUrl string,
) *LowcodePipeline {
	return &LowcodePipeline{
		Source:            source,
		NodeImage:         nodeImage,
		Npmrc:             npmrc,
		PlatformCli:       platformCli,
		DrawPackage:       drawPackage,
		NpmCache:          npmCache,
		FrontendBaseImage: frontendBaseImage,
		WebUser:           webUser,
		DocumentRoot:      documentRoot,
		BackendBaseImage:  backendBaseImage,
		Created:           created,
		ImageVersion:      imageVersion,
		VcsRevision:       vcsRevision,
		VcsUrl:            vcsUrl,
	}
}

// rerun makes the container's next exec run anew on every call, as the
// side-effecting steps (never cached) must: a cache buster of the wall
// clock, set on the exec only, never in an image.
func rerun(ctr *dagger.Container) *dagger.Container {
	return ctr.WithEnvVariable("LOWCODE_PIPELINE_RUN", time.Now().UTC().Format(time.RFC3339Nano))
}
