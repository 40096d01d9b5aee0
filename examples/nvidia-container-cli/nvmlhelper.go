package main

import (
	"os"
	"os/exec"
	"path/filepath"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
)

// Where a build without cgo finds its NVML helper (examples/nvc-nvml).
const (
	// envNVMLHelper names the helper's path, overriding the search.
	envNVMLHelper = "NVC_NVML_HELPER"
	// nvmlHelperName is the helper's file name, looked for next to this
	// executable, then on PATH.
	nvmlHelperName = "nvc-nvml"
)

// nvmlHelper is the NVML of a build without cgo: the helper process's
// (devices.NewNVMLHelper, run only when NVML is needed, as --user), or
// nil when no helper is found (procfs only).
func (a *app) nvmlHelper() devices.NVMLInterface {
	path := findNVMLHelper()
	if path == "" {
		a.log.Info("no NVML helper " + nvmlHelperName + " next to this executable or on PATH: NVML unavailable")
		return nil
	}
	g := &a.cmd.Global
	return devices.NewNVMLHelper(&devices.NVMLHelperOptions{Path: path, Roots: driver.Roots{Driver: g.Root}, User: g.NVMLHelperUser()})
}

// findNVMLHelper is $NVC_NVML_HELPER, else nvc-nvml in this executable's
// directory, else on PATH; "" when none.
func findNVMLHelper() string {
	if p := os.Getenv(envNVMLHelper); p != "" {
		return p
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), nvmlHelperName)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	if p, err := exec.LookPath(nvmlHelperName); err == nil {
		return p
	}
	return ""
}
