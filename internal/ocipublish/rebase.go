package ocipublish

import (
	"archive/tar"
	"crypto/sha256"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// rebase returns how many leading layers of img are its base's, past the
// first kept (equal by diff ID) counting each that holds the same files as
// the base's first exported layer at its place (whose canonical blob v
// keeps) but not its bytes: a layer an engine restarted on its state made
// anew (tests/engine-facts.md, fact 48). The first exported layer takes its
// place in img's manifest and cfg, so the image gets the digest a fresh
// engine gives it. A layer that differs in any file, mode, owner, link or
// time is the build's, and so is every layer after it. Only a base first
// exported as many layers as its diff IDs, under an image with as many, is
// looked at.
func (b *Base) rebase(dir string, img image, cfg *v1.ConfigFile, kept int, v Cache) (int, error) {
	if b == nil || kept >= len(b.FirstExport) || len(b.FirstExport) != len(b.DiffIDs) || len(img.manifest.Layers) < len(b.FirstExport) {
		return kept, nil
	}
	lower := map[string]entry{} // the files of the base's layers below, as a file system has them
	n := 0
	for ; n < len(b.FirstExport); n++ {
		first, l := b.FirstExport[n], img.manifest.Layers[n]
		built, err := entriesOf(blobPath(dir, l.Digest), l)
		if err != nil {
			return kept, fmt.Errorf("layer %d: %w", n, err)
		}
		if n >= kept {
			// firstExports took only a base whose canonical blobs v holds
			base, err := entriesOf(v.reencodedFile(first.Digest), first)
			if err != nil {
				return kept, fmt.Errorf("the base's layer %d: %w", n, err)
			}
			if !sameOver(built, base, lower) {
				break
			}
			if isGzip(first.MediaType) && isGzip(l.MediaType) {
				// the same bytes are an OCI and a Docker gzip layer: named
				// as the exporter named the image's, as on a fresh engine
				first.MediaType = l.MediaType
			}
			img.manifest.Layers[n], cfg.RootFS.DiffIDs[n], built = first, b.DiffIDs[n], base
		}
		over(lower, built)
	}
	b.tookPlace = max(b.tookPlace, n-kept)
	return n, nil
}

// sameOver reports whether a layer built holds what the base's layer does,
// over lower (the file system of the layers below): the same entries, but
// for those the layers below hold, which one has and the other not: the
// engine's copy leaves out a folder whose own time alone changed (engine
// run: `usr/lib` of nginx's second layer) and an entry written again as it
// was (`etc/.pwd.lock` of a layer that ran `useradd`), and names a parent
// folder a tar may leave out, unless the base's layer deletes it. It also
// leaves out the marker of an opaque folder (`.wh..wh..opq`) over nothing
// below (engine run: 27 of them in the second layer of the vendor's
// frontend base). The base's layer, pushed in its place, keeps them as the
// base has them.
func sameOver(built, base, lower map[string]entry) bool {
	for name, e := range built {
		if be, ok := base[name]; ok && be != e || !ok && (!asBelow(lower, name, e) || deletes(base, name)) {
			return false
		}
	}
	for name, e := range base {
		if _, ok := built[name]; !ok && !asBelow(lower, name, e) && !hidesNothing(lower, name) {
			return false
		}
	}
	return true
}

// over puts a layer's entries over lower: its whiteouts delete what they
// name (a file, a folder and what is in it, or, for an opaque folder's
// marker, what is in the folder); its other entries take their place.
func over(lower, layer map[string]entry) {
	for name := range layer {
		dir, file := path.Split(name)
		if !strings.HasPrefix(file, ".wh.") {
			continue
		}
		gone := dir
		if file != ".wh..wh..opq" {
			gone = dir + strings.TrimPrefix(file, ".wh.")
			delete(lower, gone)
			gone += "/"
		}
		for n := range lower {
			if strings.HasPrefix(n, gone) {
				delete(lower, n)
			}
		}
	}
	for name, e := range layer {
		if !strings.HasPrefix(path.Base(name), ".wh.") {
			lower[name] = e
		}
	}
}

// asBelow reports whether the layers below hold e at name as it is, but
// for a folder's time.
func asBelow(lower map[string]entry, name string, e entry) bool {
	le, ok := lower[name]
	if ok && e.typeflag == tar.TypeDir {
		le.mtime = e.mtime
	}
	return ok && le == e
}

// deletes reports whether layer deletes name from the layers below: a
// whiteout of it or of a folder it is in, or the opaque marker of such a
// folder.
func deletes(layer map[string]entry, name string) bool {
	for p := name; ; {
		dir, file := path.Split(p)
		if _, ok := layer[dir+".wh."+file]; ok {
			return true
		}
		if _, ok := layer[dir+".wh..wh..opq"]; ok {
			return true
		}
		if dir == "" {
			return false
		}
		p = strings.TrimSuffix(dir, "/")
	}
}

// hidesNothing reports whether name is the marker of an opaque folder that
// the layers below hold nothing in.
func hidesNothing(lower map[string]entry, name string) bool {
	dir, file := path.Split(name)
	if file != ".wh..wh..opq" {
		return false
	}
	for n := range lower {
		if strings.HasPrefix(n, dir) {
			return false
		}
	}
	return true
}

// entry is what a layer says of one path. A hard link is read as the file
// it links to, with the names of all the links to that file (group): two
// tars of the same files may write either name as the file and the other
// as the link.
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
			size:     h.Size,
			linkname: h.Linkname, mtime: h.ModTime.UTC().Truncate(1e9).String(), xattr: xattrsOf(h)}
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

// layerPath is a tar entry's path as a file system has it: "./bin/" and
// "bin" are "bin"; the root is "".
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
