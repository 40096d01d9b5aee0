//go:build !cgo

package devices

import (
	"errors"
	"os"
)

// canLoadNVML: a build without cgo cannot load libnvidia-ml.so.1.
const canLoadNVML = false

// errNoCgo is why a build without cgo has no NVML of its own: go-nvml,
// which loads libnvidia-ml.so.1, needs cgo.
var errNoCgo = errors.New("built without cgo: libnvidia-ml.so.1 cannot be loaded (inject Options.NVML, or use Backend Procfs)")

// loadedNVML stands for a loaded NVML library; a build without cgo never
// has one.
type loadedNVML struct{ api NVMLInterface }

func (l *loadedNVML) close() {}

// openNVML fails: see errNoCgo. Discover wraps the error in
// ErrNVMLUnavailable, so Auto discovers through procfs.
func openNVML(*Options) (*loadedNVML, error) {
	return nil, errNoCgo
}

func loadNVMLFile(f *os.File) (*loadedNVML, error) {
	f.Close()
	return nil, errNoCgo
}
