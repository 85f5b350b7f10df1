package ocipublish

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"dagger/lowcode-pipeline/internal/images"
)

// normalizeArtifact normalizes each image of a (imgs) into a's layout,
// after checking that they are the platforms asked for. Attestations are
// left out (imagesOf): they name the digests before normalization.
func normalizeArtifact(kind string, a Artifact, imgs []image, o Options) (Artifact, error) {
	if err := checkPlatforms(kind, imgs, o.Platforms); err != nil {
		return Artifact{}, err
	}
	if a.root.MediaType.IsImage() {
		d, err := normalizeImage(a.dir, imgs[0], o.Epoch, o.Cache, baseFor(o.Bases, imgs[0].platform))
		return Artifact{dir: a.dir, root: d}, err
	}
	out := v1.IndexManifest{SchemaVersion: 2, MediaType: a.root.MediaType}
	for _, img := range imgs {
		d, err := normalizeImage(a.dir, img, o.Epoch, o.Cache, baseFor(o.Bases, img.platform))
		if err != nil {
			return Artifact{}, fmt.Errorf("%s: %w", platformOf(img.platform), err)
		}
		d.Platform = img.desc.Platform
		out.Manifests = append(out.Manifests, d)
	}
	d, err := writeJSON(a.dir, a.root.MediaType, out)
	return Artifact{dir: a.dir, root: d}, err
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
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}
