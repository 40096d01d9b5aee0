package driver

import "path/filepath"

// Roots say where the host's driver, procfs, /dev, ld.so.cache and sysfs
// are. It is the one spelling of the host's roots: driver.Options,
// devices.Options, devices.NodeOptions and nvcontainer's host options all
// carry a Roots, and all default it with [Roots.WithDefaults], so a
// fixture or a driver installed under another root is named once. The
// zero value is the running host.
type Roots struct {
	// Driver is the driver root: the file system the driver is installed
	// in, as a host path (nvidia-container-cli --root). Empty: "/".
	Driver string `json:"driver"`
	// Proc stands for the host's /proc (a host path, not inside Driver:
	// procfs is the running kernel's). Empty: "/proc".
	Proc string `json:"proc"`
	// Dev stands for the host's /dev (a host path). Empty: <Driver>/dev,
	// so "/dev" with the default driver root: libnvidia-container looks
	// device nodes up inside --root.
	Dev string `json:"dev"`
	// LDCache is the ld.so.cache path inside Driver (--ldcache). Empty:
	// "/etc/ld.so.cache".
	LDCache string `json:"ldCache,omitempty"`
	// Sys stands for the host's sysfs (a host path, not inside Driver:
	// sysfs is the running kernel's), where the PCI devices
	// (bus/pci/devices), their DRM nodes and the loaded modules (module/)
	// are read. Empty: "/sys".
	Sys string `json:"sys,omitempty"`
}

// WithDefaults returns r with every empty root set to its default: Driver
// DefaultRoot, Proc DefaultProcRoot, Dev <Driver>/dev and LDCache
// DefaultLDCache and Sys DefaultSysRoot. It is the one defaulting rule of the host's roots;
// paths that are set are returned as they are.
func (r Roots) WithDefaults() Roots {
	if r.Driver == "" {
		r.Driver = DefaultRoot
	}
	if r.Proc == "" {
		r.Proc = DefaultProcRoot
	}
	if r.Dev == "" {
		r.Dev = filepath.Join(r.Driver, "dev")
	}
	if r.LDCache == "" {
		r.LDCache = DefaultLDCache
	}
	if r.Sys == "" {
		r.Sys = DefaultSysRoot
	}
	return r
}
