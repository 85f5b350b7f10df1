package main

import (
	"context"
	"fmt"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/imageref"
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
