package ocipublish

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// Prepare is a publish's first step, normalize: its output depends on its
// inputs only, so the engine caches it and an unchanged run only pushes.
type Prepare struct {
	// Kind names the image in messages: frontend, backend, codeasdata.
	Kind string `json:"kind"`
	// Tarball is Container.asTarball's file: an OCI image layout.
	Tarball string `json:"tarball"`
	// Created is the time every time in the image is clamped to (RFC 3339).
	Created time.Time `json:"created"`
	// Platforms asked for; none: the one image the tarball holds.
	Platforms []string `json:"platforms,omitempty"`
	// Cache is a folder kept between publishes (Cache); none: nothing kept.
	Cache string `json:"cache,omitempty"`
	// BaseTarball is Container.asTarball of the image the Dockerfile's last
	// stage starts from (Base); none: no layer is known to be the base's.
	BaseTarball string `json:"baseTarball,omitempty"`
	// BaseRef is that image pinned by digest: its first export is kept by
	// it (firstExports); none: nothing is kept.
	BaseRef string `json:"baseRef,omitempty"`
}

// Normalized writes the tarball's image normalized, its platforms checked,
// as an OCI layout into out (unpacked there, so a kept blob is written
// once); work holds the base's metadata. A base that cannot be read is said
// on warn and left out: every layer is then checked for later times. What
// is said is kept in out too (notesFile): the engine shows no output of a
// step another mounts. It reads no network.
func Normalized(p Prepare, work, out string, warn io.Writer) error {
	var said strings.Builder
	warn = io.MultiWriter(warn, &said)
	if err := unpack(p.Tarball, out, -1); err != nil {
		return err
	}
	loaded, err := Load(out)
	if err != nil {
		return err
	}
	imgs := loaded.images
	v := Cache{Dir: p.Cache}
	bases := v.firstExports(p.BaseRef)
	// the engine's export gives the base of each platform no first export
	// is kept for; its error may name a tar entry: printable, cut
	var exported []Base
	if slices.ContainsFunc(imgs, func(img image) bool { return baseFor(bases, img.platform) == nil }) && p.BaseTarball != "" {
		if read, err := ReadBases(p.BaseTarball, filepath.Join(work, "base")); err != nil {
			fmt.Fprintf(warn, "oci-publish: the %s image's base could not be read from the engine's export, so the layers of a platform it was to give a base are not known to be the base's: %v\n", p.Kind, fielderr.Cut(fielderr.Printable(err.Error()), 500))
		} else {
			read = slices.DeleteFunc(read, func(b Base) bool { return baseFor(bases, b.Platform) != nil })
			bases = append(bases, read...)
			exported = exportedIn(imgs, read)
		}
	}
	root, err := normalizeArtifact(p, loaded, bases)
	if err != nil {
		return err
	}
	// after normalizing: it kept the canonical blobs of the layers named
	v.keepFirstExports(p.BaseRef, exported)
	if i := slices.IndexFunc(bases, func(b Base) bool { return b.tookPlace > 0 }); i >= 0 {
		fmt.Fprintf(warn, "oci-publish: the %s image: %d of its base's layers are the ones the engine first exported (kept in the publish's cache volume), in place of its copies made anew from the same files (tests/engine-facts.md, fact 48)\n", p.Kind, bases[i].tookPlace)
	}
	if err := writeIndex(out, root); err != nil {
		return err
	}
	if err := keepOnly(out); err != nil || said.Len() == 0 {
		return err
	}
	return os.WriteFile(filepath.Join(out, notesFile), []byte(said.String()), 0o644)
}

// notesFile keeps, beside the layout, what normalize said, for the push.
const notesFile = "oci-publish-notes.txt"

// keepOnly removes from the layout in dir what normalizing replaced: every
// file neither the layout's own nor a blob of what it names.
func keepOnly(dir string) error {
	a, err := Load(dir)
	if err != nil {
		return err
	}
	keep := map[string]bool{filepath.Join(a.dir, "index.json"): true, filepath.Join(a.dir, "oci-layout"): true, blobPath(a.dir, a.root.Digest): true}
	for _, img := range a.images {
		for _, d := range append([]v1.Descriptor{img.desc, img.manifest.Config}, img.manifest.Layers...) {
			keep[blobPath(a.dir, d.Digest)] = true
		}
	}
	return filepath.WalkDir(a.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || keep[path] {
			return err
		}
		return os.Remove(path)
	})
}

// unpack extracts an image tarball's folders and files into dir, refusing
// any entry outside it, and skips every file over maxSize (none if < 0).
func unpack(tarball, dir string, maxSize int64) error {
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for h, err := range entries(tr, "the image tarball") {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(h.Name))
		if rel, err := filepath.Rel(dir, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("the image tarball has an entry outside it: %q", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			if maxSize < 0 || h.Size <= maxSize {
				err = writeFile(target, tr)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes r to path whole (settle).
func writeFile(path string, r io.Reader) error {
	tmp, err := newTemp(filepath.Dir(path))
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, r)
	return settle(tmp, path, err)
}
