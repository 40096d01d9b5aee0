package fakehost

import (
	"debug/elf"
	"path"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/fstree"
)

// Decoy driver versions: leftovers of another install. A host at decoyVer
// gets otherDecoyVer's leftovers instead.
const (
	decoyVer      = "535.161.08"
	otherDecoyVer = "550.54.15"
)

// decoyVersion returns the version of the leftovers on a host at ver.
func decoyVersion(ver string) string {
	if ver == decoyVer {
		return otherDecoyVer
	}
	return decoyVer
}

// decoys are files a correct library selection rejects.
type decoys struct {
	libs []libFile
	// stale are libraries that are replaced, once the cache is written,
	// by what replaces them: a text file and a directory.
	stale []fstree.Entry
}

// newDecoys returns, for a host at ver with layout l:
//   - GL/EGL core, GLSI and TLS libraries of the decoy version next to the
//     driver's (their SONAMEs carry the version, so the cache lists them);
//   - a 32-bit GL core of the decoy version;
//   - in the legacy dir (last in the cache): libcuda and libnvidia-ml of the
//     decoy version behind libcuda.so.1 and libnvidia-ml.so.1, and a
//     libnvidia-tls of the current version with the classic TLS ABI note
//     (2.2.5) instead of 2.3.99;
//   - a Mesa libGL.so.1 that does not need libnvidia-glcore;
//   - stale cache entries libnvidia-cfg.so.1 and libnvidia-fbc.so.1 in the
//     legacy dir: real libraries when the cache is built, then replaced by
//     a text file and a directory of the same names (libnvidia-cfg.so.<ver>,
//     libnvidia-fbc.so.<ver>), as a reinstall without ldconfig leaves them.
func newDecoys(ver string, l layout) decoys {
	old := decoyVersion(ver)
	var d decoys
	for _, name := range []string{"libnvidia-glcore.so", "libnvidia-eglcore.so", "libnvidia-glsi.so", "libnvidia-tls.so"} {
		d.libs = append(d.libs, driverLib(libSpec{name: name, tls: name == "libnvidia-tls.so"}, old, l.lib64, elf.ELFCLASS64))
	}
	d.libs = append(d.libs, driverLib(libSpec{name: "libnvidia-glcore.so"}, old, l.lib32, elf.ELFCLASS32))
	d.libs = append(d.libs,
		driverLib(libSpec{name: "libcuda.so", soname: "libcuda.so.1"}, old, legacyDir, elf.ELFCLASS64),
		driverLib(libSpec{name: "libnvidia-ml.so", soname: "libnvidia-ml.so.1"}, old, legacyDir, elf.ELFCLASS64),
		classicTLS(ver), mesaGL(l))
	for _, name := range []string{"libnvidia-cfg.so", "libnvidia-fbc.so"} {
		d.libs = append(d.libs, driverLib(libSpec{name: name, soname: name + ".1"}, ver, legacyDir, elf.ELFCLASS64))
	}
	d.stale = []fstree.Entry{
		{Kind: fstree.File, Path: path.Join(legacyDir, "libnvidia-cfg.so."+ver), Mode: 0o644, Content: []byte("partial download\n")},
		{Kind: fstree.Dir, Path: path.Join(legacyDir, "libnvidia-fbc.so."+ver), Mode: 0o755},
	}
	return d
}

// classicTLS is the pre-2.3.99 TLS flavour old drivers also shipped.
func classicTLS(ver string) libFile {
	f := driverLib(libSpec{name: "libnvidia-tls.so"}, ver, legacyDir, elf.ELFCLASS64)
	f.obj.ABITag = &elfwriter.ABITag{Major: 2, Minor: 2, Patch: 5}
	return f
}

func mesaGL(l layout) libFile {
	return libFile{
		dir: l.lib64 + "/" + mesaDir, file: "libGL.so.1.2.0",
		links: []string{"libGL.so.1"},
		obj:   libObject("libGL.so.1", elf.ELFCLASS64, []string{"libglapi.so.0", "libX11.so.6"}),
	}
}
