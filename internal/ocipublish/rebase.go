package ocipublish

import (
	"archive/tar"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// rebase returns how many leading layers of img are its base's. Past the
// kept ones (by diff ID), a layer that gives the same file system over the
// layers below as the base's first exported layer is a copy a restarted
// engine remade (tests/engine-facts.md, fact 48): the first export takes
// its place, so the image gets the digest a fresh engine gives it.
func (b *Base) rebase(dir string, img image, cfg *v1.ConfigFile, kept int, v Cache) (int, error) {
	if b == nil || kept >= len(b.FirstExport) || len(b.FirstExport) != len(b.DiffIDs) || len(img.manifest.Layers) < len(b.FirstExport) {
		return kept, nil
	}
	lower := map[string]entry{} // the file system of the layers below
	n := 0
	for ; n < len(b.FirstExport); n++ {
		first, l := b.FirstExport[n], img.manifest.Layers[n]
		built, err := entriesOf(blobPath(dir, l.Digest), l)
		if err != nil {
			return kept, fmt.Errorf("layer %d: %w", n, err)
		}
		if n < kept {
			over(lower, built)
			continue
		}
		// firstExports took only a base whose canonical blobs v holds
		base, err := entriesOf(v.reencodedFile(first.Digest), first)
		if err != nil {
			return kept, fmt.Errorf("the base's layer %d: %w", n, err)
		}
		withBase := over(maps.Clone(lower), base)
		if !maps.Equal(over(lower, built), withBase) {
			break
		}
		if isGzip(first.MediaType) && isGzip(l.MediaType) {
			// the same bytes are an OCI and a Docker gzip layer: named
			// as the exporter named the image's, as on a fresh engine
			first.MediaType = l.MediaType
		}
		img.manifest.Layers[n], cfg.RootFS.DiffIDs[n], lower = first, b.DiffIDs[n], withBase
	}
	b.tookPlace = max(b.tookPlace, n-kept)
	return n, nil
}

// over applies a layer to fs, the file system of the layers below, and
// returns it: whiteouts (and opaque folders) first, then the entries.
func over(fs, layer map[string]entry) map[string]entry {
	for name := range layer {
		dir, file := path.Split(name)
		if !strings.HasPrefix(file, ".wh.") {
			continue
		}
		gone := dir
		if file != ".wh..wh..opq" {
			gone = dir + strings.TrimPrefix(file, ".wh.")
			delete(fs, gone)
			gone += "/"
		}
		for n := range fs {
			if strings.HasPrefix(n, gone) {
				delete(fs, n)
			}
		}
	}
	for name, e := range layer {
		if !strings.HasPrefix(path.Base(name), ".wh.") {
			fs[name] = e
		}
	}
	return fs
}

// entry is what a layer says of one path, a folder's time left out: a
// remade layer leaves out a folder whose time alone changed. A hard link is
// the file, with the names of all its links (group): two tars of the same
// files may write either name as the file.
type entry struct {
	typeflag                      byte
	mode, devmajor, devminor      int64
	uid, gid                      int
	size                          int64
	linkname, mtime, xattr, group string
	content                       [sha256.Size]byte
}

func entriesOf(p string, d v1.Descriptor) (map[string]entry, error) {
	r, err := openLayer(p, d.MediaType)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	tr := tar.NewReader(r)
	out := map[string]entry{}
	links := map[string][]string{} // a linked file's name → every name it has
	linkOf := map[string]string{}  // a link's name → the file's
	for h, err := range entries(tr, "the layer") {
		if err != nil {
			return nil, err
		}
		name := layerPath(h.Name)
		if name == "" {
			continue
		}
		if h.Typeflag == tar.TypeLink {
			target := layerPath(h.Linkname)
			if t, ok := linkOf[target]; ok {
				target = t
			}
			e, ok := out[target]
			if !ok {
				return nil, fmt.Errorf("read the layer: %s links to %s, which comes later or not at all", h.Name, h.Linkname)
			}
			out[name] = e
			linkOf[name] = target
			links[target] = append(links[target], name)
			continue
		}
		e := entry{typeflag: h.Typeflag, mode: h.Mode, devmajor: h.Devmajor, devminor: h.Devminor, uid: h.Uid, gid: h.Gid,
			size: h.Size, linkname: h.Linkname, xattr: xattrsOf(h)}
		if h.Typeflag != tar.TypeDir {
			e.mtime = h.ModTime.UTC().Truncate(time.Second).String()
		}
		hash := sha256.New()
		if _, err := io.Copy(hash, tr); err != nil {
			return nil, fmt.Errorf("read %s: %w", h.Name, err)
		}
		copy(e.content[:], hash.Sum(nil))
		out[name] = e
	}
	for file, names := range links {
		group := append([]string{file}, names...)
		slices.Sort(group)
		joined := strings.Join(group, "\x00")
		for _, n := range group {
			e := out[n]
			e.group = joined
			out[n] = e
		}
	}
	return out, nil
}

// layerPath is a tar entry's path: "./bin/" and "bin" are "bin"; the root "".
func layerPath(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}

// xattrsOf is an entry's extended attributes, sorted.
func xattrsOf(h *tar.Header) string {
	var kv []string
	for k, v := range h.PAXRecords {
		if strings.HasPrefix(k, "SCHILY.xattr.") {
			kv = append(kv, k+"="+v)
		}
	}
	if len(kv) == 0 {
		return ""
	}
	slices.Sort(kv)
	return strings.Join(kv, "\x00")
}
