// Package ocipublish pushes the images a build made so that the same inputs
// give the same digests on any machine: every time in them (the config's
// created, each history entry, each layer's file times) is clamped to the
// commit time, and the platforms are checked before anything is pushed.
//
// Dagger v0.21.8's Container.publish stamps the build clock into the image
// config and history and has no epoch option (tests/engine-facts.md), so the
// module exports the image as an OCI layout, rewrites it here with
// go-containerregistry and pushes it from a container of its own.
package ocipublish

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"
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

// NormalizeImage clamps every time the build wrote in img to epoch: the
// config's created, each history entry's, and the file times in each layer.
// What img has of its base (see Base; nil for none) is kept as it is. A
// layer with no time after epoch is kept byte for byte too, so it keeps its
// digest and is not uploaded again; a layer with one is rewritten with every
// time clamped, no access or change time, and gzip at klauspost/compress's
// BestSpeed (rewrite), so equal contents give equal bytes whenever they were
// built. Whether a layer holds a later time is taken from v when it knows,
// and recorded there when it does not.
func NormalizeImage(img v1.Image, epoch time.Time, v Verdicts, base *Base) (v1.Image, error) {
	epoch = epoch.UTC().Truncate(time.Second)
	manifest, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("read the image manifest: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read the image config: %w", err)
	}
	cfg = cfg.DeepCopy()
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("read the image layers: %w", err)
	}
	if len(cfg.RootFS.DiffIDs) != len(layers) {
		return nil, fmt.Errorf("the image config lists %d layers (rootfs.diff_ids), its manifest %d", len(cfg.RootFS.DiffIDs), len(layers))
	}
	keptLayers := keptOf(cfg, base)
	out := make([]v1.Layer, len(layers))
	for i, l := range layers {
		// A layer kept as it is has the diff ID its config gives: asking
		// the layer would decompress it whole (a layout's layer knows only
		// its digest), and a base image's is hundreds of megabytes.
		l = knownDiffID{l, cfg.RootFS.DiffIDs[i]}
		if i < keptLayers {
			out[i] = l
		} else if out[i], err = clampLayer(l, epoch, v); err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		if cfg.RootFS.DiffIDs[i], err = out[i].DiffID(); err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	// Every history time, the base's entries' too: a base without history
	// gets one from the engine's exporter, stamped with the build's clock and
	// equal in the base's export, so "the base's" is no proof of a fixed time
	// (engine run: other digests after the engine's state was dropped). A time
	// in the config is no layer: the base's layers stay byte for byte.
	cfg.Created = v1.Time{Time: Clamp(cfg.Created.UTC(), epoch)}
	for i := range cfg.History {
		cfg.History[i].Created = v1.Time{Time: Clamp(cfg.History[i].Created.UTC(), epoch)}
	}

	start := mutate.MediaType(empty.Image, manifest.MediaType)
	start = mutate.ConfigMediaType(start, manifest.Config.MediaType)
	if len(manifest.Annotations) > 0 {
		start = mutate.Annotations(start, manifest.Annotations).(v1.Image)
	}
	withLayers, err := mutate.AppendLayers(start, out...)
	if err != nil {
		return nil, err
	}
	return mutate.ConfigFile(withLayers, cfg)
}

// knownDiffID is a layer whose diff ID is known from its image's config.
type knownDiffID struct {
	v1.Layer
	diffID v1.Hash
}

func (l knownDiffID) DiffID() (v1.Hash, error) { return l.diffID, nil }

// Descriptor is the layer's own descriptor when it has one (a layout's
// layer has the manifest's, annotations and URLs included), so a kept
// layer is described in the new manifest as in the old.
func (l knownDiffID) Descriptor() (*v1.Descriptor, error) { return partial.Descriptor(l.Layer) }

// clampLayer returns l itself when no time in it is after epoch, else l
// rewritten with every time clamped.
func clampLayer(l v1.Layer, epoch time.Time, v Verdicts) (v1.Layer, error) {
	mt, err := l.MediaType()
	if err != nil {
		return nil, err
	}
	switch mt {
	case types.OCILayer, types.DockerLayer, types.OCIUncompressedLayer, types.DockerUncompressedLayer:
	default:
		return nil, fmt.Errorf("media type %s: only gzip and uncompressed layers can be normalized", mt)
	}
	digest, err := l.Digest()
	if err != nil {
		return nil, err
	}
	late, known := v.lookup(digest, epoch)
	if !known {
		if late, err = hasTimeAfter(l, epoch); err != nil {
			return nil, err
		}
		v.record(digest, epoch, late)
	}
	if !late {
		return l, nil
	}
	return rewrite(l, epoch, mt)
}

// hasTimeAfter reads the layer's headers for a time after epoch.
func hasTimeAfter(l v1.Layer, epoch time.Time) (bool, error) {
	rc, err := uncompressed(l)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read the layer: %w", err)
		}
		if h.ModTime.After(epoch) || h.AccessTime.After(epoch) || h.ChangeTime.After(epoch) {
			return true, nil
		}
	}
}

// rewrite copies the layer's tar stream with every time clamped, in one
// pass: the tar is hashed (its diff ID) and compressed as it is written, so
// the uncompressed layer is never held whole, and compressed once. Each
// header is built anew from the fields that describe the file (as
// archive/tar asks of a header read and written back), without a format:
// the writer then rounds times to the second and writes no access or change
// time. A gzip layer is compressed with klauspost/compress at BestSpeed
// (pinned in go.mod; 1.8 times as fast as the standard library's at that
// level, which go-containerregistry uses), whose output depends on the bytes
// alone, not on how they are written: equal contents give equal bytes. An
// uncompressed one stays a plain tar.
func rewrite(l v1.Layer, epoch time.Time, mt types.MediaType) (v1.Layer, error) {
	rc, err := uncompressed(l)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var blob bytes.Buffer
	diffID := sha256.New()
	var tarOut io.Writer = io.MultiWriter(diffID, &blob)
	var zw *gzip.Writer
	if isGzip(mt) {
		if zw, err = gzip.NewWriterLevel(&blob, gzip.BestSpeed); err != nil {
			return nil, err
		}
		tarOut = io.MultiWriter(diffID, zw)
	}
	tr, tw := tar.NewReader(rc), tar.NewWriter(tarOut)
	buf := make([]byte, 256<<10)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the layer: %w", err)
		}
		out := &tar.Header{
			Typeflag: h.Typeflag, Name: h.Name, Linkname: h.Linkname, Size: h.Size, Mode: h.Mode,
			Uid: h.Uid, Gid: h.Gid, Uname: h.Uname, Gname: h.Gname, Devmajor: h.Devmajor, Devminor: h.Devminor,
			ModTime: Clamp(h.ModTime, epoch), PAXRecords: withoutTimes(h.PAXRecords),
		}
		if err := tw.WriteHeader(out); err != nil {
			return nil, fmt.Errorf("write %s: %w", h.Name, err)
		}
		if _, err := io.CopyBuffer(tw, tr, buf); err != nil {
			return nil, fmt.Errorf("copy %s: %w", h.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return nil, err
		}
	}
	return newMemLayer(blob.Bytes(), v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(diffID.Sum(nil))}, mt), nil
}

// memLayer is a layer held in memory as its blob, its digest and diff ID
// known.
type memLayer struct {
	blob           []byte
	digest, diffID v1.Hash
	mediaType      types.MediaType
}

func newMemLayer(blob []byte, diffID v1.Hash, mt types.MediaType) *memLayer {
	sum := sha256.Sum256(blob)
	return &memLayer{blob: blob, digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}, diffID: diffID, mediaType: mt}
}

func (l *memLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *memLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *memLayer) Size() (int64, error)                { return int64(len(l.blob)), nil }
func (l *memLayer) MediaType() (types.MediaType, error) { return l.mediaType, nil }
func (l *memLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.blob)), nil
}
func (l *memLayer) Uncompressed() (io.ReadCloser, error) {
	if !isGzip(l.mediaType) {
		return l.Compressed() // a plain tar's blob is the tar
	}
	return uncompressed(l)
}

func isGzip(mt types.MediaType) bool { return mt == types.OCILayer || mt == types.DockerLayer }

// uncompressed is l's tar stream, a gzip layer decompressed with
// klauspost/compress (about 1.4 times as fast as the standard library's,
// which go-containerregistry uses).
func uncompressed(l v1.Layer) (io.ReadCloser, error) {
	mt, err := l.MediaType()
	if err != nil {
		return nil, err
	}
	if !isGzip(mt) {
		return l.Uncompressed()
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(rc)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return readCloser{zr, func() error { zr.Close(); return rc.Close() }}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

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
