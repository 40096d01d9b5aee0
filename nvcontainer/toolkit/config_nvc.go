package toolkit

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/BurntSushi/toml"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
)

// HostRoots is the [nvc] table of config.toml, this module's own keys
// beside the toolkit's: where the host's procfs and /dev are when they are
// not /proc and <driver root>/dev — a driver installed in a chroot, a
// toolkit running in a container with the host mounted under /host, a
// simulated host in a test — and how GPUs are found. The toolkit ignores
// the table; this package's ParseConfig lists its keys in Config.Unknown.
//
//	[nvc]
//	proc-root = "/host/proc"
//	dev-root = "/host/dev"
//	sys-root = "/host/sys"
//	backend = "procfs"
type HostRoots struct {
	// Roots are the host's roots the table sets: Proc (proc-root) stands
	// for the host's /proc when GPUs are discovered and the driver
	// version is read (not for finding the container's process, which is
	// always in the running kernel's /proc), Dev (dev-root) for the
	// host's /dev, Sys (sys-root) for the host's /sys (PCI devices and
	// their DRM nodes, loaded modules). Driver and LDCache are not keys of the table: the
	// toolkit's [nvidia-container-cli] root and ldcache give them
	// (Config.CLI). Empty roots take driver.Roots.WithDefaults' defaults.
	Roots driver.Roots
	// Backend is "auto", "nvml" or "procfs" (see devices.Backend)
	// (backend). Empty: auto.
	Backend devices.Backend
}

// nvcTable is the [nvc] table as it is spelled in config.toml.
type nvcTable struct {
	ProcRoot string          `toml:"proc-root"`
	DevRoot  string          `toml:"dev-root"`
	SysRoot  string          `toml:"sys-root"`
	Backend  devices.Backend `toml:"backend"`
}

// ParseHostRoots reads the [nvc] table of a config.toml; a file without
// one gives the zero HostRoots (the defaults).
func ParseHostRoots(data []byte) (*HostRoots, error) {
	var doc struct {
		NVC nvcTable `toml:"nvc"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, fmt.Errorf("parsing [nvc] of config: %w", err)
	}
	t := doc.NVC
	switch t.Backend {
	case "", devices.Auto, devices.NVML, devices.Procfs:
		return &HostRoots{Roots: driver.Roots{Proc: t.ProcRoot, Dev: t.DevRoot, Sys: t.SysRoot}, Backend: t.Backend}, nil
	}
	return nil, fmt.Errorf("parsing [nvc] of config: backend %q is not auto, nvml or procfs: %w", t.Backend, ErrInvalidConfig)
}

// LoadHostRoots reads the [nvc] table of the config file at file (at most
// 1 MiB), as FindConfig returned its path; an empty path or a missing file
// gives the zero HostRoots.
func LoadHostRoots(file string) (*HostRoots, error) {
	if file == "" {
		return &HostRoots{}, nil
	}
	r, err := loadConfigFile(file, ParseHostRoots)
	if errors.Is(err, fs.ErrNotExist) {
		return &HostRoots{}, nil
	}
	return r, err
}
