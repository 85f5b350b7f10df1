package ocipublish

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// An engine restarted on its state exports a base it pulled before, and
// every image built on it, with layers remade from the unpacked files:
// other tars, so other digests than a fresh engine gives (tests/engine-facts.md,
// fact 48). Until the restart it exports the layers as pulled (fact 52).
// So the first publish on a base keeps what the engine exported of it then
// (keepFirstExports): each platform's diff IDs and layers, whose canonical
// blobs normalize keeps anyway (reencode). A later publish takes that as
// the base (firstExports), and puts a kept layer in the place of a remade
// copy with the same files (Base.rebase).

// firstExports are the bases kept for the base ref (pinned by the digest
// the engine resolved it to: Container.imageRef), one per platform; none
// for a ref without a digest or nothing kept.
func (v Cache) firstExports(ref string) []Base {
	kept, _ := v.keptBases(v.firstExportFile(ref))
	return slices.DeleteFunc(kept, func(b Base) bool { return !v.holdsBlobsOf(b) })
}

// holdsBlobsOf reports whether v holds the canonical blob of each of b's
// first exported layers, which a module built by another Go release does
// not (encoder), nor a cache that could not write them.
func (v Cache) holdsBlobsOf(b Base) bool {
	return !slices.ContainsFunc(b.FirstExport, func(l v1.Descriptor) bool { return !fileExists(v.reencodedFile(l.Digest)) })
}

// exportedIn is the base of each image of imgs that holds it whole (every
// layer of it, by diff ID) among read (bases read from the engine's export
// now), named by the image's own blobs, whose canonical blobs normalize
// keeps (reencode): what keepFirstExports keeps.
func exportedIn(imgs []image, read []Base) []Base {
	var found []Base
	for _, img := range imgs {
		b := baseFor(read, img.platform)
		if b != nil && len(b.DiffIDs) > 0 && keptOf(img.config, b) == len(b.DiffIDs) {
			found = append(found, Base{Platform: b.Platform, DiffIDs: b.DiffIDs, FirstExport: slices.Clone(img.manifest.Layers[:len(b.DiffIDs)])})
		}
	}
	return found
}

// keepFirstExports keeps found (exportedIn) for the base ref, each whose
// canonical blobs v holds, for each platform none is kept for. One kept
// whose blobs are gone stays: the next publish on an engine that exports
// the base as pulled writes them again.
func (v Cache) keepFirstExports(ref string, found []Base) {
	file := v.firstExportFile(ref)
	if file == "" || len(found) == 0 {
		return
	}
	defer v.lock(file)() // publishes beside each other add their platforms in turn
	kept, ok := v.keptBases(file)
	if !ok && fileExists(file) {
		return // not read, so not written over
	}
	all := slices.Clone(kept)
	for _, f := range found {
		if v.holdsBlobsOf(f) && !slices.ContainsFunc(all, func(k Base) bool {
			return samePlatform(k.Platform, f.Platform) || k.Platform == nil && f.Platform == nil
		}) {
			all = append(all, f)
		}
	}
	if len(all) == len(kept) {
		return
	}
	if data, err := json.Marshal(all); err == nil {
		v.keep(file, bytes.NewReader(data))
	}
}

// firstExportFile is where v keeps the base ref as the engine first
// exported it, by its digest; "" for no cache or no digest.
func (v Cache) firstExportFile(ref string) string {
	_, digest, _ := strings.Cut(ref, "@")
	h, err := v1.NewHash(digest)
	if v.Dir == "" || err != nil {
		return ""
	}
	return filepath.Join(v.Dir, "bases", h.Algorithm+"-"+h.Hex+".exported.json")
}

// keptBases is what file holds, and whether it could be read.
func (v Cache) keptBases(file string) ([]Base, bool) {
	if file == "" {
		return nil, false
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	var kept []Base
	if json.Unmarshal(data, &kept) != nil || len(kept) == 0 {
		return nil, false
	}
	return kept, true
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
