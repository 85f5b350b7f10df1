package ocipublish

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"dagger/lowcode-pipeline/internal/images"
)

// Base is the image the Dockerfile's last stage starts from, whose layers
// (by diff ID) keep their times in an image on it, as BuildKit's
// rewrite-timestamp keeps them (tests/engine-facts.md, fact 15).
type Base struct {
	Platform *v1.Platform `json:"platform,omitempty"`
	DiffIDs  []v1.Hash    `json:"diffIDs"`
	// FirstExport are its layers as the engine first exported them
	// (firstexport.go); none for a base read now (ReadBases).
	FirstExport []v1.Descriptor `json:"layers"`
	// tookPlace is how many of them took the place of an image's layers.
	tookPlace int
}

// maxBaseMetadata is the largest file ReadBases reads: never a layer.
const maxBaseMetadata = 4 << 20

// ReadBases reads each platform's diff IDs from Container.asTarball of the
// base image, unpacking its metadata into work.
func ReadBases(tarball, work string) ([]Base, error) {
	if err := unpack(tarball, work, maxBaseMetadata); err != nil {
		return nil, err
	}
	a, err := Load(work)
	if err != nil {
		return nil, err
	}
	bases := make([]Base, len(a.images))
	for i, img := range a.images {
		bases[i] = Base{Platform: img.config.Platform(), DiffIDs: img.config.RootFS.DiffIDs}
	}
	return bases, nil
}

// baseFor is the base of an image of platform p: the one of that platform,
// or the one base there is when either platform is not known.
func baseFor(bases []Base, p *v1.Platform) *Base {
	for i := range bases {
		if samePlatform(bases[i].Platform, p) {
			return &bases[i]
		}
	}
	if len(bases) == 1 && (bases[0].Platform == nil || p == nil) {
		return &bases[0]
	}
	return nil
}

// samePlatform compares as images.CheckPlatforms: linux/arm64/v8 is linux/arm64.
func samePlatform(a, b *v1.Platform) bool {
	return a != nil && b != nil && images.CanonicalPlatform(platformOf(a)) == images.CanonicalPlatform(platformOf(b))
}

// keptOf is how many leading layers of an image are its base's, by diff ID.
func keptOf(cfg *v1.ConfigFile, base *Base) (layers int) {
	if base == nil {
		return 0
	}
	for layers < len(cfg.RootFS.DiffIDs) && layers < len(base.DiffIDs) && cfg.RootFS.DiffIDs[layers] == base.DiffIDs[layers] {
		layers++
	}
	return layers
}
