package ocipublish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// A base image read from its registry is the base as it was pulled, which
// an engine restarted on its state no longer hands out: it makes the
// base's layers anew from its unpacked files (tests/engine-facts.md, fact
// 48), so the registry's diff IDs are the only ones that name the base's
// layers on every engine, and its blobs the only source of their content.

// baseReadLimit bounds reading a base image's manifests and configs from
// its registry; baseLayersLimit the download and re-encoding of its layers,
// which only an image an engine remade the base's layers of needs. Variables for the
// tests only.
var (
	baseReadLimit   = 10 * time.Second
	baseLayersLimit = 5 * time.Minute
)

// baseRetryAfter is how long a registry that could not be read is not
// asked again for that base, on one engine: each normalize takes the first
// one's answer, a failure too, so a registry out of reach (an engine that
// pulls through a mirror) costs one publish a wait, not every one.
const baseRetryAfter = time.Hour

// registryImage is what a base's registry says of one platform's image, as
// kept in the cache folder: a digest names it for good.
type registryImage struct {
	Platform *v1.Platform    `json:"platform,omitempty"`
	DiffIDs  []v1.Hash       `json:"diffIDs"`
	Layers   []v1.Descriptor `json:"layers"`
}

// RegistryBases reads the base image ref (pinned by digest, as the engine
// resolved it: Container.imageRef) from its registry, anonymously: each
// platform's diff IDs and layers, with a way to fetch those layers. What
// it read is kept in v's folder by the digest, so an engine reads a base's
// registry once. A base its registry cannot give is taken as the engine
// first exported it, if a normalize kept that (keepExported).
func RegistryBases(ctx context.Context, ref string, v Cache) ([]Base, error) {
	h, at, err := baseAt(ref, v)
	if err != nil {
		return nil, err
	}
	read, kept := v.basesIn(v.registryBasesFile(h))
	from := fromRegistry
	if !kept {
		if read, err = readRegistry(ctx, at, h); err != nil {
			// a registry the publish cannot read (a private one, a mirror
			// out of its reach)
			exported, ok := v.basesIn(v.exportedBasesFile(h))
			if !ok {
				return nil, err
			}
			read, from = exported, fromFirstExport
		}
	}
	bases := make([]Base, len(read))
	for i, r := range read {
		bases[i] = Base{Platform: r.Platform, DiffIDs: r.DiffIDs, registry: &registryLayers{layers: r.Layers, blobs: at, from: from}}
	}
	return bases, nil
}

// baseAt is the digest of the base image ref, pinned, and its registry.
func baseAt(ref string, v Cache) (v1.Hash, *baseRegistry, error) {
	d, h, err := pinnedDigest(ref)
	if err != nil {
		return v1.Hash{}, nil, err
	}
	return h, &baseRegistry{repo: d.Repository, v: v}, nil
}

// pinnedDigest is the base image ref, pinned by digest, and that digest.
func pinnedDigest(ref string) (name.Digest, v1.Hash, error) {
	d, err := name.NewDigest(ref)
	if err != nil {
		return name.Digest{}, v1.Hash{}, fmt.Errorf("base image %s: %w", fielderr.Quote(ref), err)
	}
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return name.Digest{}, v1.Hash{}, fmt.Errorf("base image %s: %w", fielderr.Quote(ref), err)
	}
	return d, h, nil
}

// keepExported keeps found, the base h as the engine exported it, for each
// platform no export of it is kept for: the first is kept, since one the
// engine makes after a restart holds other tars (fact 48).
func (v Cache) keepExported(h v1.Hash, found []registryImage) {
	file := v.exportedBasesFile(h)
	if v.Dir == "" {
		return
	}
	defer v.lockOf(file)() // publishes beside each other add their platforms in turn
	kept, ok := v.basesIn(file)
	if !ok && fileExists(file) {
		return // not read, so not written over
	}
	all := slices.Clone(kept)
	for _, f := range found {
		if !slices.ContainsFunc(kept, func(k registryImage) bool {
			return samePlatform(k.Platform, f.Platform) || k.Platform == nil && f.Platform == nil
		}) {
			all = append(all, f)
		}
	}
	if len(all) > len(kept) {
		v.keepBases(file, all)
	}
}

// exportedIn is the base each image of imgs holds whole (every layer of
// its base's, by diff ID: bases read from the engine's export of it), named
// by the image's own blobs, whose canonical blobs normalize keeps
// (reencode): the base as the engine exported it, for keepExported.
func exportedIn(imgs []image, bases []Base) []registryImage {
	var found []registryImage
	for _, img := range imgs {
		b := baseFor(bases, img.platform)
		if b == nil || len(b.DiffIDs) == 0 || keptOf(img.config, b) != len(b.DiffIDs) || len(img.manifest.Layers) < len(b.DiffIDs) {
			continue
		}
		found = append(found, registryImage{Platform: b.Platform, DiffIDs: b.DiffIDs, Layers: slices.Clone(img.manifest.Layers[:len(b.DiffIDs)])})
	}
	return found
}

// readRegistry reads the base h from its registry, within baseReadLimit,
// unless a failure to read it there is kept; what it read, or why it could
// not, is kept in at's folder.
func readRegistry(ctx context.Context, at *baseRegistry, h v1.Hash) ([]registryImage, error) {
	repo := at.repo.Name()
	what := "read " + repo + " from its registry"
	if failed, ago, ok := at.v.registryFailure(h, repo); ok {
		return nil, fmt.Errorf("%s: %s (%s ago, tried again after %s)", what, failed, ago.Round(time.Second), baseRetryAfter)
	}
	rctx, cancel := context.WithTimeoutCause(ctx, baseReadLimit, fmt.Errorf("its registry did not answer within %s", baseReadLimit))
	defer cancel()
	read, err := readRegistryBases(at.repo.Digest(h.String()), remote.WithContext(rctx), remote.WithTransport(boundedAnswers{RoundTripper: remote.DefaultTransport}))
	if err != nil {
		err = limitErr(rctx, err)
		at.v.keepRegistryFailure(h, repo, err)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	at.v.keepBases(at.v.registryBasesFile(h), read)
	return read, nil
}

// Where a base's layers that take the place of the engine's come from, as
// the publish's log says it.
const (
	fromRegistry    = "the registry's"
	fromFirstExport = "the ones the engine first pulled (its registry could not be read; kept in the publish's cache volume)"
)

// limitErr is err, or the cause ctx ended with when it did.
func limitErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
		return cause
	}
	return err
}

// readRegistryBases reads the manifest (or index) ref and each image's
// config: one registryImage per image, attestations left out. remote
// checks what it reads against its digest.
func readRegistryBases(ref name.Digest, opts ...remote.Option) ([]registryImage, error) {
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, err
	}
	var imgs []image
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, err
		}
		if imgs, err = imagesIn(idx); err != nil {
			return nil, err
		}
	} else {
		img, err := desc.Image()
		if err != nil {
			return nil, err
		}
		i, err := readImage(img, v1.Descriptor{})
		if err != nil {
			return nil, err
		}
		imgs = []image{i}
	}
	read := make([]registryImage, len(imgs))
	for i, img := range imgs {
		read[i] = registryImage{Platform: img.platform, DiffIDs: img.config.RootFS.DiffIDs, Layers: img.manifest.Layers}
	}
	return read, nil
}

// registryBasesFile is where v keeps what a base's registry said of it.
func (v Cache) registryBasesFile(h v1.Hash) string {
	return filepath.Join(v.Dir, "bases", h.Algorithm+"-"+h.Hex+".json")
}

// exportedBasesFile is where v keeps the base h as normalize found it in the engine's export of it, the first time (keepExported): on an
// engine that pulled the base since it last started, its export holds the
// registry's layers, tar for tar (tests/engine-facts.md, fact 52).
func (v Cache) exportedBasesFile(h v1.Hash) string {
	return filepath.Join(v.Dir, "bases", h.Algorithm+"-"+h.Hex+".exported.json")
}

// basesIn is the base kept in file (registryBasesFile, exportedBasesFile).
func (v Cache) basesIn(file string) ([]registryImage, bool) {
	if v.Dir == "" {
		return nil, false
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	var read []registryImage
	if json.Unmarshal(data, &read) != nil || len(read) == 0 {
		return nil, false
	}
	return read, true
}

// keepBases keeps a base in file (registryBasesFile, exportedBasesFile).
func (v Cache) keepBases(file string, read []registryImage) {
	if v.Dir == "" {
		return
	}
	data, err := json.Marshal(read)
	if err != nil {
		return
	}
	v.keep(file, bytes.NewReader(data))
}

// registryFailureFile is where v keeps why the base h could not be read
// from the repository repo (registry/path), and when (the file's time).
// What a registry said of a digest holds wherever it is read; that one
// could not be read says nothing of another holding the same image (a
// mirror of Docker Hub's, say).
func (v Cache) registryFailureFile(h v1.Hash, repo string) string {
	at := sha256.Sum256([]byte(repo))
	return filepath.Join(v.Dir, "bases", h.Algorithm+"-"+h.Hex+"-"+hex.EncodeToString(at[:8])+".failed")
}

// registryFailure is why the base's registry could not be read, and how
// long ago, when that is less than baseRetryAfter.
func (v Cache) registryFailure(h v1.Hash, repo string) (string, time.Duration, bool) {
	if v.Dir == "" {
		return "", 0, false
	}
	f := v.registryFailureFile(h, repo)
	info, err := os.Stat(f)
	if err != nil {
		return "", 0, false
	}
	ago := time.Since(info.ModTime())
	if ago > baseRetryAfter || ago < 0 {
		return "", 0, false
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return "", 0, false
	}
	return string(data), ago, true
}

// keepRegistryFailure keeps why the base's registry could not be read: an
// anonymous read's error, no secret in it.
func (v Cache) keepRegistryFailure(h v1.Hash, repo string, err error) {
	if v.Dir == "" {
		return
	}
	v.keep(v.registryFailureFile(h, repo), strings.NewReader(fielderr.Cut(err.Error(), 300)))
}

// baseRegistry is where a base image is read from: its metadata
// (RegistryBases) and its layers (path).
type baseRegistry struct {
	repo name.Repository
	v    Cache
}

// path is a file holding the tar of the base's layer d (diff ID diffID):
// the canonical blob v keeps of it, else its own blob, fetched into the
// layout in dir unless there and checked against its digest, then
// re-encoded and kept (reencode), so an engine fetches a base's layer once,
// whether or not it takes a remade layer's place.
func (b *baseRegistry) path(ctx context.Context, dir string, d v1.Descriptor, diffID v1.Hash) (string, error) {
	kept := b.v.reencodedFile(d.Digest)
	if b.v.Dir != "" && fileExists(kept) {
		return kept, nil
	}
	if err := b.fetch(ctx, dir, d); err != nil {
		return "", err
	}
	if _, err := reencode(dir, d, diffID, b.v); err != nil {
		return "", err
	}
	if b.v.Dir != "" && fileExists(kept) {
		return kept, nil
	}
	return blobPath(dir, d.Digest), nil
}

// fetch brings the base's layer d into the layout in dir, checked against
// its digest, unless it is there.
func (b *baseRegistry) fetch(ctx context.Context, dir string, d v1.Descriptor) error {
	if fileExists(blobPath(dir, d.Digest)) {
		return nil
	}
	l, err := remote.Layer(b.repo.Digest(d.Digest.String()), remote.WithContext(ctx), remote.WithTransport(boundedAnswers{RoundTripper: remote.DefaultTransport, blobs: true}))
	if err != nil {
		return err
	}
	rc, err := l.Compressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	w, err := newBlobWriter(dir)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, io.LimitReader(rc, d.Size+1)); err != nil {
		w.abort()
		return err
	}
	got, err := w.commit(d.MediaType)
	if err != nil {
		return err
	}
	if got.Digest != d.Digest {
		os.Remove(blobPath(dir, got.Digest))
		return fmt.Errorf("the registry sent %s for %s", short(got.Digest), short(d.Digest))
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
