package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/payload"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/supplychain"
)

// Release is the images pushed to a registry, each named by digest
type Release struct {
	// Each image's references, one a line, for a person
	Summary string
	// The whole release as JSON, for a script
	Json string
	// The frontend image, one reference per tag
	Frontend []*PushedImage
	// The backend image, one reference per tag
	Backend []*PushedImage
	// The code-as-data image, one reference per tag; empty when the build has no code as data
	CodeAsData []*PushedImage
	// Whether each pushed digest was signed with cosign (sign)
	Signed bool

	// +private
	Images []*dagger.Container // the pushed images (the first platform's), in images.Kinds order, nil when not pushed

	// +private
	Registry string
	// +private
	RegistryUsername string
	// +private
	RegistryPassword *dagger.Secret
	// +private
	RegistryService *dagger.Service
}

// PushedImage is one image pushed under one tag
type PushedImage struct {
	// registry/repository:tag@sha256:…, the reference a payload carries
	Ref string
	// registry/repository
	Repository string
	// The tag it was pushed under
	Tag string
	// The image's digest, sha256:…
	Digest string
	// How this run left the tag: pushed, tagged (pointed at the image, which the registry held already under another tag) or unchanged (it held the image already)
	Outcome string
}

// newRelease is the Release of doc; private gives its private fields.
func newRelease(doc results.Release, private Release) *Release {
	r := private
	r.Summary, r.Json, r.Signed = doc.Text(), results.JSON(doc), doc.Signed
	r.Frontend, r.Backend, r.CodeAsData = newPushedImages(doc.Frontend), newPushedImages(doc.Backend), newPushedImages(doc.CodeAsData)
	return &r
}

func newPushedImages(refs []results.PushedImage) []*PushedImage {
	out := make([]*PushedImage, len(refs))
	for i, p := range refs {
		out[i] = &PushedImage{Ref: p.Ref, Repository: p.Repository, Tag: p.Tag, Digest: p.Digest, Outcome: p.Outcome}
	}
	return out
}

// document is the release as results renders it: what its JSON holds.
func (r *Release) document() (results.Release, error) {
	var doc results.Release
	if err := json.Unmarshal([]byte(r.Json), &doc); err != nil {
		return results.Release{}, fmt.Errorf("the release's JSON: %w", err)
	}
	return doc, nil
}

// The deployment payload of this release: the reference default, or one you give, with the release's images
//
// Each image is the first tag's reference pinned by digest. A --from that
// names an image of its own is refused.
func (r *Release) Payload(
	ctx context.Context,
	// Payload JSON file to start from instead of the reference default; it names no image: the run's are the only ones sent
	// +optional
	from *dagger.File,
) (_ *Payload, err error) {
	defer userErr(&err)
	return composePayload(ctx, from, r.payloadOptions())
}

// The SPDX JSON SBOM of each pushed image (frontend.spdx.json, backend.spdx.json, codeasdata.spdx.json), by syft
func (r *Release) Sboms(
	// syft's published image, whose /syft is used (pin it by digest: name:tag@sha256:…)
	// +optional
	// +default="docker.io/anchore/syft:v1.51.0@sha256:678bfa565b60f747aac0f8e964fe5588a24445b8d0a480e91f6efd70020dfbb0"
	syftImage string,
	// Build syft from its Go module at the same version instead (slow on an empty engine cache)
	// +optional
	toolsFromSource bool,
) (_ *dagger.Directory, err error) {
	defer userErr(&err)
	syft, err := tool("--syft-image", syftImage, supplychain.SyftBinary, supplychain.Syft, toolsFromSource)
	if err != nil {
		return nil, err
	}
	out := dag.Directory()
	for i, kind := range images.Kinds {
		if r.Images[i] != nil {
			out = out.WithFile(supplychain.SBOMName(string(kind)), sbomOf(syft, r.Images[i]))
		}
	}
	return out, nil
}

// Sign each pushed digest with cosign, and attest its SBOM with --attest-sbom; verify with cosign verify --key cosign.pub
//
// +cache="session"
func (r *Release) Sign(
	ctx context.Context,
	// Cosign private key (cosign generate-key-pair)
	cosignKey *dagger.Secret,
	// Password of --cosign-key
	// +optional
	cosignPassword *dagger.Secret,
	// Attest each image's SPDX SBOM (syft) on its digest too
	// +optional
	attestSbom bool,
	// cosign's published image, whose /ko-app/cosign is used (pin it by digest: name:tag@sha256:…)
	// +optional
	// +default="gcr.io/projectsigstore/cosign:v2.6.5@sha256:ad281047f85c5e1fc6ffbc30c2b55be3b07b4032bef715a12122ce5829619aca"
	cosignImage string,
	// syft's published image, for --attest-sbom (default: docker.io/anchore/syft:v1.51.0@sha256:678bfa565b60f747aac0f8e964fe5588a24445b8d0a480e91f6efd70020dfbb0)
	// +optional
	syftImage string,
	// Build cosign (and syft) from their Go modules at the same versions instead (slow on an empty engine cache)
	// +optional
	toolsFromSource bool,
) (_ *Release, err error) {
	defer userErr(&err)
	cosign, err := tool("--cosign-image", cosignImage, supplychain.CosignBinary, supplychain.Cosign, toolsFromSource)
	if err != nil {
		return nil, err
	}
	var sboms *dagger.Directory
	switch {
	case attestSbom:
		if syftImage == "" {
			syftImage = supplychain.SyftImage
		}
		if sboms, err = r.Sboms(syftImage, toolsFromSource); err != nil {
			return nil, err
		}
	case syftImage != "":
		return nil, errors.New("--syft-image needs --attest-sbom: syft runs only to attest the SBOMs")
	}
	doc, err := r.document()
	if err != nil {
		return nil, err
	}
	g, gctx := errgroup.WithContext(ctx)
	for kind, refs := range map[images.Kind][]*PushedImage{images.Frontend: r.Frontend, images.Backend: r.Backend, images.CodeAsData: r.CodeAsData} {
		if len(refs) == 0 {
			continue
		}
		var sbom *dagger.File
		if sboms != nil {
			sbom = sboms.File(supplychain.SBOMName(string(kind)))
		}
		g.Go(func() error {
			return signImage(gctx, r.access(), cosign, refs[0].Repository+"@"+refs[0].Digest, sbom, cosignKey, cosignPassword)
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	doc.Signed = true
	return newRelease(doc, *r), nil
}

// access is how the release's registry is reached.
func (r *Release) access() registryAccess {
	return registryAccess{registry: r.Registry, username: r.RegistryUsername, password: r.RegistryPassword, service: r.RegistryService}
}

// payloadOptions are the release's images as a payload carries them.
func (r *Release) payloadOptions() payload.Options {
	refs := map[images.Kind]string{}
	for kind, pushed := range map[images.Kind][]*PushedImage{images.Frontend: r.Frontend, images.Backend: r.Backend, images.CodeAsData: r.CodeAsData} {
		if len(pushed) > 0 {
			refs[kind] = pushed[0].Ref
		}
	}
	return payloadOptionsOf(refs)
}
