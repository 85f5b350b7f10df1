package ocipublish

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Artifact is what an OCI layout names first, an image or a platform index,
// and its images.
type Artifact struct {
	dir    string
	index  v1.ImageIndex // the layout's
	root   v1.Descriptor
	images []image
}

// Load reads an unpacked OCI layout (Container.asTarball).
func Load(dir string) (Artifact, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return Artifact{}, fmt.Errorf("read the OCI layout: %w", err)
	}
	im, err := idx.IndexManifest()
	switch {
	case err != nil:
		return Artifact{}, fmt.Errorf("read the OCI layout's index: %w", err)
	case len(im.Manifests) == 0:
		return Artifact{}, errors.New("the OCI layout holds no image")
	case !im.Manifests[0].MediaType.IsIndex() && !im.Manifests[0].MediaType.IsImage():
		return Artifact{}, fmt.Errorf("the OCI layout's index names a %s, not an image", im.Manifests[0].MediaType)
	}
	a := Artifact{dir: dir, index: idx, root: im.Manifests[0]}
	if a.images, err = imagesOf(idx, a.root); err != nil {
		return Artifact{}, err
	}
	return a, nil
}

// writeIndex makes root the one artifact the layout in dir names.
func writeIndex(dir string, root v1.Descriptor) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendDescriptor(root)
}

// blobPath is where a layout keeps the blob of digest h.
func blobPath(dir string, h v1.Hash) string {
	return filepath.Join(dir, "blobs", h.Algorithm, h.Hex)
}

// writeJSON stores v as a JSON blob of media type mt.
func writeJSON(dir string, mt types.MediaType, v any) (v1.Descriptor, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return v1.Descriptor{}, err
	}
	h, size, err := v1.SHA256(bytes.NewReader(data))
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Size: size, Digest: h}, layout.Path(dir).WriteBlob(h, io.NopCloser(bytes.NewReader(data)))
}

// blobWriter hashes a blob as it is written, and files it on commit.
type blobWriter struct {
	dir  string
	f    *os.File
	hash hash.Hash
	size int64
}

func newBlobWriter(dir string) (*blobWriter, error) {
	f, err := newTemp(filepath.Join(dir, "blobs", "sha256"))
	if err != nil {
		return nil, err
	}
	return &blobWriter{dir: dir, f: f, hash: sha256.New()}, nil
}

func (w *blobWriter) Write(p []byte) (int, error) {
	w.hash.Write(p)
	w.size += int64(len(p))
	return w.f.Write(p)
}

// commit closes the blob and files it; abort removes it.
func (w *blobWriter) commit(mt types.MediaType) (v1.Descriptor, error) {
	d := v1.Descriptor{MediaType: mt, Size: w.size, Digest: sumOf(w.hash)}
	return d, settle(w.f, blobPath(w.dir, d.Digest), nil)
}

func (w *blobWriter) abort() { w.f.Close(); os.Remove(w.f.Name()) }

// newTemp is a new temporary file in dir, for settle.
func newTemp(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.CreateTemp(dir, ".new-*")
}

// settle renames tmp to path unless err, else removes it: a file is
// written whole or not at all.
func settle(tmp *os.File, path string, err error) error {
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// sumOf is a sha256's sum, as a digest.
func sumOf(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
}

// image is one image of an artifact.
type image struct {
	desc     v1.Descriptor
	manifest *v1.Manifest
	config   *v1.ConfigFile
	platform *v1.Platform
}

// imagesOf are the images of root in the layout's index idx, attestations
// left out, each whose config lists as many layers as its manifest.
func imagesOf(idx v1.ImageIndex, root v1.Descriptor) ([]image, error) {
	descs := []v1.Descriptor{{MediaType: root.MediaType, Size: root.Size, Digest: root.Digest}}
	if root.MediaType.IsIndex() {
		var im *v1.IndexManifest
		var err error
		if idx, err = idx.ImageIndex(root.Digest); err == nil {
			im, err = idx.IndexManifest()
		}
		if err != nil {
			return nil, fmt.Errorf("read the OCI layout: %w", err)
		}
		descs = im.Manifests
	}
	var imgs []image
	for _, d := range descs {
		if !d.MediaType.IsImage() || d.Annotations["vnd.docker.reference.type"] == "attestation-manifest" {
			continue
		}
		var m *v1.Manifest
		var cfg *v1.ConfigFile
		img, err := idx.Image(d.Digest)
		if err == nil {
			m, err = img.Manifest()
		}
		if err == nil {
			cfg, err = img.ConfigFile()
		}
		if err != nil {
			return nil, fmt.Errorf("read the image: %w", err)
		}
		if len(cfg.RootFS.DiffIDs) != len(m.Layers) {
			return nil, fmt.Errorf("the image config lists %d layers (rootfs.diff_ids), its manifest %d", len(cfg.RootFS.DiffIDs), len(m.Layers))
		}
		imgs = append(imgs, image{desc: d, manifest: m, config: cfg, platform: cmp.Or(d.Platform, cfg.Platform())})
	}
	if len(imgs) == 0 {
		return nil, errors.New("the image index holds no image")
	}
	return imgs, nil
}
