// Package ocipublish pushes the images a build made with the same digests
// for the same inputs on any machine: every time in them is clamped to the
// commit time. Dagger v0.21.8's Container.publish stamps the build clock and
// has no epoch option (tests/engine-facts.md), so the module exports each
// image, rewrites it here and pushes it with go-containerregistry.
package ocipublish

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// Clamp is SOURCE_DATE_EPOCH's rule: a time after epoch becomes epoch.
func Clamp(t, epoch time.Time) time.Time {
	if t.After(epoch) {
		return epoch
	}
	return t
}

// Epoch is --created, or the Unix epoch (as ko does), never the clock.
func Epoch(created time.Time) time.Time {
	if created.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return created.UTC()
}

// normalizeImage writes img into the layout in dir with every time the
// build wrote clamped to epoch, and returns its manifest's descriptor. The
// base's layers and the layers with no later time keep their tar (reencode).
func normalizeImage(dir string, img image, epoch time.Time, v Cache, base *Base) (v1.Descriptor, error) {
	epoch = epoch.UTC().Truncate(time.Second)
	cfg := img.config.DeepCopy()
	keptLayers, err := base.rebase(dir, img, cfg, keptOf(cfg, base), v)
	if err != nil {
		return v1.Descriptor{}, err
	}
	layers := make([]v1.Descriptor, len(img.manifest.Layers))
	// a core per layer: a base's two largest take as long as the larger
	errs := make([]error, len(layers))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, l := range img.manifest.Layers {
		g.Go(func() error {
			if i < keptLayers {
				// the base's times stay: they are the base's, not the build's
				layers[i], errs[i] = reencode(dir, l, cfg.RootFS.DiffIDs[i], v)
			} else {
				layers[i], cfg.RootFS.DiffIDs[i], errs[i] = clampLayer(dir, l, cfg.RootFS.DiffIDs[i], epoch, v)
			}
			return nil
		})
	}
	g.Wait()
	for i, err := range errs {
		if err != nil { // the lowest layer's, whichever failed first
			return v1.Descriptor{}, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	nameLayersAsPushed(cfg.History, layers, keptLayers)
	// the base's history too: the exporter stamps the clock into the entries
	// of a base without history (engine run)
	cfg.Created = v1.Time{Time: Clamp(cfg.Created.UTC(), epoch)}
	for i := range cfg.History {
		cfg.History[i].Created = v1.Time{Time: Clamp(cfg.History[i].Created.UTC(), epoch)}
	}
	config, err := writeJSON(dir, img.manifest.Config.MediaType, cfg)
	if err != nil {
		return v1.Descriptor{}, err
	}
	return writeJSON(dir, img.desc.MediaType, v1.Manifest{SchemaVersion: 2, MediaType: img.desc.MediaType, Config: config,
		Layers: layers, Annotations: img.manifest.Annotations})
}

// How the engine's exporter describes a layer of a base without history,
// naming the blob it held, not the one it exported.
const (
	exporterImport  = "import image layer "
	exporterComment = "buildkit.exporter.image.v0"
)

// nameLayersAsPushed names, in the exporter's history entries, each base
// layer as pushed, and leaves out what they say of a build layer: the
// engine's snapshot, which depends on its past, not the layer
// (tests/engine-facts.md, facts 48 and 53).
func nameLayersAsPushed(history []v1.History, layers []v1.Descriptor, base int) {
	var withLayer []int
	for i, h := range history {
		if !h.EmptyLayer {
			withLayer = append(withLayer, i)
		}
	}
	if len(withLayer) != len(layers) {
		return
	}
	for n, i := range withLayer {
		switch {
		case history[i].Comment != exporterComment:
		case n < base || strings.HasPrefix(history[i].CreatedBy, exporterImport):
			history[i].CreatedBy = exporterImport + layers[n].Digest.String()
		default:
			history[i].CreatedBy = ""
		}
	}
}

// clampLayer is l re-encoded when no time in it is after epoch, else
// rewritten with every time clamped, and its diff ID.
func clampLayer(dir string, l v1.Descriptor, diffID v1.Hash, epoch time.Time, v Cache) (v1.Descriptor, v1.Hash, error) {
	late, err := hasTimeAfter(dir, l, epoch)
	if err != nil {
		return v1.Descriptor{}, v1.Hash{}, err
	}
	if !late {
		d, err := reencode(dir, l, diffID, v)
		return d, diffID, err
	}
	return rewrite(dir, l, epoch)
}

// hasTimeAfter reads the layer's headers for a time after epoch.
func hasTimeAfter(dir string, l v1.Descriptor, epoch time.Time) (bool, error) {
	r, err := openLayer(blobPath(dir, l.Digest), l.MediaType)
	if err != nil {
		return false, err
	}
	defer r.Close()
	for h, err := range entries(tar.NewReader(r), "the layer") {
		if err != nil || h.ModTime.After(epoch) || h.AccessTime.After(epoch) || h.ChangeTime.After(epoch) {
			return err == nil, err
		}
	}
	return false, nil
}

// rewrite writes l anew with every time clamped to epoch. Each header is
// made anew without a format (as archive/tar asks of a header written
// back), so times are whole seconds, without access or change time.
func rewrite(dir string, l v1.Descriptor, epoch time.Time) (v1.Descriptor, v1.Hash, error) {
	return recompress(dir, l, v1.Hash{}, func(r io.Reader, w io.Writer) error {
		tr, tw, buf := tar.NewReader(r), tar.NewWriter(w), make([]byte, 256<<10)
		for h, err := range entries(tr, "the layer") {
			if err != nil {
				return err
			}
			out := &tar.Header{
				Typeflag: h.Typeflag, Name: h.Name, Linkname: h.Linkname, Size: h.Size, Mode: h.Mode,
				Uid: h.Uid, Gid: h.Gid, Uname: h.Uname, Gname: h.Gname, Devmajor: h.Devmajor, Devminor: h.Devminor,
				ModTime: Clamp(h.ModTime, epoch), PAXRecords: withoutTimes(h.PAXRecords),
			}
			if err := tw.WriteHeader(out); err != nil {
				return fmt.Errorf("write %s: %w", h.Name, err)
			}
			if _, err := io.CopyBuffer(tw, tr, buf); err != nil {
				return fmt.Errorf("copy %s: %w", h.Name, err)
			}
		}
		return tw.Close()
	})
}

// entries are tr's entries, a sparse one refused; an error ends them.
func entries(tr *tar.Reader, what string) iter.Seq2[*tar.Header, error] {
	return func(yield func(*tar.Header, error) bool) {
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err == nil {
				err = errSparse(h)
			}
			if err != nil {
				err = fmt.Errorf("read %s: %w", what, err)
			}
			if !yield(h, err) || err != nil {
				return
			}
		}
	}
}

// openLayer is the tar of the layer blob at p: only gzip and uncompressed.
func openLayer(p string, mt types.MediaType) (io.ReadCloser, error) {
	switch mt {
	case types.OCILayer, types.DockerLayer, types.OCIUncompressedLayer, types.DockerUncompressedLayer:
	default:
		return nil, fmt.Errorf("media type %s: only gzip and uncompressed layers can be normalized", mt)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("read the layer: %w", err)
	}
	if !isGzip(mt) {
		return f, nil
	}
	zr, err := newLayerReader(f)
	if err != nil {
		return nil, fmt.Errorf("read the layer: %w", err)
	}
	return zr, nil
}

func isGzip(mt types.MediaType) bool { return mt == types.OCILayer || mt == types.DockerLayer }

// errSparse refuses a sparse entry, which archive/tar would expand to up
// to 2^63 bytes, and no engine export holds.
func errSparse(h *tar.Header) error {
	sparse := h.Typeflag == tar.TypeGNUSparse
	for k := range h.PAXRecords {
		sparse = sparse || strings.HasPrefix(k, "GNU.sparse.")
	}
	if !sparse {
		return nil
	}
	return fmt.Errorf("%s is a sparse file, which no image the engine exports holds: nothing was pushed", fielderr.Quote(h.Name))
}

// withoutTimes keeps a header's extended records (xattrs, capabilities),
// less its times and what its own fields carry.
func withoutTimes(records map[string]string) map[string]string {
	out := maps.Clone(records)
	maps.DeleteFunc(out, func(k, _ string) bool {
		switch k {
		case "mtime", "atime", "ctime", "LIBARCHIVE.creationtime", "path", "linkpath", "size", "uid", "gid", "uname", "gname":
			return true
		}
		return false
	})
	return out
}
