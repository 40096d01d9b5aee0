package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

const configureNote = `nvc: the container is the process PID, which must be alive and in another mount namespace than this command's (a host process is refused); or, without --pid, the parent process, whose procfs is then ROOTFS/proc, which must be a procfs mount, and whose mount namespace must be this command's. Everything is undone if a step fails.
The container's ld.so.cache is written in Go: no ldconfig is run, and --ldconfig is accepted for compatibility only.`

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// app is one run: the parsed command line, the debug log and the
// simulated host of --simulate.
type app struct {
	cmd      *nvcli.Command
	stderr   io.Writer
	log      *slog.Logger
	simulate string
	keepSim  bool          // --simulate-keep
	simDir   string        // the generated host; removed by close
	sim      *nvctest.Host // the generated host, once generated
	applied  bool          // configure applied it: its files are mounted somewhere
	closeLog func() error
}

// run is the whole program (args[0] is its name); it returns the status.
func run(args []string, stdout, stderr io.Writer) int {
	a := &app{stderr: stderr, log: slog.New(slog.DiscardHandler)}
	cmd, err := nvcli.Parse(args, &nvcli.ParseOptions{Global: a.options(), ConfigureDoc: configureNote})
	if err != nil {
		return nvcli.Report(stderr, filepath.Base(args[0]), err)
	}
	a.cmd = cmd
	defer a.close()
	if err := a.dispatch(stdout); err != nil {
		a.log.Error(err.Error())
		return nvcli.Report(stderr, cmd.Prog, err)
	}
	return 0
}

func (a *app) options() []nvcli.Option {
	return []nvcli.Option{
		{Name: "simulate", Arg: "MACHINE", Doc: "Run against a generated MACHINE (nvc): " + machineNames(),
			Set: func(v string) error { a.simulate = v; return nil }},
		{Name: "simulate-keep", Doc: "Keep the --simulate host's temp dir (nvc)",
			Set: func(string) error { a.keepSim = true; return nil }},
	}
}

func (a *app) dispatch(stdout io.Writer) error {
	switch {
	case a.cmd.Help != "":
		_, err := io.WriteString(stdout, a.cmd.Help)
		return err
	case a.cmd.Version:
		bi, _ := debug.ReadBuildInfo()
		return nvcli.WriteVersion(stdout, bi)
	}
	if err := a.openLog(); err != nil {
		return &nvcli.Error{Prefix: nvcli.PrefixInput, Err: err}
	}
	if csv, err := a.openCSV(); err != nil || csv != nil {
		if err != nil {
			return err
		}
		return a.csvCommand(stdout, csv)
	}
	switch a.cmd.Name {
	case nvcli.CommandInfo:
		return a.info(stdout)
	case nvcli.CommandList:
		return a.list(stdout)
	}
	return a.configure(stdout)
}

// openLog opens --debug or NVC_DEBUG_FILE (libnvidia-container's format).
func (a *app) openLog() error {
	path := a.cmd.Global.DebugFile(nil)
	if path == "" {
		return nil
	}
	log, f, err := nvcli.OpenDebugLog(path)
	if err != nil {
		return err
	}
	a.log = log
	a.closeLog = f.Close
	a.log.Info("running " + strings.Join(os.Args, " "))
	return nil
}

// close removes the --simulate host unless kept or applied (removing a
// bind-mounted directory's entries would empty it in the container too).
func (a *app) close() {
	switch {
	case a.simDir == "":
	case a.keepSim || a.applied:
		fmt.Fprintf(a.stderr, "%s: SIMULATED host kept in %s; remove it when done\n", a.cmd.Prog, a.simDir)
	default:
		os.RemoveAll(a.simDir)
	}
	if a.closeLog != nil {
		a.closeLog()
	}
}

// openHost opens the host (see nvcli.PrepareHost): configure gives its
// request (NVML only if needed); info, list, --dry-run nil (NVML first).
func (a *app) openHost(imex []uint32, req *request.Request) (*nvcontainer.Host, error) {
	ho := a.cmd.HostOptions(nil, imex)
	if err := a.simulateHost(ho); err != nil {
		return nil, &nvcli.Error{Prefix: nvcli.PrefixInput, Err: err}
	}
	if a.simulate == "" && !devices.CanLoadNVML() {
		ho.NVML = a.nvmlHelper()
	}
	h, rep, err := nvcli.PrepareHost(context.Background(), ho, req)
	if rep != nil {
		a.log.Info("kernel modules", "skipped", rep.Skipped, "loaded", rep.Loaded, "created", len(rep.Created))
		for _, w := range rep.Warnings {
			a.log.Warn(w)
		}
	}
	if err != nil {
		return nil, err
	}
	v := h.Driver.Version()
	a.log.Info("host opened", "root", h.Driver.Root(), "nvrm", v.NVRM, "version-source", v.Source,
		"backend", h.Devices.Backend, "nvml-error", h.Devices.NVMLError, "gpus", len(h.Devices.GPUs))
	return h, nil
}

// simulateHost points ho at a generated --simulate machine (nvctest).
func (a *app) simulateHost(ho *nvcontainer.HostOptions) error {
	if a.simulate == "" {
		return nil
	}
	d := ho.Driver
	if d.Roots.Driver != "" || d.Roots.Proc != "" || d.Roots.Dev != "" {
		return errors.New("--simulate cannot be combined with --root, --proc-root or --dev-root")
	}
	h, err := a.generate()
	if err != nil {
		return err
	}
	d.Roots.Driver, d.Roots.Proc, d.Roots.Dev, d.Roots.Sys, d.NVML, d.Path = h.Roots.Driver, h.Roots.Proc, h.Roots.Dev, h.Roots.Sys, h.NVML, ""
	ho.LoadModules = false
	return nil
}

// generate generates the --simulate machine, once.
func (a *app) generate() (*nvctest.Host, error) {
	if a.sim != nil {
		return a.sim, nil
	}
	m, err := nvctest.ParseMachine(a.simulate)
	if err != nil {
		return nil, fmt.Errorf("unknown --simulate machine %q (want one of %s)", a.simulate, machineNames())
	}
	h, err := nvctest.GenerateTemp(m, &nvctest.Options{RealNodes: os.Geteuid() == 0})
	if err != nil {
		return nil, err
	}
	a.sim, a.simDir = h, h.Roots.Driver
	what := "fake NVML, driver " + h.DriverVersion
	if m.IsTegra() {
		what = "Tegra, L4T " + h.DriverVersion + ", CSV mode"
	}
	if m == nvctest.WSL {
		what = "WSL2, no NVML, driver " + h.DriverVersion
	}
	fmt.Fprintf(a.stderr, "%s: SIMULATED host %q (%s) generated in %s; nothing printed describes this machine\n",
		a.cmd.Prog, a.simulate, what, h.Roots.Driver)
	return h, nil
}

// machineNames lists the machines --simulate takes.
func machineNames() string {
	var names []string
	for _, m := range nvctest.Machines() {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}
