package toolkit

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/BurntSushi/toml"

	"github.com/go-nvc/nvc/devices"
)

// HostRoots is the [nvc] table of config.toml, this module's own keys
// beside the toolkit's: where the host's procfs and /dev are when they are
// not /proc and /dev — a driver installed in a chroot, a toolkit running
// in a container with the host mounted under /host, a simulated host in a
// test — and how GPUs are found. The toolkit ignores the table; this
// package's ParseConfig lists its keys in Config.Unknown.
//
//	[nvc]
//	proc-root = "/host/proc"
//	dev-root = "/host/dev"
//	backend = "procfs"
type HostRoots struct {
	// ProcRoot stands for the host's /proc when GPUs are discovered and the
	// driver version is read (not for finding the container's process,
	// which is always in the running kernel's /proc). Empty: "/proc".
	ProcRoot string `toml:"proc-root"`
	// DevRoot stands for the host's /dev. Empty: "/dev".
	DevRoot string `toml:"dev-root"`
	// Backend is "auto", "nvml" or "procfs" (see devices.Backend).
	// Empty: auto.
	Backend devices.Backend `toml:"backend"`
}

// ParseHostRoots reads the [nvc] table of a config.toml; a file without
// one gives the zero HostRoots (the defaults).
func ParseHostRoots(data []byte) (*HostRoots, error) {
	var doc struct {
		NVC HostRoots `toml:"nvc"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, fmt.Errorf("parsing [nvc] of config: %w", err)
	}
	switch doc.NVC.Backend {
	case "", devices.Auto, devices.NVML, devices.Procfs:
		return &doc.NVC, nil
	}
	return nil, fmt.Errorf("parsing [nvc] of config: backend %q is not auto, nvml or procfs: %w", doc.NVC.Backend, ErrInvalidConfig)
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
