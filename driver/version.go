package driver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// VersionSource says where the driver version came from.
type VersionSource string

// The version sources, in the order Open tries them.
const (
	// FromNVML: nvmlSystemGetDriverVersion.
	FromNVML VersionSource = "nvml"
	// FromProcfs: the "NVRM version:" line of <proc>/driver/nvidia/version.
	FromProcfs VersionSource = "procfs"
	// FromDriverStore: the DriverVer line of nv_dispi.inf in the WSL
	// driver store (WSL has no /proc/driver/nvidia).
	FromDriverStore VersionSource = "driver-store"
	// FromLibrary: the file name libcuda.so.<version> (else
	// libnvidia-ml.so.<version>) that the ld.so.cache leads to.
	FromLibrary VersionSource = "library"
)

// Version is what the host driver says about its version.
type Version struct {
	// NVRM is the kernel module's version ("550.54.15"); the driver's
	// libraries carry it as their file name suffix.
	NVRM string `json:"nvrm"`
	// Source says where NVRM came from.
	Source VersionSource `json:"source"`
	// CUDA is the CUDA driver API version, "MAJOR.MINOR" ("12.4"). It
	// comes only from NVML; empty when unknown (see Driver.CUDAVersion).
	CUDA string `json:"cuda,omitempty"`
}

// findVersion sets d.version from NVML, else procfs, else (WSL) the
// driver store, else the cache.
func (d *Driver) findVersion() error {
	d.cudaErr = fmt.Errorf("%w: no NVML given", ErrUnknownCUDAVersion)
	var errs []error
	if d.opts.NVML != nil {
		err := d.versionFromNVML(d.opts.NVML)
		if err == nil {
			return nil
		}
		d.cudaErr = fmt.Errorf("%w: %w", ErrUnknownCUDAVersion, err)
		errs = append(errs, err)
	}
	v, err := procfsVersion(d.opts.Roots.Proc)
	if err == nil {
		d.version = Version{NVRM: v, Source: FromProcfs}
		return nil
	}
	errs = append(errs, err)
	if v, ok := d.storeVersion(); ok {
		d.version = Version{NVRM: v, Source: FromDriverStore}
		return nil
	} else if d.wsl {
		errs = append(errs, fmt.Errorf("no DriverVer in %s of an NVIDIA driver store dir (one of %s with %s)", wslStoreINF, wslDriverStore, wslStoreLibcuda))
	}
	if v, ok := d.libraryVersion(); ok {
		d.version = Version{NVRM: v, Source: FromLibrary}
		return nil
	}
	errs = append(errs, errors.New("no libcuda.so.<version> or libnvidia-ml.so.<version> in the cache"))
	return fmt.Errorf("opening driver in %s: %w: %w", d.root, ErrNoVersion, errors.Join(errs...))
}

// NVMLVersions is the part of NVML Open asks for the driver and CUDA
// versions, in plain Go types so that the package builds without cgo.
// devices.NVMLInterface has these methods, so one value serves Discover and
// Open (devices.NewNVMLFromGoNVML wraps go-nvml's nvml.Interface in a cgo
// build).
type NVMLVersions interface {
	Init() error
	Shutdown() error
	// SystemDriverVersion is the NVRM version, e.g. "550.54.15".
	SystemDriverVersion() (string, error)
	// SystemCUDADriverVersion is NVML's major*1000 + minor*10 (12040).
	SystemCUDADriverVersion() (int, error)
}

func (d *Driver) versionFromNVML(n NVMLVersions) error {
	if err := n.Init(); err != nil {
		return fmt.Errorf("initializing NVML: %v", err)
	}
	defer n.Shutdown()
	v, err := n.SystemDriverVersion()
	if err != nil {
		return fmt.Errorf("getting the driver version from NVML: %v", err)
	}
	d.version = Version{NVRM: v, Source: FromNVML}
	c, err := n.SystemCUDADriverVersion()
	if err != nil {
		d.cudaErr = fmt.Errorf("%w: NVML: %v", ErrUnknownCUDAVersion, err)
		return nil
	}
	d.version.CUDA = CUDAVersionFromNVML(c)
	return nil
}

// procfsVersion reads the NVRM version from <proc>/driver/nvidia/version,
// whose first line reads, for the proprietary and the open kernel modules:
//
//	NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024
//	NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (…)  Tue Mar  5 …
func procfsVersion(proc string) (string, error) {
	p := filepath.Join(proc, "driver/nvidia/version")
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	v, ok := parseNVRMLine(b)
	if !ok {
		return "", fmt.Errorf("reading %s: no NVRM version line in %q", p, firstLine(b))
	}
	return v, nil
}

func parseNVRMLine(b []byte) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "NVRM version:")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if isVersion(f) {
				return f, true
			}
		}
	}
	return "", false
}

// isVersion reports whether s is a dotted number of two parts or more.
func isVersion(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

func firstLine(b []byte) string {
	l, _, _ := bytes.Cut(b, []byte("\n"))
	return string(l)
}

// libraryVersion takes the version from the name of the file the first
// native libcuda.so entry leads to, else libnvidia-ml.so's: the library the
// dynamic loader would pick.
func (d *Driver) libraryVersion() (string, bool) {
	r, err := openRoot(d.root)
	if err != nil {
		return "", false
	}
	defer r.close()
	for _, name := range []string{"libcuda.so", "libnvidia-ml.so"} {
		for _, p := range d.native[name] {
			res, err := r.resolve(p)
			if err != nil {
				continue
			}
			if v, ok := strings.CutPrefix(path.Base(res.path), name+"."); ok && isVersion(v) {
				return v, true
			}
		}
	}
	return "", false
}
