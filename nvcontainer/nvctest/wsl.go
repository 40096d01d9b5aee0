package nvctest

import (
	"fmt"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
)

// WSL is a simulated WSL2 guest: no /proc/driver/nvidia and no
// /dev/nvidia* nodes, but /dev/dxg, WSL's /usr/lib/wsl/lib (libdxcore.so,
// the libcuda.so stubs) listed in ld.so.conf, and the Windows driver store
// under /usr/lib/wsl/drivers: NVIDIA's package (libcuda.so.1.1, the
// loaders, nvcubins.bin, nvidia-smi, nv_dispi.inf) and another adapter's.
// Its Host has no NVML and no CUDA version; its driver version is
// WSLDriverVersion unless Options.DriverVersion says otherwise (NVIDIA's
// "MAJOR.MINOR" form, as 551.86). Options other than DriverVersion and
// RealNodes do not apply to it.
const WSL Machine = "wsl"

// WSLDriverVersion is the driver version of a WSL host whose Options
// leave it empty.
const WSLDriverVersion = fakehost.WSLDriverVersion

// WSLDriverStore is the NVIDIA driver store dir of a generated WSL host,
// as a path inside its driver root.
const WSLDriverStore = fakehost.WSLStoreDir

// generateWSL writes a WSL host into dir.
func generateWSL(dir string, opts *Options) (*Host, error) {
	wo := &fakehost.WSLOptions{}
	if opts != nil {
		wo.DriverVersion, wo.RealNodes = opts.DriverVersion, opts.RealNodes
	}
	fh, err := fakehost.GenerateWSL(dir, wo)
	if err != nil {
		return nil, fmt.Errorf("nvctest: %w", err)
	}
	roots := driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot, LDCache: driver.DefaultLDCache}
	return &Host{Machine: WSL, Roots: roots, LibDir: fh.LibDir, Lib32Dir: fh.Lib32Dir, DriverVersion: fh.DriverVersion}, nil
}
