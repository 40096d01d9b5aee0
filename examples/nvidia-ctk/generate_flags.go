package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/spf13/pflag"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// The --mode values of cdi generate: auto (procfs, NVML where MIG UUIDs
// are needed; wsl on a WSL2 host, csv on Tegra), nvml (NVML only),
// management (procfs only, one "all" device, for management containers
// that see every GPU), csv (Tegra's mount specs) and wsl (a WSL2 host:
// /dev/dxg and the driver store, one "all" device).
const (
	modeAuto       = "auto"
	modeNVML       = "nvml"
	modeManagement = "management"
	modeCSV        = "csv" // Tegra: from the CSV mount specs (generate_csv.go)
	modeWSL        = "wsl"
)

// appProfileHook is the hook the toolkit's NVML discovery adds last to
// the common edits and its management discovery leaves out.
const appProfileHook = "update-application-profile"

// generateExtras are the cdi generate flags NVIDIA's generator has beyond
// the spec's naming: the devices, the mode, the hooks.
type generateExtras struct {
	mode                      string
	deviceIDs                 []string
	disableHooks, enableHooks []string
	librarySearch             []string
	ldconfigPath              string
}

func (e *generateExtras) register(fs *pflag.FlagSet) {
	fs.StringVar(&e.mode, "mode", modeAuto, "how the host is discovered: auto, nvml, management (procfs alone, one \"all\" device), csv (Tegra mount specs), wsl (/dev/dxg and the driver store; auto picks it where /dev/dxg exists)")
	fs.StringSliceVar(&e.deviceIDs, "device-id", []string{"all"}, "the devices in the spec: all, or indices, UUIDs, MIG GPU:MIG pairs (repeatable)")
	fs.StringSliceVar(&e.disableHooks, "disable-hook", nil, "leave out these nvidia-cdi-hook commands, or all (repeatable)")
	fs.StringSliceVar(&e.disableHooks, "disable-hooks", nil, "alias of --disable-hook")
	fs.StringSliceVar(&e.enableHooks, "enable-hook", nil, "keep these hooks even when --disable-hook names them (repeatable; not all)")
	fs.StringSliceVar(&e.enableHooks, "enable-hooks", nil, "alias of --enable-hook")
	fs.StringSliceVar(&e.librarySearch, "library-search-path", nil, "dirs inside the driver root searched, in order, for a driver library the loader cache does not give (repeatable)")
	fs.StringVar(&e.ldconfigPath, "ldconfig-path", "", "accepted for NVIDIA's tool; the update-ldcache hook runs the container's ldconfig")
}

// check validates the flags before the host is opened.
func (e *generateExtras) check() error {
	if !slices.Contains([]string{modeAuto, modeNVML, modeManagement, modeCSV, modeWSL}, e.mode) {
		return fmt.Errorf("cdi generate: unsupported --mode %q (want auto, nvml, management, csv or wsl)", e.mode)
	}
	if slices.Contains(e.enableHooks, cdispec.HookAll) {
		return fmt.Errorf("cdi generate: --enable-hook %s is not supported (name the hooks)", cdispec.HookAll)
	}
	for _, h := range append(slices.Clone(e.disableHooks), e.enableHooks...) {
		if h != cdispec.HookAll && !slices.Contains(cdispec.HookNames(), h) {
			return fmt.Errorf("cdi generate: unknown hook %q (want one of %v or %s)", h, cdispec.HookNames(), cdispec.HookAll)
		}
	}
	for _, p := range e.librarySearch {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("cdi generate: --library-search-path %q is not an absolute path", p)
		}
	}
	return nil
}

// openHost opens the host as --mode says.
func (e *generateExtras) openHost(d *driver.Options, opts *cdispec.Options) (*nvcontainer.Host, error) {
	switch e.mode {
	case modeNVML:
		return nvcontainer.OpenHost(context.Background(), d, devices.NVML)
	case modeManagement:
		return nvcontainer.OpenHost(context.Background(), d, devices.Procfs)
	case modeWSL:
		return openWSLHost(d)
	}
	return openSpecHost(d, opts)
}

// openWSLHost opens a WSL2 host for --mode wsl; a host without /dev/dxg
// is refused.
func openWSLHost(d *driver.Options) (*nvcontainer.Host, error) {
	h, err := nvcontainer.OpenHost(context.Background(), d, devices.Procfs)
	if err != nil {
		return nil, err
	}
	if h.Devices.Backend != devices.WSL {
		return nil, fmt.Errorf("--mode %s: no %s under the dev root %s: not a WSL2 host", modeWSL, devices.DevDXG, h.Devices.Roots.Dev)
	}
	return h, nil
}

// devices is the selection --device-id asks for: on WSL2 (one device,
// "all"), everything.
func (e *generateExtras) devices() request.Devices {
	if len(e.deviceIDs) == 0 || slices.Contains(e.deviceIDs, "all") || e.mode == modeManagement || e.mode == modeWSL {
		return request.Devices{Mode: request.DevicesAll}
	}
	return request.Devices{Mode: request.DevicesList, IDs: e.deviceIDs}
}

// edit applies --mode management (only the "all" device, and no
// update-application-profile hook: the toolkit's management discovery has
// none) and the hooks disabled and not enabled again.
func (e *generateExtras) edit(spec *specs.Spec) error {
	if e.mode == modeManagement {
		spec.Devices = slices.DeleteFunc(spec.Devices, func(d specs.Device) bool { return d.Name != "all" })
		if len(spec.Devices) == 0 {
			return fmt.Errorf("cdi generate: --mode %s needs the \"all\" device (drop --no-all-device)", modeManagement)
		}
		if err := cdispec.RemoveHooks(spec, []string{appProfileHook}); err != nil {
			return err
		}
	}
	var drop []string
	for _, h := range cdispec.HookNames() {
		disabled := slices.Contains(e.disableHooks, h) || slices.Contains(e.disableHooks, cdispec.HookAll)
		if disabled && !slices.Contains(e.enableHooks, h) {
			drop = append(drop, h)
		}
	}
	return cdispec.RemoveHooks(spec, drop)
}
