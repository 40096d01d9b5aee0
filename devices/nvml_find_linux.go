package devices

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// nvmlLibDirs are where distributions install libnvidia-ml.so.1.
var nvmlLibDirs = []string{
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
	"/usr/lib", "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64", "/lib",
}

const nvmlSoname = "libnvidia-ml.so.1"

// findNVML opens the NVML library inside the driver root: NVMLLibrary, or
// libnvidia-ml.so.1 in the first of the usual library dirs that has it.
func findNVML(o *Options) (*os.File, error) {
	if o.NVMLLibrary != "" {
		return openInRoot(o.Roots.Driver, o.NVMLLibrary)
	}
	for _, d := range nvmlLibDirs {
		f, err := openInRoot(o.Roots.Driver, path.Join(d, nvmlSoname))
		if !errors.Is(err, fs.ErrNotExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("finding %s under %s (in %s): %w", nvmlSoname, o.Roots.Driver,
		strings.Join(nvmlLibDirs, ", "), fs.ErrNotExist)
}
