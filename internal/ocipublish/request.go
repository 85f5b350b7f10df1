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

// Prepare is the first, cached step of a publish: normalize one image and
// check its platforms. Its output depends on its inputs only, so the engine
// keeps it, and a run where nothing changed at most pushes (not even that
// when a tag already holds the image: PlanPush).
type Prepare struct {
	// Kind names the image in messages: frontend, backend, codeasdata.
	Kind string `json:"kind"`
	// Tarball is Container.asTarball's file: an OCI image layout.
	Tarball string `json:"tarball"`
	// Created is the time every time in the image is clamped to (RFC 3339).
	Created time.Time `json:"created"`
	// Platforms asked for; none: the one image the tarball holds.
	Platforms []string `json:"platforms,omitempty"`
	// Cache is a folder kept between publishes (see Cache); none: nothing
	// is kept.
	Cache string `json:"cache,omitempty"`
	// BaseTarball is Container.asTarball of the image the Dockerfile's last
	// stage starts from, for the same platforms (see Base); none: no layer is
	// known to be the base image's.
	BaseTarball string `json:"baseTarball,omitempty"`
	// BaseRef is that image's reference pinned by the digest the engine
	// resolved it to: what the first export of it is kept by (firstExports).
	// None: nothing is kept.
	BaseRef string `json:"baseRef,omitempty"`
}

// Normalized normalizes the image of the tarball, checks its platforms and
// writes it as an OCI layout into out; work holds the base's metadata. The
// tarball is unpacked into out itself, so each blob normalizing keeps is
// written once, not copied again, and what it replaced is removed after.
// The base is the one first exported (firstExports), else the one in the
// base tarball, for each platform; one that cannot be read is said on warn
// and left out: the publish stays right, every layer is then checked for
// later times. What is said on warn is kept in out too (notesFile), for the
// push to say: the engine shows no output of a step another one mounts. It
// reads no network.
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
	imgs, err := imagesOf(loaded)
	if err != nil {
		return err
	}
	o := Options{Epoch: p.Created, Platforms: p.Platforms, Cache: Cache{Dir: p.Cache}}
	o.Bases = o.Cache.firstExports(p.BaseRef)
	// the engine's export of the base gives each platform no first export
	// is kept for; those it gives whole are kept as first exported. Its
	// error is said printable and cut: it may name a tar entry.
	var exported []Base
	if slices.ContainsFunc(imgs, func(img image) bool { return baseFor(o.Bases, img.platform) == nil }) && p.BaseTarball != "" {
		if read, err := ReadBases(p.BaseTarball, filepath.Join(work, "base")); err != nil {
			fmt.Fprintf(warn, "oci-publish: the %s image's base could not be read from the engine's export, so the layers of a platform it was to give a base are not known to be the base's: %v\n", p.Kind, fielderr.Cut(fielderr.Printable(err.Error()), 500))
		} else {
			read = slices.DeleteFunc(read, func(b Base) bool { return baseFor(o.Bases, b.Platform) != nil })
			o.Bases = append(o.Bases, read...)
			exported = exportedIn(imgs, read)
		}
	}
	n, err := normalizeArtifact(p.Kind, loaded, imgs, o)
	if err != nil {
		return err
	}
	// after normalizing: it kept the canonical blobs of the layers named
	o.Cache.keepFirstExports(p.BaseRef, exported)
	if i := slices.IndexFunc(o.Bases, func(b Base) bool { return b.tookPlace > 0 }); i >= 0 {
		fmt.Fprintf(warn, "oci-publish: the %s image: %d of its base's layers are the ones the engine first exported (kept in the publish's cache volume), in place of its copies made anew from the same files (tests/engine-facts.md, fact 48)\n", p.Kind, o.Bases[i].tookPlace)
	}
	// normalizing wrote what it made beside the unpacked blobs: out's
	// index.json becomes n's alone
	if err := writeIndex(out, n.root); err != nil {
		return err
	}
	if err := keepOnly(n); err != nil || said.Len() == 0 {
		return err
	}
	return os.WriteFile(filepath.Join(out, notesFile), []byte(said.String()), 0o644)
}

// notesFile is where, beside the layout it writes, normalize keeps what it
// said, which the push says again.
const notesFile = "oci-publish-notes.txt"

// keepOnly removes from a's layout every file that is not the layout's own
// or a blob of a (a manifest, a config, a layer): what the unpacked tarball
// held that normalizing replaced (the build's manifest and config, a
// rewritten layer).
func keepOnly(a Artifact) error {
	imgs, err := imagesOf(a)
	if err != nil {
		return err
	}
	keep := map[string]bool{filepath.Join(a.dir, "index.json"): true, filepath.Join(a.dir, "oci-layout"): true, blobPath(a.dir, a.root.Digest): true}
	for _, img := range imgs {
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

// unpack extracts an image tarball's directories and regular files into
// dir, refusing any entry that would land outside it, and leaving out every
// file larger than maxSize (none when negative): the file is skipped, not
// read, as the tarball is a file.
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

// writeFile writes what r holds to path whole (settle).
func writeFile(path string, r io.Reader) error {
	tmp, err := newTemp(filepath.Dir(path))
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, r)
	return settle(tmp, path, err)
}
