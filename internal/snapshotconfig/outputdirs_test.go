package snapshotconfig

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// twoEntries is a configuration of two entries writing a and b.
func twoEntries(a, b string) []byte { return entriesWriting(a, b) }

func entriesWriting(dirs ...string) []byte {
	var entries []string
	for i, dir := range dirs {
		d, _ := json.Marshal(dir)
		entries = append(entries, `{"snapshooter":{"name":"n`+string(rune('0'+i))+`","rootTags":["`+tag1+`"],"outputDir":`+string(d)+`}}`)
	}
	return []byte("[" + strings.Join(entries, ",") + "]")
}

// O1 (issue #65): two outputDirs that are one folder, or one inside the
// other, on a macOS or Windows checkout (`changes export --path .`) are
// refused, the error naming both entries; names that differ there too are
// kept apart.
func TestOutputDirsAreComparedAsACheckoutsFileSystemReadsThem(t *testing.T) {
	for _, tc := range []struct{ name, a, b string }{
		{"é composed and decomposed (macOS)", "caf\u00e9", "cafe\u0301"},
		{"letter case (macOS, Windows)", "Snapshot", "snapshot"},
		{"letter case in a parent folder", "a/Snap", "a/snap/x"},
		{"letter case beyond ASCII", "ÉTÉ", "été"},
		{"a long s folds to s", "ſnap", "snap"},
		{"a trailing dot (Windows)", "snap.", "snap"},
		{"a zero-width character (HFS+)", "sn\u200bap", "snap"},
		{"a full-width letter", "\uff53nap", "snap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(twoEntries(tc.a, tc.b))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "[1].snapshooter.outputDir: ")
			assert.Contains(t, err.Error(), "overlaps entry [0]'s "+quoteDir(tc.a))
			assert.Contains(t, err.Error(), quoteDir(tc.b))
			assert.Contains(t, err.Error(), "on a macOS or Windows checkout, where", "says why names that differ are one folder")
		})
	}
	for _, tc := range []struct{ name, a, b string }{
		{"an accent is not a letter case", "café", "cafe"},
		{"a sibling that starts the same", "Snap", "snap-x"},
		{"different letters", "snap", "snip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(twoEntries(tc.a, tc.b))
			assert.NoError(t, err)
		})
	}
}

func TestAnOverlapOfTheSameBytesDoesNotBlameTheFileSystem(t *testing.T) {
	_, err := Parse(twoEntries("snap", "snap/x"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `[1].snapshooter.outputDir: "snap/x" overlaps entry [0]'s "snap": each entry needs its own folder`)
}

func quoteDir(s string) string { return fielderr.Quote(s) }

// Whatever folder is accepted, the same folder spelt in other letter case
// or the other Unicode normalization form is one folder on a checkout: the
// two are refused together.
func FuzzOutputDirsSpeltTwoWaysOverlap(f *testing.F) {
	for _, s := range []string{"snapshot", "café", "a/Snap/ß", "ǅ/ﬁ", "x.y/z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		if _, err := Parse(entriesWriting(dir)); err != nil {
			return
		}
		for _, other := range []string{strings.ToUpper(dir), strings.ToLower(dir), norm.NFD.String(dir), norm.NFC.String(dir)} {
			if _, err := Parse(entriesWriting(other)); err != nil {
				continue
			}
			_, err := Parse(twoEntries(dir, other))
			require.Error(t, err, "%q and %q", dir, other)
			assert.Contains(t, err.Error(), "overlaps entry [0]'s", "%q and %q", dir, other)
		}
	})
}
