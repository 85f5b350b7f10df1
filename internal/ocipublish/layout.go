package ocipublish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// MaxMetadata bounds a manifest, an index or a config read from a layout:
// they are JSON of a few kilobytes; a larger one is no image of ours.
const MaxMetadata = 4 << 20

// Artifact is what is pushed: the image, or the index of one image per
// platform, that an OCI image layout on disk names (Load).
type Artifact struct {
	dir  string
	root v1.Descriptor
	// fetch, when set, brings a layer the layout lacks into its place in
	// dir (blobPath), for a push to a registry that lacks it too.
	fetch func(context.Context, v1.Hash, string) error
}

// Digest is the artifact's: the digest its tags point at.
func (a Artifact) Digest() (v1.Hash, error) { return a.root.Digest, nil }

// Load reads the image of an OCI image layout (Container.asTarball,
// unpacked): its index's first manifest, an image or a platform index.
func Load(dir string) (Artifact, error) {
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return Artifact{}, fmt.Errorf("read the OCI layout: %w", err)
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(data))
	if err != nil {
		return Artifact{}, fmt.Errorf("read the OCI layout's index: %w", err)
	}
	root, err := rootOf(im)
	if err != nil {
		return Artifact{}, err
	}
	if !root.MediaType.IsIndex() && !root.MediaType.IsImage() {
		return Artifact{}, fmt.Errorf("the OCI layout's index names a %s, not an image", root.MediaType)
	}
	return Artifact{dir: dir, root: root}, nil
}

// blobPath is where a layout keeps the blob of digest h.
func blobPath(dir string, h v1.Hash) string {
	return filepath.Join(dir, "blobs", h.Algorithm, h.Hex)
}

// readBlob is the blob d names, checked against d's digest and size.
func readBlob(dir string, d v1.Descriptor) ([]byte, error) {
	if d.Size > MaxMetadata {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d a manifest or config may have", d.Digest, d.Size, MaxMetadata)
	}
	data, err := os.ReadFile(blobPath(dir, d.Digest))
	if err != nil {
		return nil, fmt.Errorf("read the OCI layout: %w", err)
	}
	if got := sha256Of(data); got != d.Digest || int64(len(data)) != d.Size {
		return nil, fmt.Errorf("the OCI layout's %s holds %s (%d bytes), not what its descriptor says (%d bytes)", d.Digest, got, len(data), d.Size)
	}
	return data, nil
}

// writeBlob stores data in the layout and describes it with media type mt.
func writeBlob(dir string, mt types.MediaType, data []byte) (v1.Descriptor, error) {
	d := v1.Descriptor{MediaType: mt, Size: int64(len(data)), Digest: sha256Of(data)}
	path := blobPath(dir, d.Digest)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return v1.Descriptor{}, err
	}
	return d, os.WriteFile(path, data, 0o644)
}

// writeJSON stores v as a JSON blob of media type mt.
func writeJSON(dir string, mt types.MediaType, v any) (v1.Descriptor, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return v1.Descriptor{}, err
	}
	return writeBlob(dir, mt, data)
}

// blobWriter writes a blob into a layout as it is made, hashing it, and
// files it under its digest on commit.
type blobWriter struct {
	dir  string
	f    *os.File
	hash hashCounter
}

func newBlobWriter(dir string) (*blobWriter, error) {
	tmp := filepath.Join(dir, "blobs", "sha256")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(tmp, ".new-*")
	if err != nil {
		return nil, err
	}
	return &blobWriter{dir: dir, f: f, hash: newHashCounter()}, nil
}

func (w *blobWriter) Write(p []byte) (int, error) {
	w.hash.Write(p)
	return w.f.Write(p)
}

// commit closes the blob and files it; abort removes it.
func (w *blobWriter) commit(mt types.MediaType) (v1.Descriptor, error) {
	if err := w.f.Close(); err != nil {
		os.Remove(w.f.Name())
		return v1.Descriptor{}, err
	}
	d := v1.Descriptor{MediaType: mt, Size: w.hash.n, Digest: w.hash.sum()}
	if err := os.Rename(w.f.Name(), blobPath(w.dir, d.Digest)); err != nil {
		os.Remove(w.f.Name())
		return v1.Descriptor{}, err
	}
	return d, nil
}

func (w *blobWriter) abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// hashCounter is a sha256 with the count of bytes it read.
type hashCounter struct {
	h hash.Hash
	n int64
}

func newHashCounter() hashCounter { return hashCounter{h: sha256.New()} }

func (c *hashCounter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

func (c *hashCounter) sum() v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(c.h.Sum(nil))}
}

func sha256Of(data []byte) v1.Hash {
	sum := sha256.Sum256(data)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
}

// writeIndex makes root the one artifact the layout in dir names.
func writeIndex(dir string, root v1.Descriptor) error {
	index := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{root}}
	data, err := json.Marshal(index)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "index.json"), data, 0o644)
}

// image is one image manifest of a layout, with its config.
type image struct {
	desc     v1.Descriptor
	manifest *v1.Manifest
	config   *v1.ConfigFile
}

func readImage(dir string, d v1.Descriptor) (image, error) {
	data, err := readBlob(dir, d)
	if err != nil {
		return image{}, err
	}
	m, cfg, err := parseImage(data, func(c v1.Descriptor) ([]byte, error) { return readBlob(dir, c) })
	if err != nil {
		return image{}, err
	}
	return image{desc: d, manifest: m, config: cfg}, nil
}

// parseImage parses an image manifest and the config configOf gives for
// it, which must list as many layers.
func parseImage(manifest []byte, configOf func(v1.Descriptor) ([]byte, error)) (*v1.Manifest, *v1.ConfigFile, error) {
	m, err := v1.ParseManifest(bytes.NewReader(manifest))
	if err != nil {
		return nil, nil, fmt.Errorf("read the image manifest: %w", err)
	}
	cfgData, err := configOf(m.Config)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := v1.ParseConfigFile(bytes.NewReader(cfgData))
	if err != nil {
		return nil, nil, fmt.Errorf("read the image config: %w", err)
	}
	if len(cfg.RootFS.DiffIDs) != len(m.Layers) {
		return nil, nil, fmt.Errorf("the image config lists %d layers (rootfs.diff_ids), its manifest %d", len(cfg.RootFS.DiffIDs), len(m.Layers))
	}
	return m, cfg, nil
}

func readIndex(dir string, d v1.Descriptor) (*v1.IndexManifest, error) {
	data, err := readBlob(dir, d)
	if err != nil {
		return nil, err
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("read the image index: %w", err)
	}
	return im, nil
}

// platformAt is the platform of imgs[i] (imagesOf): the index's word for
// it, else its config's.
func platformAt(imgs []image, descs []v1.Descriptor, i int) *v1.Platform {
	if descs != nil {
		return descs[i].Platform
	}
	return imgs[i].config.Platform()
}

// imagesOf are the images of an artifact, with their descriptors in its
// index (none for a lone image), attestation manifests left out.
func imagesOf(a Artifact) ([]image, []v1.Descriptor, error) {
	if a.root.MediaType.IsImage() {
		img, err := readImage(a.dir, a.root)
		return []image{img}, nil, err
	}
	im, err := readIndex(a.dir, a.root)
	if err != nil {
		return nil, nil, err
	}
	var imgs []image
	var descs []v1.Descriptor
	for _, d := range im.Manifests {
		if !d.MediaType.IsImage() || d.Annotations["vnd.docker.reference.type"] == "attestation-manifest" {
			continue
		}
		img, err := readImage(a.dir, d)
		if err != nil {
			return nil, nil, err
		}
		imgs, descs = append(imgs, img), append(descs, d)
	}
	if len(imgs) == 0 {
		return nil, nil, errors.New("the image index holds no image")
	}
	return imgs, descs, nil
}

// contentOf is what an artifact holds beside its root: the blobs (configs,
// layers) of each of its images, each once, and, for an index, the images'
// manifests.
func contentOf(a Artifact) (blobs, manifests []v1.Descriptor, err error) {
	imgs, descs, err := imagesOf(a)
	if err != nil {
		return nil, nil, err
	}
	seen := map[v1.Hash]bool{}
	for _, img := range imgs {
		for _, d := range append([]v1.Descriptor{img.manifest.Config}, img.manifest.Layers...) {
			if !seen[d.Digest] {
				seen[d.Digest] = true
				blobs = append(blobs, d)
			}
		}
	}
	return blobs, descs, nil
}
