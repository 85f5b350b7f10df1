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
// time the build wrote clamped to epoch: the config's created, each history
// entry's, and the file times in each layer; it returns the new manifest's
// descriptor. Every layer is pushed as a blob that depends on its content
// alone, whatever blob the engine held for it: the layers img has of its
// base (see Base; nil for none) keep their content and are re-encoded
// (reencode, kept in v), as is any other layer with no time after epoch; a
// layer with a later time is rewritten with every time clamped, no access
// or change time, in the canonical gzip (rewrite), so equal contents give
// equal bytes whenever they were built.
func normalizeImage(dir string, img image, epoch time.Time, v Cache, base *Base) (v1.Descriptor, error) {
	epoch = epoch.UTC().Truncate(time.Second)
	cfg := img.config.DeepCopy()
	keptLayers := keptOf(cfg, base)
	rebasedLayers, err := base.rebased(dir, img, keptLayers, v)
	if err != nil {
		return v1.Descriptor{}, err
	}
	for i := keptLayers; i < rebasedLayers; i++ {
		l := base.firstExport[i]
		if isGzip(l.MediaType) && isGzip(img.manifest.Layers[i].MediaType) {
			// the same bytes are an OCI and a Docker gzip layer: named as
			// the exporter named the image's, as on a fresh engine
			l.MediaType = img.manifest.Layers[i].MediaType
		}
		img.manifest.Layers[i] = l
		cfg.RootFS.DiffIDs[i] = base.DiffIDs[i]
	}
	if rebasedLayers > keptLayers {
		base.tookPlace = max(base.tookPlace, rebasedLayers-keptLayers)
	}
	keptLayers = rebasedLayers
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

// clampLayer returns the layer l (diff ID diffID) re-encoded when no time
// in it is after epoch, else l rewritten with every time clamped, and its
// diff ID.
func clampLayer(dir string, l v1.Descriptor, diffID v1.Hash, epoch time.Time, v Cache) (v1.Descriptor, v1.Hash, error) {
	switch l.MediaType {
	case types.OCILayer, types.DockerLayer, types.OCIUncompressedLayer, types.DockerUncompressedLayer:
	default:
		return v1.Descriptor{}, v1.Hash{}, fmt.Errorf("media type %s: only gzip and uncompressed layers can be normalized", l.MediaType)
	}
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
	tr, done, err := openTar(blobPath(dir, l.Digest), l.MediaType)
	if err != nil {
		return false, fmt.Errorf("read the layer: %w", err)
	}
	defer done()
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read the layer: %w", err)
		}
		if err := errSparse(h); err != nil {
			return false, fmt.Errorf("read the layer: %w", err)
		}
		if h.ModTime.After(epoch) || h.AccessTime.After(epoch) || h.ChangeTime.After(epoch) {
			return true, nil
		}
	}
}

// rewrite writes the layer l anew into the layout in dir with every time
// clamped to epoch (recompress): each header is built anew from the fields
// that describe the file (as archive/tar asks of a header read and written
// back), without a format, so the writer rounds times to the second and
// writes no access or change time. Equal contents give equal bytes.
func rewrite(dir string, l v1.Descriptor, epoch time.Time) (v1.Descriptor, v1.Hash, error) {
	return recompress(dir, l, v1.Hash{}, func(r io.Reader, w io.Writer) error {
		return clampTar(tar.NewReader(r), tar.NewWriter(w), epoch)
	})
}

// clampTar copies tr to tw with every time clamped, and closes tw.
func clampTar(tr *tar.Reader, tw *tar.Writer, epoch time.Time) error {
	buf := make([]byte, 256<<10)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read the layer: %w", err)
		}
		if err := errSparse(h); err != nil {
			return fmt.Errorf("read the layer: %w", err)
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
}

// openTar opens the layer blob at p (media type mt) as a tar stream; done
// closes it.
func openTar(p string, mt types.MediaType) (_ *tar.Reader, done func(), _ error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	r, err := uncompressed(f, mt)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return tar.NewReader(r), func() { r.Close(); f.Close() }, nil
}

func isGzip(mt types.MediaType) bool { return mt == types.OCILayer || mt == types.DockerLayer }

// uncompressed is a layer blob's tar stream.
func uncompressed(blob io.Reader, mt types.MediaType) (io.ReadCloser, error) {
	if !isGzip(mt) {
		return io.NopCloser(blob), nil
	}
	zr, err := newLayerReader(blob)
	if err != nil {
		return nil, fmt.Errorf("read the layer: %w", err)
	}
	return zr, nil
}

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
	var out map[string]string
	for k, v := range records {
		switch k {
		case "mtime", "atime", "ctime", "LIBARCHIVE.creationtime", "path", "linkpath", "size", "uid", "gid", "uname", "gname":
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}
