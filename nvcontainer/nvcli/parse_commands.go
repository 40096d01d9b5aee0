package nvcli

import (
	"github.com/go-nvc/nvc/capabilities"
)

func (c *Command) listOptions() []option {
	o := &c.List
	return []option{
		{long: "device", short: 'd', arg: "ID", doc: "Device UUID(s) or index(es) to list", set: appendTo(&o.Devices)},
		{long: "libraries", short: 'l', doc: "List driver libraries", set: setTrue(&o.Libraries)},
		{long: "binaries", short: 'b', doc: "List driver binaries", set: setTrue(&o.Binaries)},
		{long: "ipcs", short: 'i', doc: "List driver ipcs", set: setTrue(&o.IPCs)},
		{long: "firmwares", short: 'f', doc: "List driver firmwares", set: setTrue(&o.Firmware)},
		{long: "compat32", doc: "Enable 32bits compatibility", set: setTrue(&o.Compat32)},
		{long: "mig-config", arg: "ID", doc: "MIG devices to list config capabilities files for", set: appendTo(&o.MIGConfig)},
		{long: "mig-monitor", arg: "ID", doc: "MIG devices to list monitor capabilities files for", set: appendTo(&o.MIGMonitor)},
		{long: "imex-channel", arg: "CHANNEL", doc: "IMEX channel ID(s) to inject", set: appendTo(&c.listIMEX)},
	}
}

func (c *Command) configureOptions() []option {
	o := &c.Configure
	f := &o.Flags
	caps := &f.Capabilities
	return []option{
		{long: "pid", short: 'p', arg: "PID", doc: "Container PID", set: setPID(&o.PID)},
		{long: "device", short: 'd', arg: "ID", doc: "Device UUID(s) or index(es) to isolate", set: appendTo(&f.Devices)},
		{long: "require", short: 'r', arg: "EXPR", doc: "Check container requirements", set: appendTo(&f.Requirements)},
		{long: "ldconfig", short: 'l', arg: "PATH", doc: "Path to the ldconfig binary", set: setString(&o.LDConfig)},
		{long: "compute", short: 'c', doc: "Enable compute capability", set: addCap(caps, capabilities.Compute)},
		{long: "utility", short: 'u', doc: "Enable utility capability", set: addCap(caps, capabilities.Utility)},
		{long: "video", short: 'v', doc: "Enable video capability", set: addCap(caps, capabilities.Video)},
		{long: "graphics", short: 'g', doc: "Enable graphics capability", set: addCap(caps, capabilities.Graphics)},
		{long: "display", short: 'D', doc: "Enable display capability", set: addCap(caps, capabilities.Display)},
		{long: "ngx", short: 'n', doc: "Enable ngx capability", set: addCap(caps, capabilities.NGX)},
		{long: "compat32", doc: "Enable 32bits compatibility", set: addCap(caps, capabilities.Compat32)},
		{long: "mig-config", arg: "ID", doc: "Enable configuration of MIG devices", set: appendTo(&f.MIGConfig)},
		{long: "mig-monitor", arg: "ID", doc: "Enable monitoring of MIG devices", set: appendTo(&f.MIGMonitor)},
		{long: "imex-channel", arg: "CHANNEL", doc: "IMEX channel ID(s) to inject", set: appendTo(&f.IMEXChannels)},
		{long: "no-cgroups", doc: "Don't use cgroup enforcement", set: setTrue(&o.NoCgroups)},
		{long: "no-devbind", doc: "Don't bind mount devices", set: setTrue(&o.NoDevbind)},
		{long: "no-cntlibs", doc: "Don't use CUDA compat libraries from the container", set: setTrue(&f.NoCntlibs)},
		{long: "cuda-compat-mode", arg: "MODE", doc: "CUDA forward compatibility mode: mount, ldconfig or disabled", set: appendTo(&f.CUDACompatModes)},
		{long: "dry-run", doc: "Print the plan as JSON and change nothing (nvc)", set: setTrue(&o.DryRun)},
	}
}

// finish checks the command's operands and applies list's defaults.
// words is the number of words from the command name on.
func (c *Command) finish(p *argp, operands []string, words int) error {
	switch c.Name {
	case CommandConfigure:
		if len(operands) != 1 {
			return p.usage()
		}
		c.Configure.Rootfs = operands[0]
		return nil
	case CommandList:
		if len(operands) > 0 {
			return p.tooMany()
		}
		return c.finishList(words)
	}
	if len(operands) > 0 {
		return p.tooMany()
	}
	return nil
}

// finishList makes a bare list (or one whose only word is
// --imex-channel=X) DefaultListOptions, as list.c does, reads the IMEX
// channels and turns -f off with --no-gsp-firmware.
func (c *Command) finishList(words int) error {
	if words == 1 || (words == 2 && c.listIMEX != nil) {
		c.List = *DefaultListOptions()
	}
	chans, err := IMEXChannels(c.listIMEX)
	if err != nil {
		return err
	}
	c.List.IMEXChannels = chans
	c.List.Firmware = c.List.Firmware && !c.Driver.NoGSPFirmware
	return nil
}
