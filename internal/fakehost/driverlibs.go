package fakehost

import (
	"debug/elf"
	"path"
	"strings"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/fstree"
)

// libSpec is one driver library as an NVIDIA install leaves it.
type libSpec struct {
	// name is the list name libnvidia-container matches ("libcuda.so").
	name string
	// soname is the DT_SONAME; empty means the versioned file name itself
	// (libnvidia-glcore.so.<ver>), in which case there is no SONAME link.
	soname string
	// dev adds the "<name>" development link to the SONAME link.
	dev bool
	// lib32 adds an i386 copy in the 32-bit dir.
	lib32 bool
	// subdir puts the library in a subdirectory of the library dir that
	// ld.so.conf does not list (vdpau/), so the cache never holds it.
	subdir string
	// needs are DT_NEEDED names; "%v" stands for the driver version.
	needs []string
	// tls marks libnvidia-tls: it carries the 2.3.99 ABI note.
	tls bool
}

// driverLibs is every library of libnvidia-container's lists (utility,
// compute, ngx, video, graphics, GLVND, non-GLVND compat GL), with the
// SONAMEs and links of a 550-series runfile install. Libraries that later
// drivers dropped (fatbinaryloader, compiler, ifr, cbl) or that arrived later
// (tileiras) are generated too, so every list name has a file.
var driverLibs = []libSpec{
	// utility
	{name: "libnvidia-ml.so", soname: "libnvidia-ml.so.1", dev: true, lib32: true},
	{name: "libnvidia-cfg.so", soname: "libnvidia-cfg.so.1", dev: true},
	{name: "libnvidia-nscq.so", soname: "libnvidia-nscq.so.2"},
	// compute
	{name: "libcuda.so", soname: "libcuda.so.1", dev: true, lib32: true},
	{name: "libcudadebugger.so", soname: "libcudadebugger.so.1"},
	{name: "libnvidia-opencl.so", soname: "libnvidia-opencl.so.1", lib32: true},
	{name: "libnvidia-gpucomp.so", lib32: true},
	{name: "libnvidia-ptxjitcompiler.so", soname: "libnvidia-ptxjitcompiler.so.1", dev: true, lib32: true},
	{name: "libnvidia-fatbinaryloader.so", lib32: true},
	{name: "libnvidia-allocator.so", soname: "libnvidia-allocator.so.1", dev: true, lib32: true},
	{name: "libnvidia-compiler.so", lib32: true},
	{name: "libnvidia-pkcs11.so"},
	{name: "libnvidia-pkcs11-openssl3.so"},
	{name: "libnvidia-nvvm.so", soname: "libnvidia-nvvm.so.4", dev: true},
	{name: "libnvidia-tileiras.so"},
	// ngx
	{name: "libnvidia-ngx.so", soname: "libnvidia-ngx.so.1"},
	// video
	{name: "libvdpau_nvidia.so", soname: "libvdpau_nvidia.so.1", dev: true, lib32: true, subdir: "vdpau"},
	{name: "libnvidia-encode.so", soname: "libnvidia-encode.so.1", dev: true, lib32: true},
	{name: "libnvidia-opticalflow.so", soname: "libnvidia-opticalflow.so.1", lib32: true},
	{name: "libnvcuvid.so", soname: "libnvcuvid.so.1", dev: true, lib32: true},
	// graphics
	{name: "libnvidia-eglcore.so", lib32: true},
	{name: "libnvidia-glcore.so", lib32: true},
	{name: "libnvidia-tls.so", lib32: true, tls: true},
	{name: "libnvidia-glsi.so", lib32: true},
	{name: "libnvidia-fbc.so", soname: "libnvidia-fbc.so.1", dev: true, lib32: true},
	{name: "libnvidia-ifr.so", soname: "libnvidia-ifr.so.1", dev: true, lib32: true},
	{name: "libnvidia-rtcore.so"},
	{name: "libnvoptix.so", soname: "libnvoptix.so.1"},
	// graphics, GLVND vendor libraries
	{name: "libGLX_nvidia.so", soname: "libGLX_nvidia.so.0", lib32: true},
	{name: "libEGL_nvidia.so", soname: "libEGL_nvidia.so.0", lib32: true},
	{name: "libGLESv2_nvidia.so", soname: "libGLESv2_nvidia.so.2", lib32: true},
	{name: "libGLESv1_CM_nvidia.so", soname: "libGLESv1_CM_nvidia.so.1", lib32: true},
	{name: "libnvidia-glvkspirv.so", lib32: true},
	{name: "libnvidia-cbl.so"},
	// graphics, non-GLVND compat libraries: NVIDIA's own, so they need
	// the driver's GL or EGL core.
	{name: "libGL.so", soname: "libGL.so.1", dev: true, lib32: true,
		needs: []string{"libnvidia-tls.so.%v", "libnvidia-glcore.so.%v"}},
	{name: "libEGL.so", soname: "libEGL.so.1", dev: true, lib32: true,
		needs: []string{"libnvidia-glsi.so.%v", "libnvidia-eglcore.so.%v"}},
	{name: "libGLESv1_CM.so", soname: "libGLESv1_CM.so.1", dev: true, lib32: true,
		needs: []string{"libnvidia-eglcore.so.%v"}},
	{name: "libGLESv2.so", soname: "libGLESv2.so.2", dev: true, lib32: true,
		needs: []string{"libnvidia-eglcore.so.%v"}},
}

// libFile is one library file placed in a directory, with its links.
type libFile struct {
	dir   string   // physical dir, slash-separated, relative to the root
	file  string   // file name (libcuda.so.550.54.15)
	links []string // symlink names in dir pointing at the chain (SONAME, dev)
	obj   *elfwriter.Object
}

// entries returns the fstree entries that create f and its links.
func (f libFile) entries() ([]fstree.Entry, error) {
	b, err := f.obj.Bytes()
	if err != nil {
		return nil, err
	}
	es := []fstree.Entry{{Kind: fstree.File, Path: path.Join(f.dir, f.file), Mode: 0o644, Content: b}}
	target := f.file
	for _, l := range f.links {
		es = append(es, fstree.Entry{Kind: fstree.Symlink, Path: path.Join(f.dir, l), Target: target})
		target = l
	}
	return es, nil
}

// driverLib returns the file spec s gives at version ver in dir.
func driverLib(s libSpec, ver, dir string, class elf.Class) libFile {
	f := libFile{dir: path.Join(dir, s.subdir), file: s.name + "." + ver}
	soname := s.soname
	if soname == "" {
		soname = f.file
	} else {
		f.links = append(f.links, soname)
	}
	if s.dev {
		f.links = append(f.links, s.name)
	}
	f.obj = libObject(soname, class, expand(s.needs, ver))
	if s.tls {
		f.obj.ABITag = &elfwriter.ABITag{Major: 2, Minor: 3, Patch: 99}
	}
	return f
}

// libObject returns a shared object of class; every library needs libc.so.6,
// which is what makes glibc's ldconfig mark an i386 library "libc6".
func libObject(soname string, class elf.Class, needs []string) *elfwriter.Object {
	o := &elfwriter.Object{Soname: soname, Needed: append(needs, "libc.so.6")}
	if class == elf.ELFCLASS32 {
		o.Class, o.Machine = elf.ELFCLASS32, elf.EM_386
	}
	return o
}

func expand(needs []string, ver string) []string {
	out := make([]string, len(needs))
	for i, n := range needs {
		out[i] = strings.ReplaceAll(n, "%v", ver)
	}
	return out
}

// driverLibFiles returns the 64-bit libraries in dir64 and the 32-bit
// subset in dir32.
func driverLibFiles(ver, dir64, dir32 string) []libFile {
	var fs []libFile
	for _, s := range driverLibs {
		fs = append(fs, driverLib(s, ver, dir64, elf.ELFCLASS64))
	}
	for _, s := range driverLibs {
		if s.lib32 {
			fs = append(fs, driverLib(s, ver, dir32, elf.ELFCLASS32))
		}
	}
	return fs
}
