package driver

import (
	"debug/elf"
	"fmt"
	"path"
	"time"

	"github.com/go-nvc/nvc/capabilities"
)

// Files returns the host files caps needs:
//   - libraries of each class in caps.Expand() (video brings compute's,
//     display brings graphics'), selected from the ld.so.cache by
//     libnvidia-container's rules, and their 32-bit copies with Compat32;
//   - utility binaries with Utility, MPS binaries with Compute, found in
//     Options.Path inside the root;
//   - the persistenced and fabric manager sockets with Utility, the MPS pipe
//     dir with (expanded) Compute;
//   - the GSP firmware of the driver version, whatever caps holds;
//   - with (expanded) Graphics, the EGL external platform libraries the
//     NVIDIA Container Toolkit adds (libnvidia-egl-{gbm,wayland,wayland2,
//     xcb,xlib}.so.*.*, versioned apart from the driver; native only,
//     after the other libraries, no warning when missing);
//   - graphics configuration files with (expanded) Graphics — an EGL
//     external platform file only with the library it names —, the OpenCL
//     ICD file with (expanded) Compute, X configuration and modules with
//     Display.
//
// An empty caps means no class (see package capabilities): only the GSP
// firmware.
//
// A file a class needs that is missing, or that cannot be resolved inside
// the root or read, is left out with a Warning. Files fails only when the
// driver root itself cannot be opened.
//
// Every call looks at the files again. What it read inside a library (its
// ELF headers) is kept by the Driver, keyed by device, inode, size and
// times, so a later call only stats files it saw before.
// Symlinks and missing names are also kept by directory: while a
// directory's ctime is unchanged (and was at least a second old when they
// were looked up), a later call stats the directory once instead of each
// of them. A mount made over a name in a directory changes no ctime and
// is seen only once the directory changes.
func (d *Driver) Files(caps capabilities.Set) (*Files, error) {
	r, err := openRoot(d.root)
	if err != nil {
		return nil, fmt.Errorf("looking up driver files in %s: %w", d.root, err)
	}
	defer r.close()
	r.linkedDirs = &d.linkedDirs
	r.memo = &memos{shared: &d.dirMemo, start: time.Now()}
	fs := d.filesIn(r, caps)
	r.memo.publish()
	return fs, nil
}

func (d *Driver) filesIn(r *rootDir, caps capabilities.Set) *Files {
	l := &lookup{d: d, r: r, fs: &Files{}}
	exp := caps.Expand()
	l.libraries(exp, caps.Has(capabilities.Compat32))
	l.binaries(caps)
	l.ipcs(exp)
	if !d.opts.NoGSPFirmware && !d.wsl {
		l.firmware()
	}
	l.configs(exp)
	if d.wsl {
		l.driverStore()
	}
	return l.fs
}

// lookup is one Files call.
type lookup struct {
	d  *Driver
	r  *rootDir
	fs *Files
	// platformLibs are the EGL platform libraries found (list names).
	platformLibs []string
}

func (l *lookup) warn(k Kind, name string) {
	l.fs.Warnings = append(l.fs.Warnings, Warning{Kind: k, Name: name})
}

func (l *lookup) file(k Kind, name string, res resolved, containerPath string) File {
	return File{Kind: k, Name: name, Path: res.path, HostPath: l.hostPath(res.path), ContainerPath: containerPath}
}

// hostPath joins the driver root (absolute, clean) and a resolved path
// (absolute, clean, inside the root), as filepath.Join would.
func (l *lookup) hostPath(p string) string {
	switch {
	case l.d.root == "/":
		return p
	case p == "/":
		return l.d.root
	}
	return l.d.root + p
}

func (l *lookup) libraries(caps capabilities.Set, compat32 bool) {
	names := l.d.libraryNames(caps)
	l.fs.Libraries = l.selectAll(names, l.d.native, nativeClass(l.d.opts.GOARCH), Library)
	if caps.Has(capabilities.Graphics) {
		l.eglPlatformLibraries()
	}
	if compat32 {
		l.fs.Libraries32 = l.selectAll(names, l.d.compat32, elf.ELFCLASS32, Library32)
	}
	if l.d.opts.ToolkitLibraries {
		l.toolkitLibraries(caps, compat32)
	}
}

// eglPlatformLibraries adds the native EGL platform libraries the cache
// has, after the others, as the toolkit mounts them: no 32-bit copies, and
// no warning for a missing one (libnvidia-container looks for none).
func (l *lookup) eglPlatformLibraries() {
	s := &selector{r: l.r, memo: &l.d.elfMemo, d: l.d, class: nativeClass(l.d.opts.GOARCH), ownVersion: true}
	for _, name := range eglPlatformLibs {
		if c, ok := s.selectLibrary(name, l.d.native[name]); ok {
			f := l.file(Library, name, c.res, c.res.path)
			f.Soname = c.soname
			l.fs.Libraries = append(l.fs.Libraries, f)
			l.platformLibs = append(l.platformLibs, name)
		}
	}
}

// selectAll selects a library for each name from idx (nil when the
// architecture has no 32-bit ABI: every name is then missing).
func (l *lookup) selectAll(names []string, idx cacheIndex, class elf.Class, k Kind) []File {
	s := &selector{r: l.r, memo: &l.d.elfMemo, d: l.d, version: l.d.version.NVRM, class: class, wsl: l.d.wsl}
	var out []File
	for _, name := range names {
		c, ok := s.selectLibrary(name, idx[name])
		if !ok && idx != nil {
			c, ok = s.selectLibrary(name, l.searchCandidates(name))
		}
		if !ok {
			l.warn(k, name)
			continue
		}
		f := l.file(k, name, c.res, c.res.path)
		f.Soname = c.soname
		out = append(out, f)
	}
	return out
}

// searchCandidates are name's versioned file in each of
// Options.LibrarySearchPaths, for a library the cache did not give.
func (l *lookup) searchCandidates(name string) []string {
	var out []string
	for _, dir := range l.d.opts.LibrarySearchPaths {
		out = append(out, path.Join("/", dir, name+"."+l.d.version.NVRM))
	}
	return out
}

// nativeClass is the ELF class of goarch's native libraries.
func nativeClass(goarch string) elf.Class {
	switch goarch {
	case "386", "arm", "mips", "mipsle", "ppc", "riscv", "wasm":
		return elf.ELFCLASS32
	}
	return elf.ELFCLASS64
}

// binaries finds each binary in the first PATH dir that has it (on WSL,
// the driver store dirs come first).
func (l *lookup) binaries(caps capabilities.Set) {
	names := l.d.binaryNames(caps)
	found := make(map[string]resolved, len(names))
	for _, dir := range l.binDirs() {
		if len(found) == len(names) {
			break
		}
		if _, err := l.r.dir(dir); err != nil {
			continue
		}
		for _, name := range names {
			if _, ok := found[name]; ok {
				continue
			}
			if res, err := l.r.resolve(path.Join(dir, name)); err == nil && !isDir(res.mode) {
				found[name] = res
			}
		}
	}
	for _, name := range names {
		res, ok := found[name]
		if !ok {
			l.warn(Binary, name)
			continue
		}
		l.fs.Binaries = append(l.fs.Binaries, l.file(Binary, name, res, "/usr/bin/"+name))
	}
}

// ipcs finds the daemons' sockets (utility) and the MPS pipe dir (compute).
func (l *lookup) ipcs(caps capabilities.Set) {
	o := &l.d.opts
	var paths []string
	if caps.Has(capabilities.Utility) && !o.NoPersistenced {
		paths = append(paths, persistencedSocket)
	}
	if caps.Has(capabilities.Utility) && !o.NoFabricManager {
		paths = append(paths, fabricmanagerSock)
	}
	if caps.Has(capabilities.Compute) && !o.NoMPS {
		paths = append(paths, o.MPSPipeDir)
	}
	for _, p := range paths {
		res, err := l.r.resolve(p)
		if err != nil {
			l.warn(IPC, p)
			continue
		}
		l.fs.IPCs = append(l.fs.IPCs, l.file(IPC, p, res, res.path))
	}
}
