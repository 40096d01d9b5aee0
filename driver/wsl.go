package driver

import (
	"bufio"
	"bytes"
	"io"
	"path"
	"slices"
	"strings"
)

// WSL2 keeps the NVIDIA driver in the Windows driver store, which it shows
// under /usr/lib/wsl/drivers, one dir per driver package
// (nv_dispi.inf_amd64_<hash>); /usr/lib/wsl/lib holds libdxcore.so and
// the loader stubs. There is no /proc/driver/nvidia and no /dev/nvidia*:
// every GPU is reached through /dev/dxg.
const (
	// wslStoreLibcuda marks the NVIDIA driver store dir, as the NVIDIA
	// Container Toolkit finds it among the adapters' driver stores.
	wslStoreLibcuda = "libcuda.so.1.1"
	// wslStoreINF is the driver package's setup file; its DriverVer line
	// carries the Windows driver version.
	wslStoreINF = "nv_dispi.inf"
)

// DriverStore is the kind of a file from the WSL driver store, mounted at
// its own path.
const DriverStore Kind = "driver-store"

// wslStoreFiles are the driver store files a WSL container needs, in the
// NVIDIA Container Toolkit's order (its wsl mode mounts them all, whatever
// the capabilities).
var wslStoreFiles = []string{
	"libcuda.so.1.1", "libcuda_loader.so", "libnvidia-ptxjitcompiler.so.1",
	"libnvidia-ml.so.1", "libnvidia-ml_loader.so", "libnvdxgdmal.so.1",
	"nvcubins.bin", "nvidia-smi",
}

// wslStoreExtras are the patterns of the other driver store files the
// toolkit mounts too.
var wslStoreExtras = []string{"*.so*", "*.bin", "*.dll"}

// WSLDriverStore returns the NVIDIA driver store dir, as a path inside the
// driver root ("/usr/lib/wsl/drivers/nv_dispi.inf_amd64_…"): the first dir
// of /usr/lib/wsl/drivers, by name, holding a regular libcuda.so.1.1.
// Empty off WSL or when no dir has one.
func (d *Driver) WSLDriverStore() string { return d.store }

// findDriverStore sets d.store on WSL.
func (d *Driver) findDriverStore() {
	r, err := openRoot(d.root)
	if err != nil {
		return
	}
	defer r.close()
	names, _ := r.readDir(wslDriverStore)
	slices.Sort(names)
	for _, n := range names {
		dir := path.Join(wslDriverStore, n)
		if res, err := r.resolve(path.Join(dir, wslStoreLibcuda)); err == nil && isReg(res.mode) {
			d.store = dir
			return
		}
	}
}

// storeVersion reads the NVRM version from the driver store's
// nv_dispi.inf: its "DriverVer = 03/07/2024,31.0.15.5186" line is the
// Windows version, whose last five digits are NVIDIA's (551.86).
func (d *Driver) storeVersion() (string, bool) {
	if d.store == "" {
		return "", false
	}
	r, err := openRoot(d.root)
	if err != nil {
		return "", false
	}
	defer r.close()
	res, err := r.resolve(path.Join(d.store, wslStoreINF))
	if err != nil {
		return "", false
	}
	f, err := r.openFile(res)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, 0, min(res.size, 1<<20)))
	if err != nil {
		return "", false
	}
	return parseDriverVer(b)
}

// parseDriverVer finds the DriverVer line of an INF file and turns its
// Windows version (31.0.15.5186) into NVIDIA's (551.86).
func parseDriverVer(b []byte) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "DriverVer") {
			continue
		}
		_, win, ok := strings.Cut(v, ",")
		parts := strings.Split(strings.TrimSpace(win), ".")
		if !ok || len(parts) != 4 || !isVersion(strings.Join(parts, ".")) {
			return "", false
		}
		digits := parts[2] + parts[3]
		if len(digits) < 5 {
			return "", false
		}
		digits = digits[len(digits)-5:]
		major := strings.TrimLeft(digits[:3], "0")
		if major == "" {
			return "", false
		}
		return major + "." + digits[3:], true
	}
	return "", false
}

// driverStore lists the driver store files: the toolkit's list first, then
// the store's other libraries, .bin and .dll files, by name. A listed file
// that is missing is a warning.
func (l *lookup) driverStore() {
	store := l.d.store
	if store == "" {
		l.warn(DriverStore, path.Join(wslDriverStore, "*", wslStoreLibcuda))
		return
	}
	for _, n := range wslStoreFiles {
		if !l.storeFile(n) {
			l.warn(DriverStore, path.Join(store, n))
		}
	}
	names, _ := l.r.readDir(store)
	slices.Sort(names)
	for _, n := range names {
		if slices.Contains(wslStoreFiles, n) || !matchesAny(n, wslStoreExtras) {
			continue
		}
		l.storeFile(n)
	}
}

// storeFile adds the regular file name of the driver store; a symlink is
// not followed out of the store.
func (l *lookup) storeFile(name string) bool {
	p := path.Join(l.d.store, name)
	res, err := l.r.resolve(p)
	if err != nil || !isReg(res.mode) || res.path != p {
		return false
	}
	f := l.file(DriverStore, name, res, p)
	if strings.Contains(name, ".so") {
		s := &selector{r: l.r, memo: &l.d.elfMemo, d: l.d}
		info, _ := s.readELF(res)
		f.Soname = info.soname
	}
	l.fs.DriverStore = append(l.fs.DriverStore, f)
	return true
}

func matchesAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
