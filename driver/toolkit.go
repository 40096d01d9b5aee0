package driver

import (
	"debug/elf"
	"path"
	"slices"

	"github.com/go-nvc/nvc/capabilities"
)

// The libraries Options.ToolkitLibraries adds, as the NVIDIA Container
// Toolkit's CDI discovery finds them and libnvidia-container does not.
const (
	// vdpauLib lives in the vdpau/ dir of the driver's library dir,
	// which no ld.so.conf lists, so the cache never has it.
	vdpauLib = "libvdpau_nvidia.so"
	vdpauDir = "vdpau"
	// nvvm70Lib (R575 and later, compute) is named libnvidia-nvvm70.so.4:
	// its name does not end in the driver version.
	nvvm70Lib = "libnvidia-nvvm70.so"
)

// toolkitLibs are indexed from the cache with the lists' names.
var toolkitLibs = []string{nvvm70Lib}

// toolkitLibraries adds, with ToolkitLibraries, what the toolkit finds
// outside libnvidia-container's rules: with video, libvdpau_nvidia.so.<version>
// from the vdpau/ dir of each dir the selected libraries are in (native,
// and 32-bit with compat32), when the cache gave none; with compute,
// libnvidia-nvvm70.so.* (native only, no warning when missing).
func (l *lookup) toolkitLibraries(caps capabilities.Set, compat32 bool) {
	if caps.Has(capabilities.Video) {
		l.fs.Libraries = l.vdpau(l.fs.Libraries, nativeClass(l.d.opts.GOARCH), Library)
		if compat32 {
			l.fs.Libraries32 = l.vdpau(l.fs.Libraries32, elf.ELFCLASS32, Library32)
		}
	}
	if caps.Has(capabilities.Compute) {
		s := &selector{r: l.r, memo: &l.d.elfMemo, d: l.d, class: nativeClass(l.d.opts.GOARCH), ownVersion: true, ownPattern: ".*"}
		if c, ok := s.selectLibrary(nvvm70Lib, l.d.native[nvvm70Lib]); ok {
			f := l.file(Library, nvvm70Lib, c.res, c.res.path)
			f.Soname = c.soname
			l.fs.Libraries = append(l.fs.Libraries, f)
		}
	}
}

// vdpau looks for libvdpau_nvidia.so.<version> in the vdpau/ dir of the
// dirs of libs, when libs lack it, and adds it (dropping its warning).
func (l *lookup) vdpau(libs []File, class elf.Class, k Kind) []File {
	if slices.ContainsFunc(libs, func(f File) bool { return f.Name == vdpauLib }) {
		return libs
	}
	var candidates []string
	for _, f := range libs {
		c := path.Join(path.Dir(f.Path), vdpauDir, vdpauLib+"."+l.d.version.NVRM)
		if !slices.Contains(candidates, c) {
			candidates = append(candidates, c)
		}
	}
	s := &selector{r: l.r, memo: &l.d.elfMemo, d: l.d, version: l.d.version.NVRM, class: class, wsl: l.d.wsl}
	c, ok := s.selectLibrary(vdpauLib, candidates)
	if !ok {
		return libs
	}
	f := l.file(k, vdpauLib, c.res, c.res.path)
	f.Soname = c.soname
	l.fs.Warnings = slices.DeleteFunc(l.fs.Warnings, func(w Warning) bool { return w.Kind == k && w.Name == vdpauLib })
	return append(libs, f)
}
