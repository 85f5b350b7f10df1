package ocipublish

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"dagger/lowcode-pipeline/internal/images"
)

// normalizeArtifact writes each image of a normalized into a's layout, on
// its platform's base of bases (none: no layer is known to be the base's),
// once they are checked to be the platforms p asks for, and returns the
// new image's or index's descriptor. Attestations are left out (imagesOf):
// they name the digests before normalization.
func normalizeArtifact(p Prepare, a Artifact, bases []Base) (v1.Descriptor, error) {
	if err := checkPlatforms(p.Kind, a.images, p.Platforms); err != nil {
		return v1.Descriptor{}, err
	}
	v := Cache{Dir: p.Cache}
	if a.root.MediaType.IsImage() {
		return normalizeImage(a.dir, a.images[0], p.Created, v, baseFor(bases, a.images[0].platform))
	}
	out := v1.IndexManifest{SchemaVersion: 2, MediaType: a.root.MediaType}
	for _, img := range a.images {
		d, err := normalizeImage(a.dir, img, p.Created, v, baseFor(bases, img.platform))
		if err != nil {
			return v1.Descriptor{}, fmt.Errorf("%s: %w", platformOf(img.platform), err)
		}
		d.Platform = img.desc.Platform
		out.Manifests = append(out.Manifests, d)
	}
	return writeJSON(a.dir, a.root.MediaType, out)
}

// checkPlatforms fails when the images are not exactly the platforms asked.
func checkPlatforms(kind string, imgs []image, asked []string) error {
	if len(asked) == 0 {
		if len(imgs) != 1 {
			return fmt.Errorf("the %s image has %d platforms, and none was asked for; nothing was pushed", kind, len(imgs))
		}
		return nil
	}
	var have []string
	for _, img := range imgs {
		have = append(have, platformOf(img.config.Platform()))
	}
	return images.CheckPlatforms(kind, asked, have)
}

func platformOf(p *v1.Platform) string {
	if p == nil {
		return "unknown"
	}
	return p.String()
}
