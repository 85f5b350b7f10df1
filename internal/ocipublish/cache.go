package ocipublish

import (
	"io"
	"os"
	"path/filepath"
)

// Cache is a folder kept between publishes (the module keeps it in a
// cache volume): the blob a layer was re-encoded to (reencode), so a layer
// is compressed once, and what the engine first exported of a base
// (firstexport.go). A zero Cache keeps nothing, and what cannot be written
// only loses the saving.
type Cache struct {
	Dir string
}

// keep writes what r holds to file in the folder, whole (a temporary file
// renamed) since concurrent publishes share the folder; what cannot be
// written only loses the saving.
func (v Cache) keep(file string, r io.Reader) {
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
