package ocipublish

import (
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"dagger/lowcode-pipeline/internal/images"
)

// Options are how normalizeArtifact rewrites an image.
type Options struct {
	// Epoch is the time every time the build wrote is clamped to.
	Epoch time.Time
	// Platforms asked for; none: one image, any platform.
	Platforms []string
	// Cache keeps re-encoded blobs and bases as first exported.
	Cache Cache
	// Bases are the base image's, one per platform (firstExports,
	// ReadBases); none: no layer is known to be the base image's.
	Bases []Base
}

// Base is what a built image has of the image its Dockerfile's last stage
// starts from: the leading layers (by diff ID). Their content and times are
// kept, as BuildKit's own rewrite-timestamp keeps them (tests/engine-facts.md,
// fact 15): they are the base's, the same whenever the base image was built,
// not the build's. Each is pushed re-encoded, as every layer is (reencode).
type Base struct {
	Platform *v1.Platform `json:"platform,omitempty"`
	DiffIDs  []v1.Hash    `json:"diffIDs"`
	// FirstExport are the layers as the engine first exported them, as the
	// cache folder keeps them (firstexport.go), which may take the place of
	// remade copies (rebase); none for a base read from the engine's
	// export now (ReadBases).
	FirstExport []v1.Descriptor `json:"layers"`
	// tookPlace is how many of them took the place of an image's layers.
	tookPlace int
}

// maxBaseMetadata is the largest file ReadBases reads from a base tarball:
// its index, manifests and configs, never its layers.
const maxBaseMetadata = 4 << 20

// ReadBases reads, from Container.asTarball of the base image, each
// platform's layers and history, without reading the layers: their
// metadata is unpacked into work.
func ReadBases(tarball, work string) ([]Base, error) {
	if err := unpack(tarball, work, maxBaseMetadata); err != nil {
		return nil, err
	}
	a, err := Load(work)
	if err != nil {
		return nil, err
	}
	imgs, err := imagesOf(a)
	if err != nil {
		return nil, err
	}
	bases := make([]Base, len(imgs))
	for i, img := range imgs {
		bases[i] = Base{Platform: img.config.Platform(), DiffIDs: img.config.RootFS.DiffIDs}
	}
	return bases, nil
}

// baseFor is the base of an image of platform p: the base of the same
// platform (a variant written out or not), or the one base there is when
// either platform is not known.
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

// samePlatform reports whether a and b are one platform, as
// images.CheckPlatforms compares them (linux/arm64/v8 is linux/arm64).
func samePlatform(a, b *v1.Platform) bool {
	return a != nil && b != nil && images.CanonicalPlatform(platformOf(a)) == images.CanonicalPlatform(platformOf(b))
}

// keptOf is how many leading layers of an image are its base's: those equal
// to the base's, in order, until the first that is not.
func keptOf(cfg *v1.ConfigFile, base *Base) (layers int) {
	if base == nil {
		return 0
	}
	for layers < len(cfg.RootFS.DiffIDs) && layers < len(base.DiffIDs) && cfg.RootFS.DiffIDs[layers] == base.DiffIDs[layers] {
		layers++
	}
	return layers
}
