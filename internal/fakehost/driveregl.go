package fakehost

import (
	"debug/elf"

	"github.com/go-nvc/nvc/internal/fstree"
)

// eglPlatformLibs are the EGL external platform libraries a 550-series
// runfile installs beside the driver's, with versions of their own (not
// the driver's): the ones its platform files in configs() name.
var eglPlatformLibs = []struct{ file, soname string }{
	{"libnvidia-egl-gbm.so.1.1.1", "libnvidia-egl-gbm.so.1"},
	{"libnvidia-egl-wayland.so.1.1.13", "libnvidia-egl-wayland.so.1"},
}

// eglPlatformFiles returns the EGL platform libraries, 64-bit, in dir
// with their SONAME links.
func eglPlatformFiles(dir string) ([]fstree.Entry, error) {
	var es []fstree.Entry
	for _, l := range eglPlatformLibs {
		f := libFile{dir: dir, file: l.file, links: []string{l.soname},
			obj: libObject(l.soname, elf.ELFCLASS64, nil)}
		e, err := f.entries()
		if err != nil {
			return nil, err
		}
		es = append(es, e...)
	}
	return es, nil
}
