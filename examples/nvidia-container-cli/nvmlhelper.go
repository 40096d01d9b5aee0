package main

import (
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
)

// nvmlHelper is the NVML of a build without cgo: the helper process's
// (devices.NewNVMLHelper, run only when NVML is needed, as --user), found
// by devices.FindNVMLHelper, or nil when there is none (procfs only).
func (a *app) nvmlHelper() devices.NVMLInterface {
	path := devices.FindNVMLHelper()
	if path == "" {
		a.log.Info("no NVML helper " + devices.NVMLHelperName + " next to this executable or on PATH: NVML unavailable")
		return nil
	}
	g := &a.cmd.Global
	return devices.NewNVMLHelper(&devices.NVMLHelperOptions{Path: path, Roots: driver.Roots{Driver: g.Root}, User: g.NVMLHelperUser()})
}
