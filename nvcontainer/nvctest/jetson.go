package nvctest

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
)

// JetsonOrin is a simulated Jetson AGX Orin (JetPack 6, L4T R36.3.0): no
// procfs driver and no NVML, the GPU driver in
// /usr/lib/aarch64-linux-gnu/tegra, /dev/nvmap, /dev/nvhost-* and
// /dev/nvgpu/igpu0/*, /etc/nv_tegra_release and the CSV mount specs
// devices.csv, drivers.csv and (beyond the base files) tensorrt.csv in
// /etc/nvidia-container-runtime/host-files-for-container.d. The libraries
// are ELF objects of the machine running the test (at the aarch64 paths),
// so that its loader can load them. Options.RealNodes applies; the other
// options do not.
const JetsonOrin Machine = "jetson-orin"

// IsTegra reports whether m is a Jetson, whose containers are configured
// from CSV mount specs (package tegra) rather than from the driver.
func (m Machine) IsTegra() bool { return m == JetsonOrin }

// MountSpecDir is the host's CSV mount spec directory (a host path, inside
// the generated tree); empty for a machine that is not a Jetson.
func (h *Host) MountSpecDir() string {
	if !h.Machine.IsTegra() {
		return ""
	}
	return filepath.Join(h.Roots.Driver, fakehost.TegraSpecDir)
}

// generateJetson writes the Jetson m into dir.
func generateJetson(dir string, m Machine, o Options) (*Host, error) {
	th, err := fakehost.GenerateTegra(dir, &fakehost.TegraOptions{RealNodes: o.RealNodes})
	if err != nil {
		return nil, fmt.Errorf("nvctest: %w", err)
	}
	roots := driver.Roots{Driver: th.Root, Proc: th.ProcRoot, Dev: th.DevRoot, LDCache: driver.DefaultLDCache}
	return &Host{Machine: m, Roots: roots, LibDir: fakehost.TegraLibDir, DriverVersion: th.Release, CUDAVersion: th.CUDAVersion}, nil
}

// machineList is the machine names, comma-separated.
func machineList() string {
	var names []string
	for _, m := range Machines() {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}
