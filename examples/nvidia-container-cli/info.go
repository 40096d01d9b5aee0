package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
)

// infoCommand reports the driver and the GPUs, as nvidia-container-cli
// info does. Values only NVML knows (brand, architecture, CUDA version)
// print as N/A when discovery fell back to procfs.
func infoCommand(g *globals, args []string, stdout io.Writer) error {
	fs := newFlagSet("info")
	csv := fs.Bool("csv", false, "Output in CSV format")
	if err := parse(fs, "nvidia-container-cli info [--csv]\nQuery the driver and report its information as well as the devices it detected.", args, stdout); err != nil {
		return err
	}
	if err := positional(fs, 0); err != nil {
		return err
	}
	h, err := g.openHost(nil, nil, nil)
	if err != nil {
		return err
	}
	if h.Devices.Backend != devices.NVML {
		fmt.Fprintf(g.stderr, "%s: warning: NVML unavailable (%s): brand, architecture and CUDA version are unknown\n", progName(), h.Devices.NVMLError)
	}
	return nvcli.WriteInfo(stdout, h, &nvcli.InfoOptions{CSV: *csv})
}

// listCommand prints the paths configure would bring into a container,
// as nvidia-container-cli list does; a bare `list` (or one whose only
// argument is --imex-channel=X) is --device=all --compat32 -l -b -i -f.
func listCommand(g *globals, args []string, stdout io.Writer) error {
	fs := newFlagSet("list")
	var o nvcli.ListOptions
	var imex []string
	d := &driver.Options{}
	fs.StringArrayVarP(&o.Devices, "device", "d", nil, "Devices to list: `ID`s (index, UUID, bus ID, MIG device) or all")
	fs.BoolVarP(&o.Libraries, "libraries", "l", false, "List driver libraries")
	fs.BoolVarP(&o.Binaries, "binaries", "b", false, "List driver binaries")
	fs.BoolVarP(&o.IPCs, "ipcs", "i", false, "List driver IPCs")
	fs.BoolVarP(&o.Firmware, "firmwares", "f", false, "List driver firmware files")
	fs.BoolVar(&o.Compat32, "compat32", false, "Also list the 32-bit libraries")
	fs.StringArrayVar(&o.MIGConfig, "mig-config", nil, "List MIG config capability files for `ID` (only all)")
	fs.StringArrayVar(&o.MIGMonitor, "mig-monitor", nil, "List MIG monitor capability files for `ID` (only all)")
	fs.StringArrayVar(&imex, "imex-channel", nil, "IMEX `CHANNEL`s to list")
	fs.BoolVar(&d.NoPersistenced, "no-persistenced", false, "Don't include the NVIDIA persistenced socket")
	fs.BoolVar(&d.NoFabricManager, "no-fabricmanager", false, "Don't include the NVIDIA fabricmanager socket")
	fs.BoolVar(&d.NoGSPFirmware, "no-gsp-firmware", false, "Don't include GSP firmware (implies no -f)")
	if err := parse(fs, "nvidia-container-cli list [OPTION...]\nQuery the driver and list the components required in order to configure a container with GPU support.", args, stdout); err != nil {
		return err
	}
	if err := positional(fs, 0); err != nil {
		return err
	}
	if len(args) == 0 || (len(args) == 1 && imex != nil) {
		o = *nvcli.DefaultListOptions()
	}
	chans, err := nvcli.IMEXChannels(imex)
	if err != nil {
		return err
	}
	o.IMEXChannels, o.Firmware = chans, o.Firmware && !d.NoGSPFirmware
	h, err := g.openHost(d, o.IMEXChannels, nil)
	if err != nil {
		return err
	}
	paths, err := nvcli.List(h, &o)
	if err != nil {
		return nvcli.ErrorFor(err)
	}
	w := bufio.NewWriter(stdout)
	for _, p := range paths {
		fmt.Fprintln(w, p)
	}
	return w.Flush()
}
