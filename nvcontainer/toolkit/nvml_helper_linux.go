package toolkit

import (
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
)

// HelperNVML is the NVML of a hook or runtime built without cgo, for
// nvcontainer.HostOptions.NVML and JitOptions.NVML: the client of the NVML
// helper devices.FindNVMLHelper finds (devices.NewNVMLHelper, which runs
// nothing until NVML is needed), loading the library of cfg's
// [nvidia-container-cli] root as its user (the toolkit passes it as
// nvidia-container-cli's --user, the identity of libnvidia-container's
// NVML process; "": 65534:65534 when run by root). Nil in a cgo build,
// which loads NVML in-process (devices.CanLoadNVML), and when no helper is
// found: discovery is then through procfs only.
func HelperNVML(cfg *Config) devices.NVMLInterface {
	if devices.CanLoadNVML() {
		return nil
	}
	path := devices.FindNVMLHelper()
	if path == "" {
		return nil
	}
	if cfg == nil {
		cfg = DefaultConfig()
	}
	return devices.NewNVMLHelper(&devices.NVMLHelperOptions{Path: path, Roots: driver.Roots{Driver: cfg.CLI.Root}, User: cfg.CLI.User})
}
