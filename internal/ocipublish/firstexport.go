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

// An engine restarted on its state exports a base it pulled before with
// layers remade from the unpacked files: other digests than a fresh engine's
// (tests/engine-facts.md, fact 48); until then, as pulled (fact 52). So the
// first publish on a base keeps what the engine exported of it, and a later
// one puts those layers in place of remade copies (Base.rebase).

// firstExports are the bases kept for the pinned base ref, one per
// platform, each whose canonical blobs v holds.
func (v Cache) firstExports(ref string) []Base {
	kept, _ := v.keptBases(v.firstExportFile(ref))
	return slices.DeleteFunc(kept, func(b Base) bool { return !v.holdsBlobsOf(b) })
}

// holdsBlobsOf reports whether v holds the canonical blob of each of b's
// layers, which another Go release's module does not write (encoder).
func (v Cache) holdsBlobsOf(b Base) bool {
	return !slices.ContainsFunc(b.FirstExport, func(l v1.Descriptor) bool { return !fileExists(v.reencodedFile(l.Digest)) })
}

// exportedIn is each base of read (the engine's export now) that an image
// of imgs holds whole, named by the image's blobs: what
// keepFirstExports keeps.
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

// keepFirstExports keeps found (exportedIn) for the base ref, for each
// platform none is kept for, once normalize wrote its canonical blobs.
func (v Cache) keepFirstExports(ref string, found []Base) {
	file := v.firstExportFile(ref)
	if file == "" || len(found) == 0 {
		return
	}
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

// firstExportFile is where v keeps the base ref's first export, by its
// digest; "" for no cache or no digest.
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
