package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

const globalSynopsis = `nvidia-container-cli [OPTION...] COMMAND [ARG...]
Command line utility for manipulating NVIDIA GPU containers.

Commands:
  info        Report information about the driver and devices
  list        List driver components
  configure   Configure a container with GPU support`

// globals are the global options and what they open.
type globals struct {
	root, ldcache, user, debug  string
	procRoot, devRoot, simulate string
	loadKmods, noPivot, noIMEX  bool
	keepSim                     bool // --simulate-keep

	stderr  io.Writer
	log     *slog.Logger
	logFile *os.File
	simDir  string // the generated host of --simulate; removed by close
	applied bool   // configure applied it: its files are mounted somewhere
}

func (g *globals) flagSet() *pflag.FlagSet {
	fs := newFlagSet("nvidia-container-cli")
	fs.SetInterspersed(false) // argp's ARGP_IN_ORDER: options end at the command
	fs.StringVarP(&g.debug, "debug", "d", "", "Log debug information to `FILE` (appended)")
	fs.BoolVarP(&g.loadKmods, "load-kmods", "k", false, "Load kernel modules and create missing device nodes on the host")
	fs.BoolVarP(&g.noPivot, "no-pivot", "n", false, "Accepted for compatibility; nothing is run in the container, so nothing pivots")
	fs.StringVarP(&g.user, "user", "u", "", "Accepted for compatibility (`UID[:GID]`); NVML runs in-process")
	fs.Lookup("user").NoOptDefVal = "-"
	fs.StringVarP(&g.root, "root", "r", "", "`PATH` to the driver root directory (default /)")
	fs.StringVarP(&g.ldcache, "ldcache", "l", "", "Path to the system's DSO cache `FILE`, inside the root (default /etc/ld.so.cache)")
	fs.BoolVar(&g.noIMEX, "no-create-imex-channels", false, "Don't create IMEX channel device nodes with --load-kmods")
	fs.StringVar(&g.procRoot, "proc-root", "", "Read the host's procfs from `DIR` (default /proc)")
	fs.StringVar(&g.devRoot, "dev-root", "", "Read the host's device nodes from `DIR` (default: the driver root's /dev)")
	fs.StringVar(&g.simulate, "simulate", "", "Run against a generated `MACHINE`: "+machineNames())
	fs.BoolVar(&g.keepSim, "simulate-keep", false, "Keep the --simulate host's temp dir (removed at exit unless configure applied it)")
	return fs
}

// openLog opens the --debug file, as libnvidia-container does: appended,
// after a warning header.
func (g *globals) openLog() error {
	if g.debug == "" {
		return nil
	}
	f, err := os.OpenFile(g.debug, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, "-- WARNING, the following logs are for debugging purposes only --")
	g.logFile, g.log = f, slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g.log.Info("starting", "args", os.Args)
	return nil
}

// close removes the --simulate host unless --simulate-keep asks to keep
// it or a configure applied it (its files are then mounted in a container:
// removing a bind-mounted directory's entries would empty it there too).
func (g *globals) close() {
	switch {
	case g.simDir == "":
	case g.keepSim || g.applied:
		fmt.Fprintf(g.stderr, "%s: SIMULATED host kept in %s; remove it when done\n", progName(), g.simDir)
	default:
		os.RemoveAll(g.simDir)
	}
	if g.logFile != nil {
		g.logFile.Close()
	}
}

// driverOptions are the host's roots from the global options (or the
// simulated host) and the environment nvidia-container-cli reads.
func (g *globals) driverOptions() (*driver.Options, error) {
	d := &driver.Options{Root: g.root, LDCache: g.ldcache, ProcRoot: g.procRoot, DevRoot: g.devRoot,
		Path: os.Getenv("PATH"), MPSPipeDir: os.Getenv("CUDA_MPS_PIPE_DIRECTORY")}
	if g.simulate == "" {
		return d, nil
	}
	if g.root != "" || g.procRoot != "" || g.devRoot != "" {
		return nil, errors.New("--simulate cannot be combined with --root, --proc-root or --dev-root")
	}
	h, err := simulate(g.simulate)
	if err != nil {
		return nil, err
	}
	g.simDir = h.Root
	fmt.Fprintf(g.stderr, "%s: SIMULATED host %q (fake NVML, driver %s) generated in %s; nothing printed describes this machine\n",
		progName(), g.simulate, h.DriverVersion, h.Root)
	d.Root, d.ProcRoot, d.DevRoot, d.NVML, d.Path = h.Root, h.ProcRoot, h.DevRoot, h.NVML, ""
	return d, nil
}

// simulate generates the --simulate machine into a new temp dir (package
// nvctest), with real device nodes when run as root.
func simulate(machine string) (*nvctest.Host, error) {
	m, err := nvctest.ParseMachine(machine)
	if err != nil {
		return nil, fmt.Errorf("unknown --simulate machine %q (want one of %s)", machine, machineNames())
	}
	return nvctest.GenerateTemp(m, &nvctest.Options{RealNodes: os.Geteuid() == 0})
}

// machineNames lists the machines --simulate takes.
func machineNames() string {
	var names []string
	for _, m := range nvctest.Machines() {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}

// openHost opens the driver and discovers the devices, first creating
// missing nodes with --load-kmods. cmd carries the command's driver
// options (--no-persistenced, --no-fabricmanager, --no-gsp-firmware; nil:
// none). configure gives its request (NVML only when it needs it); info,
// list and configure --dry-run nil (NVML first): see nvcli.PrepareHost.
func (g *globals) openHost(cmd *driver.Options, imex []uint32, req *request.Request) (*nvcontainer.Host, error) {
	d, err := g.driverOptions()
	if err != nil {
		return nil, &nvcli.Error{Prefix: nvcli.PrefixInput, Err: err}
	}
	if cmd != nil {
		d.NoPersistenced, d.NoFabricManager, d.NoGSPFirmware = cmd.NoPersistenced, cmd.NoFabricManager, cmd.NoGSPFirmware
	}
	if g.noIMEX {
		imex = nil
	}
	ho := &nvcontainer.HostOptions{Driver: d, LoadModules: g.loadKmods && g.simulate == "", IMEXChannels: imex}
	h, rep, err := nvcli.PrepareHost(context.Background(), ho, req)
	if rep != nil {
		g.log.Info("kernel modules", "skipped", rep.Skipped, "loaded", rep.Loaded, "created", len(rep.Created))
		for _, w := range rep.Warnings {
			g.log.Warn(w)
		}
	}
	if err != nil {
		return nil, err
	}
	v := h.Driver.Version()
	g.log.Info("host opened", "root", h.Driver.Root(), "nvrm", v.NVRM, "version-source", v.Source,
		"backend", h.Devices.Backend, "nvml-error", h.Devices.NVMLError, "gpus", len(h.Devices.GPUs))
	return h, nil
}
