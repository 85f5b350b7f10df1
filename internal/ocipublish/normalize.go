// Package ocipublish pushes the images a build made so that the same inputs
// give the same digests on any machine: every time in them (the config's
// created, each history entry, each layer's file times) is clamped to the
// commit time, and the platforms are checked before anything is pushed.
//
// Dagger v0.21.8's Container.publish stamps the build clock into the image
// config and history and has no epoch option (tests/engine-facts.md), so the
// module exports the image as an OCI layout, rewrites it here (the layout's
// JSON read with go-containerregistry's types, its layers with archive/tar
// and compress/gzip) and pushes it from a container of its own with
// go-containerregistry's remote (Push), the module's one OCI library.
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

// Clamp is the reproducible-builds rule for one time: a time after epoch
// becomes epoch, an earlier one stays (SOURCE_DATE_EPOCH's "clamp").
func Clamp(t, epoch time.Time) time.Time {
	if t.After(epoch) {
		return epoch
	}
	return t
}

// Epoch is the time an image's times are clamped to: --created, or the Unix
// epoch when none is given (as ko does), never the clock.
func Epoch(created time.Time) time.Time {
	if created.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return created.UTC()
}

// normalizeImage writes into the layout in dir the image img with every
// time the build wrote clamped to epoch (the config's created, each history
// entry's, each layer's file times) and returns the new manifest's
// descriptor. The layers img has of its base (Base, nil for none; kept or
// put back: rebase) and every other layer with no time after epoch keep
// their content, re-encoded (reencode); the others are rewritten (rewrite).
func normalizeImage(dir string, img image, epoch time.Time, v Cache, base *Base) (v1.Descriptor, error) {
	epoch = epoch.UTC().Truncate(time.Second)
	cfg := img.config.DeepCopy()
	keptLayers, err := base.rebase(dir, img, cfg, keptOf(cfg, base), v)
	if err != nil {
		return v1.Descriptor{}, err
	}
	layers := make([]v1.Descriptor, len(img.manifest.Layers))
	// each layer is read and compressed on a core of its own: a base
	// image's two largest layers take about as long as the larger
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
		// the first layer's error, whichever failed first
		if err != nil {
			return v1.Descriptor{}, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	nameLayersAsPushed(cfg.History, layers, keptLayers)
	// Every history time, the base's entries' too: a base without history
	// gets one from the engine's exporter, stamped with the build's clock and
	// equal in the base's export, so "the base's" is no proof of a fixed time
	// (engine run: other digests after the engine's state was dropped). A time
	// in the config is no layer: the base's layers stay byte for byte.
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

// exporterImport is how the engine's exporter describes a layer of a base
// image that has no history: "import image layer <digest>", naming the blob
// it held for the layer, not the one it exported.
const (
	exporterImport  = "import image layer "
	exporterComment = "buildkit.exporter.image.v0"
)

// nameLayersAsPushed points each history entry the engine's exporter wrote
// for a layer of a base without history at the layer as it is pushed, when
// the history's layer entries match the layers one for one; for the first
// base layers (kept or put back) any exporter entry is one, since a
// restarted engine says "rehydrated persisted snapshot" of them
// (tests/engine-facts.md, fact 48). Its entry for a layer of the build names
// the engine's snapshot (the call that made it, or "rehydrated persisted
// snapshot" when a restarted engine reuses one: engine run, a source change
// that left the web build's output as it was): it depends on the engine's
// past, not the layer, so it is left out.
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

// clampLayer returns the layer l (diff ID diffID) re-encoded when no time
// in it is after epoch, else l rewritten with every time clamped, and its
// diff ID.
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

// rewrite writes the layer l anew into the layout in dir with every time
// clamped to epoch (recompress): each header is built anew from the fields
// that describe the file (as archive/tar asks of a header read and written
// back), without a format, so the writer rounds times to the second and
// writes no access or change time. Equal contents give equal bytes.
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

// entries are the entries of tr, each refused when errSparse says so; the
// first that cannot be read ends them, with an error said as reading what.
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

// openLayer is the tar stream of the layer blob at p (media type mt): a gzip
// layer decompressed (newLayerReader), an uncompressed one as it is; any
// other is refused.
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
		f.Close()
		return nil, fmt.Errorf("read the layer: %w", err)
	}
	return readCloser{zr, f}, nil
}

// readCloser closes its reader, then what that reads.
type readCloser struct {
	io.ReadCloser
	under io.Closer
}

func (r readCloser) Close() error { r.ReadCloser.Close(); return r.under.Close() }

func isGzip(mt types.MediaType) bool { return mt == types.OCILayer || mt == types.DockerLayer }

// errSparse is a tar entry archive/tar would expand to the size it declares
// (a GNU or PAX sparse file: holes of up to 2^63 bytes), which no engine
// export holds: it is refused, not read.
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

// withoutTimes keeps a header's extended records (xattrs, capabilities)
// but neither the times nor what the header's own fields carry.
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
