package fakehost

import (
	"fmt"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fstree"
)

// writeDriver writes the driver's files and the ld.so.cache; it also sets
// h.LibDir, h.Lib32Dir and h.CUDAVersion.
func writeDriver(h *Host, o Options) error {
	t, err := newDriverTree(o.DriverVersion, o.Layout)
	if err != nil {
		return fmt.Errorf("writing driver files: %w", err)
	}
	if err := fstree.Build(h.Root, t.files, nil); err != nil {
		return fmt.Errorf("writing driver files: %w", err)
	}
	if err := writeCache(h.Root); err != nil {
		return err
	}
	if err := makeStale(h.Root, t.stale); err != nil {
		return err
	}
	h.LibDir, h.Lib32Dir = "/"+t.layout.lib64, "/"+t.layout.lib32
	h.CUDAVersion = cudaVersion(h.NVML)
	return nil
}

// driverTree is everything writeDriver creates.
type driverTree struct {
	layout layout
	files  []fstree.Entry
	stale  []fstree.Entry // replace files once the cache is written
}

func newDriverTree(ver string, lay Layout) (*driverTree, error) {
	t := &driverTree{layout: newLayout(lay)}
	d := newDecoys(ver, t.layout)
	libs := append(driverLibFiles(ver, t.layout.lib64, t.layout.lib32), d.libs...)
	t.files = append(t.files, t.layout.base...)
	for _, f := range libs {
		es, err := f.entries()
		if err != nil {
			return nil, fmt.Errorf("library %s: %w", f.file, err)
		}
		t.files = append(t.files, es...)
	}
	if err := t.addExtras(ver, decoyVersion(ver), lay); err != nil {
		return nil, err
	}
	t.stale = d.stale
	return t, nil
}

func (t *driverTree) addExtras(ver, old string, lay Layout) error {
	bins, err := binaries()
	if err != nil {
		return fmt.Errorf("binaries: %w", err)
	}
	xorg, err := xorgModules(ver, lay)
	if err != nil {
		return fmt.Errorf("xorg modules: %w", err)
	}
	t.files = append(t.files, bins...)
	t.files = append(t.files, xorg...)
	t.files = append(t.files, firmware(ver, old)...)
	t.files = append(t.files, ipcs()...)
	t.files = append(t.files, configs()...)
	egl, err := eglPlatformFiles(t.layout.lib64)
	if err != nil {
		return fmt.Errorf("EGL platform libraries: %w", err)
	}
	t.files = append(t.files, egl...)
	return nil
}

// cudaVersion formats NVML's CUDA driver version (12040) as "12.4"; empty
// when NVML cannot tell.
func cudaVersion(n devices.NVMLInterface) string {
	if n == nil {
		return ""
	}
	v, err := n.SystemCUDADriverVersion()
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}
