package ocipublish

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"
)

// fetchRebaseLayers brings, for each layer of the base the image img does
// not have by diff ID (keptOf), a file holding the base's own tar of it
// (baseRegistry.path): an engine restarted on its state makes a base's
// layers anew from its unpacked files (tests/engine-facts.md, fact 48), and
// rebased then compares their files with the base's own. A base read from
// no registry brings nothing; one read from the engine's first export takes
// the blobs kept of it.
func (b *Base) fetchRebaseLayers(ctx context.Context, dir string, img image) error {
	if b == nil || b.registry == nil {
		return nil
	}
	r := b.registry
	kept := keptOf(img.config, b)
	if !b.rebasable(img, kept) {
		return nil
	}
	ctx, cancel := context.WithTimeoutCause(ctx, baseLayersLimit, fmt.Errorf("its layers did not come within %s", baseLayersLimit))
	defer cancel()
	paths := make([]string, len(r.layers))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for n := kept; n < len(r.layers); n++ {
		g.Go(func() (err error) {
			if paths[n], err = r.blobs.path(gctx, dir, r.layers[n], b.DiffIDs[n]); err != nil {
				return fmt.Errorf("the base's layer %d: %w", n, limitErr(gctx, err))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return limitErr(ctx, err)
	}
	if r.paths == nil {
		r.paths = map[v1.Hash]string{}
	}
	for n := kept; n < len(r.layers); n++ {
		if paths[n] != "" {
			r.paths[r.layers[n].Digest] = paths[n]
		}
	}
	return nil
}

// rebasable reports whether img, of whose leading layers kept are b's by
// diff ID, may have more of b's registry's layers past those: b is read
// from its registry, its layers there are as many as its diff IDs, and img
// has at least as many layers.
func (b *Base) rebasable(img image, kept int) bool {
	return b != nil && b.registry != nil && kept < len(b.registry.layers) &&
		len(b.registry.layers) == len(b.DiffIDs) && len(img.manifest.Layers) >= len(b.registry.layers)
}

// rebased is how many leading layers of img are its base's, counting, past
// the first kept (equal by diff ID), those that hold the same files as the
// base's layer at the same place but not its bytes: a layer an engine
// restarted on its state made anew (fetchRebaseLayers). The base's own
// layer then takes its place, so the image gets the digest a fresh engine
// gives it. A layer that differs in any file, mode, owner, link or time is
// the build's, and so is every layer after it.
func (b *Base) rebased(dir string, img image, kept int) (int, error) {
	if !b.rebasable(img, kept) {
		return kept, nil
	}
	r := b.registry
	lower := map[string]entry{} // the files of the base's layers below, the upper one's over the lower's
	for n := range r.layers {
		var base map[string]entry
		if n < kept {
			// the image's own layer is the base's: the same diff ID
			l := img.manifest.Layers[n]
			var err error
			if base, err = entriesOf(blobPath(dir, l.Digest), l); err != nil {
				return kept, fmt.Errorf("layer %d: %w", n, err)
			}
		} else {
			basePath, ok := r.paths[r.layers[n].Digest]
			if !ok {
				return n, nil
			}
			var err error
			if base, err = entriesOf(basePath, r.layers[n]); err != nil {
				return kept, fmt.Errorf("the base's layer %d: %w", n, err)
			}
			built, err := entriesOf(blobPath(dir, img.manifest.Layers[n].Digest), img.manifest.Layers[n])
			if err != nil {
				return kept, fmt.Errorf("layer %d: %w", n, err)
			}
			if !sameOver(built, base, lower) {
				return n, nil
			}
		}
		maps.Copy(lower, base)
	}
	return len(r.layers), nil
}

// sameOver reports whether a layer built holds what the base's layer does,
// over lower: the same entries, but for a folder the layers below have too,
// which the engine leaves out of a layer it makes anew when only the
// folder's own time changed (engine run: `usr/lib` of nginx's second layer).
// The base's layer, pushed in its place, keeps that time as the base has it.
func sameOver(built, base, lower map[string]entry) bool {
	for name, e := range built {
		if be, ok := base[name]; !ok || be != e {
			return false
		}
	}
	for name, e := range base {
		if _, ok := built[name]; ok {
			continue
		}
		if le, ok := lower[name]; !ok || e.typeflag != tar.TypeDir || le.typeflag != tar.TypeDir {
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
	mode                          int64
	uid, gid                      int
	size                          int64
	linkname, mtime, xattr, group string
	content                       [sha256.Size]byte
}

func entriesOf(p string, d v1.Descriptor) (map[string]entry, error) {
	tr, done, err := openTar(p, d.MediaType)
	if err != nil {
		return nil, err
	}
	defer done()
	out := map[string]entry{}
	links := map[string][]string{} // a linked file's name → every name it has
	linkOf := map[string]string{}  // a link's name → the file's
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the layer: %w", err)
		}
		if err := errSparse(h); err != nil {
			return nil, fmt.Errorf("read the layer: %w", err)
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
		e := entry{typeflag: h.Typeflag, mode: h.Mode, uid: h.Uid, gid: h.Gid, size: h.Size,
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
