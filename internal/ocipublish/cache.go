package ocipublish

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Verdicts remembers, in a folder, whether a layer holds a time after an
// epoch: a function of the layer's digest and the epoch only, so a publish
// whose build changed reads its new layers, not the base image's again
// (reading a 232 MB layer takes 1.2 s on 2 cores: BenchmarkNormalizeRealBaseLayer);
// the blob a layer was re-encoded to (reencode), so a layer is compressed
// once; and the blobs a base's registry sent (registryBlobFile), so one is
// fetched once.
// The module keeps the folder in a cache volume. A zero Verdicts remembers
// nothing, and a verdict that cannot be written only loses the saving.
type Verdicts struct {
	Dir string
}

const (
	verdictLate = "late"
	verdictKept = "kept"
)

func (v Verdicts) file(layer v1.Hash, epoch time.Time) string {
	return filepath.Join(v.Dir, fmt.Sprintf("%d-%s-%s", epoch.Unix(), layer.Algorithm, layer.Hex))
}

// lookup is the remembered verdict of a layer, if any.
func (v Verdicts) lookup(layer v1.Hash, epoch time.Time) (late, known bool) {
	if v.Dir == "" {
		return false, false
	}
	data, err := os.ReadFile(v.file(layer, epoch))
	if err != nil {
		return false, false
	}
	switch string(data) {
	case verdictLate:
		return true, true
	case verdictKept:
		return false, true
	}
	return false, false
}

// record remembers a layer's verdict.
func (v Verdicts) record(layer v1.Hash, epoch time.Time, late bool) {
	if v.Dir == "" {
		return
	}
	verdict := verdictKept
	if late {
		verdict = verdictLate
	}
	v.keep(v.file(layer, epoch), strings.NewReader(verdict))
}

// keep writes what r holds to file in the folder, whole (a temporary file
// renamed) since concurrent publishes share the folder; what cannot be
// written only loses the saving.
func (v Verdicts) keep(file string, r io.Reader) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".new-*")
	if err != nil {
		return
	}
	_, err = io.Copy(tmp, r)
	if cerr := tmp.Close(); err == nil && cerr == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}
