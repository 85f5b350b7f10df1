package main

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/imageref"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/steplimit"
	"dagger/lowcode-pipeline/internal/supplychain"
)

// tool is a supply-chain tool's binary: copied out of its published image
// (a download), or built from its Go module.
func tool(flag, image, binary, pkg string, fromSource bool) (*dagger.File, error) {
	if fromSource {
		return goTool(pkg), nil
	}
	if err := imageref.ValidateDeployable(image); err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, fielderr.Quote(image), err)
	}
	return dag.Container().From(image).File(binary), nil
}

// signImage signs a pushed digest in the registry with cosign, and attests
// its SBOM when given.
func signImage(ctx context.Context, reg registryAccess, cosign *dagger.File, ref string, sbomFile *dagger.File, key, password *dagger.Secret) error {
	s := supplychain.Signing{Ref: ref, Registry: reg.registry}
	ctr := limited(dag.Container().From(runtimeImage)).
		WithExec(steplimit.Within(steplimit.Tool, []string{"apk", "add", "--no-cache", "socat", "ca-certificates"})).
		WithFile("/usr/local/bin/cosign", cosign).
		WithMountedSecret(supplychain.KeyPath, key)
	if password != nil {
		ctr = ctr.WithSecretVariable(supplychain.PasswordEnv, password)
	} else {
		ctr = ctr.WithEnvVariable(supplychain.PasswordEnv, "")
	}
	if reg.password != nil {
		s.Username = reg.username
		ctr = ctr.WithSecretVariable(supplychain.RegistryPWEnv, reg.password)
	}
	if sbomFile != nil {
		s.SBOM = "/sbom.spdx.json"
		ctr = ctr.WithMountedFile(s.SBOM, sbomFile)
	}
	if reg.service != nil {
		s.ServiceHost = "registry"
		ctr = withServiceBinding(ctr, s.ServiceHost, reg.service)
	}
	script, err := s.Script()
	if err != nil {
		return err
	}
	// signing is never cached: sign anew; the script is a file, so the
	// engine's progress shows its name, not its text
	const signScript = "/run/lowcode-pipeline/sign.sh"
	signed := rerun(ctr.WithNewFile(signScript, script)).WithExec(steplimit.Within(steplimit.Tool, []string{"sh", signScript}))
	// each exec keeps its own limit once it runs: socat's install, a tool's
	// build from source, the SBOM, the signature; the pulls before them,
	// this wait's
	err = steplimit.Wait(ctx, steplimit.Sum(steplimit.Pull, steplimit.Tool, steplimit.Tool, steplimit.Tool, steplimit.Tool),
		"the signature (the pulls of its tools' images, their steps, then cosign)", func(ctx context.Context) error {
			_, err := signed.Sync(ctx)
			return err
		})
	if err != nil {
		return fmt.Errorf("sign %s: %w", ref, explain(err))
	}
	return nil
}

// sbomOf is the SPDX JSON SBOM of one image, by syft; lazy.
func sbomOf(syft *dagger.File, image *dagger.Container) *dagger.File {
	return limited(dag.Container().From(runtimeImage)).
		WithFile("/usr/local/bin/syft", syft).
		WithMountedFile("/image.tar", image.AsTarball()).
		WithExec(steplimit.Within(steplimit.Tool, supplychain.SBOMCommand("/image.tar", "/sbom.spdx.json"))).
		File("/sbom.spdx.json")
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
