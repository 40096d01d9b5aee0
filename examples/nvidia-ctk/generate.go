package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// featureNoAdditionalGIDs is the feature flag of NVIDIA's cdi generate
// that leaves out the additional groups of device nodes.
const featureNoAdditionalGIDs = "no-additional-gids-for-device-nodes"

// generateOptions are cdi generate's flags.
type generateOptions struct {
	output, format, vendor, class string
	strategies, featureFlags      []string
	noAll                         bool
	driverRoot, devRoot, procRoot string
	sysRoot                       string
	hookPath, simulate            string
	simulateMIG                   []string
	simulateKeep                  bool
	simDir                        string // the generated host; removed by cleanup
	extra                         generateExtras
	csv                           csvFlags
}

func generateCommand(args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	var o generateOptions
	fs := newFlagSet("nvidia-ctk cdi generate", stderr)
	fs.StringVarP(&o.output, "output", "o", "", "write the spec to `FILE` (default: stdout)")
	fs.StringVar(&o.format, "format", "", "spec encoding, json or yaml (default: from the --output extension, else yaml)")
	fs.StringVar(&o.vendor, "vendor", "nvidia.com", "the vendor of the spec's kind")
	fs.StringVar(&o.class, "class", "gpu", "the class of the spec's kind")
	fs.StringSliceVar(&o.strategies, "device-name-strategy", []string{"index", "uuid"}, "how devices are named: index, uuid, type-index (repeatable)")
	fs.StringArrayVar(&o.featureFlags, "feature-flag", nil, "a feature flag of NVIDIA's generator (repeatable): "+featureNoAdditionalGIDs+
		" leaves out the additionalGids of nodes that are not world-accessible (the spec then stays at cdiVersion "+cdispec.DefaultVersion+", which podman 4.3 loads); others are ignored")
	fs.BoolVar(&o.noAll, "no-all-device", false, "leave out the \"all\" device")
	fs.StringVar(&o.driverRoot, "driver-root", "/", "the root the driver is installed under")
	fs.StringVar(&o.devRoot, "dev-root", "", "the root /dev is under (default: the driver root)")
	fs.StringVar(&o.procRoot, "proc-root", "/proc", "where the host's procfs is")
	fs.StringVar(&o.sysRoot, "sys-root", "/sys", "where the host's sysfs is (the GPUs' /dev/dri nodes)")
	fs.StringVar(&o.hookPath, "hook-path", cdispec.DefaultHookPath, "host path of the createContainer hook (examples/nvidia-cdi-hook)")
	fs.StringVar(&o.hookPath, "nvidia-cdi-hook-path", cdispec.DefaultHookPath, "alias of --hook-path, as NVIDIA's tool names it")
	fs.StringVar(&o.hookPath, "nvidia-ctk-path", cdispec.DefaultHookPath, "alias of --hook-path (NVIDIA's older name)")
	fs.StringVar(&o.vendor, "cdi-vendor", "nvidia.com", "alias of --vendor")
	fs.StringVar(&o.class, "cdi-class", "gpu", "alias of --class")
	fs.StringVar(&o.simulate, "simulate", "", "write the spec for a generated host: "+machineNames())
	fs.StringArrayVar(&o.simulateMIG, "simulate-mig", nil, "with --simulate, a GPU in MIG mode and its MIG devices, as `INDEX=PROFILE,...` (repeatable)")
	fs.BoolVar(&o.simulateKeep, "simulate-keep", false, "keep the --simulate host (the spec's host paths point into it; removed at exit otherwise)")
	o.extra.register(fs)
	o.csv.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("cdi generate: unexpected arguments %q", fs.Args())
	}
	return generate(&o, stdout, stderr, log)
}

func generate(o *generateOptions, stdout, stderr io.Writer, log *slog.Logger) error {
	format, err := o.outputFormat()
	if err != nil {
		return err
	}
	cdiOpts, err := o.cdiOptions()
	if err != nil {
		return err
	}
	for _, f := range o.featureFlags {
		if f != featureNoAdditionalGIDs {
			log.Warn("ignoring feature flag", "flag", f)
		}
	}
	if err := o.extra.check(); err != nil {
		return err
	}
	d, err := o.driverOptions(stderr)
	if err != nil {
		return err
	}
	d.LibrarySearchPaths = o.extra.librarySearch
	defer o.cleanup()
	spec, err := o.spec(d, cdiOpts, stderr, log)
	if err != nil {
		return err
	}
	if err := o.extra.edit(spec); err != nil {
		return err
	}
	data, err := cdispec.Marshal(spec, format)
	if err != nil {
		return err
	}
	log.Info("generated CDI spec", "kind", spec.Kind, "cdiVersion", spec.Version, "devices", len(spec.Devices))
	if o.output == "" {
		_, err = stdout.Write(data)
		return err
	}
	if err := replaceFile(o.output, data); err != nil {
		return fmt.Errorf("writing CDI spec: %w", err)
	}
	return nil
}

// spec makes the spec of the host d describes: from the CSV mount specs
// in csv mode (and in auto mode on a Tegra host), else from the driver.
func (o *generateOptions) spec(d *driver.Options, cdiOpts *cdispec.Options, stderr io.Writer, log *slog.Logger) (*specs.Spec, error) {
	if o.csvMode(d) {
		return o.csvSpec(d, cdiOpts, stderr, log)
	}
	host, err := o.extra.openHost(d, cdiOpts)
	if err != nil {
		return nil, fmt.Errorf("opening the host: %w", err)
	}
	log.Info("host opened", "driver-root", d.Roots.Driver, "driver", host.Driver.Version().NVRM,
		"backend", host.Devices.Backend, "gpus", len(host.Devices.GPUs))
	return hostSpec(host, o.extra.devices(), cdiOpts, stderr)
}

// openSpecHost opens the host for a spec: its devices discovered through
// procfs, so NVML is not started (hundreds of milliseconds to seconds on
// GPUs without persistence mode), and again with NVML first
// (devices.Auto) only when the spec names MIG devices by UUID, which
// procfs lacks. A simulated host (d.NVML set) is opened with its NVML.
func openSpecHost(d *driver.Options, opts *cdispec.Options) (*nvcontainer.Host, error) {
	if d.NVML != nil {
		return nvcontainer.OpenHost(context.Background(), d, "")
	}
	host, err := nvcontainer.OpenHost(context.Background(), d, devices.Procfs)
	if err != nil || !namesByUUID(opts) || !host.Devices.LacksMIGUUIDs() {
		return host, err
	}
	return nvcontainer.OpenHost(context.Background(), d, devices.Auto)
}

// namesByUUID says whether the spec names devices by UUID (the default
// strategies do).
func namesByUUID(opts *cdispec.Options) bool {
	return opts == nil || len(opts.NameStrategies) == 0 || slices.Contains(opts.NameStrategies, cdispec.NameUUID)
}

// hostSpec plans every device and capability of host, as
// cdispec.FromHost does, prints the plan's warnings (a driver file
// the host lacks) to stderr, and writes the plan as a CDI spec.
func hostSpec(host *nvcontainer.Host, devs request.Devices, opts *cdispec.Options, stderr io.Writer) (*specs.Spec, error) {
	req := &request.Request{Devices: devs, Capabilities: capabilities.All}
	plan, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil)
	if err != nil {
		return nil, fmt.Errorf("generating CDI spec: %w", err)
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(stderr, "nvidia-ctk: warning: %s\n", w)
	}
	return cdispec.FromPlan(plan, opts)
}

// outputFormat is --format, or the --output file's extension, or yaml.
func (o *generateOptions) outputFormat() (string, error) {
	ext := strings.TrimPrefix(filepath.Ext(o.output), ".")
	if ext == "yml" {
		ext = cdispec.FormatYAML
	}
	known := []string{cdispec.FormatJSON, cdispec.FormatYAML}
	switch {
	case o.format != "" && !slices.Contains(known, o.format):
		return "", fmt.Errorf("cdi generate: unknown --format %q (want json or yaml)", o.format)
	case o.format != "" && slices.Contains(known, ext) && ext != o.format:
		return "", fmt.Errorf("cdi generate: --format %s does not match --output %q", o.format, o.output)
	case o.format != "":
		return o.format, nil
	case slices.Contains(known, ext):
		return ext, nil
	}
	return cdispec.FormatYAML, nil
}

func (o *generateOptions) cdiOptions() (*cdispec.Options, error) {
	c := &cdispec.Options{Kind: o.vendor + "/" + o.class, NoAllDevice: o.noAll, HookPath: o.hookPath,
		NoAdditionalGIDs: slices.Contains(o.featureFlags, featureNoAdditionalGIDs)}
	known := []cdispec.NameStrategy{cdispec.NameIndex, cdispec.NameUUID, cdispec.NameTypeIndex}
	for _, s := range o.strategies {
		if !slices.Contains(known, cdispec.NameStrategy(s)) {
			return nil, fmt.Errorf("cdi generate: unknown --device-name-strategy %q (want index, uuid or type-index)", s)
		}
		if !slices.Contains(c.NameStrategies, cdispec.NameStrategy(s)) {
			c.NameStrategies = append(c.NameStrategies, cdispec.NameStrategy(s))
		}
	}
	if len(c.NameStrategies) == 0 {
		return nil, errors.New("cdi generate: --device-name-strategy needs at least one strategy")
	}
	if !filepath.IsAbs(o.hookPath) {
		return nil, fmt.Errorf("cdi generate: --hook-path %q is not an absolute path", o.hookPath)
	}
	return c, nil
}

// driverOptions are the host's roots, or those of a simulated host.
func (o *generateOptions) driverOptions(stderr io.Writer) (*driver.Options, error) {
	if o.simulate != "" {
		return o.simulateHost(stderr)
	}
	if len(o.simulateMIG) > 0 {
		return nil, errors.New("cdi generate: --simulate-mig needs --simulate")
	}
	devRoot := o.devRoot
	if devRoot == "" {
		devRoot = o.driverRoot
	}
	return &driver.Options{Roots: driver.Roots{Driver: o.driverRoot, Proc: o.procRoot, Dev: filepath.Join(devRoot, "dev"), Sys: o.sysRoot}, ToolkitLibraries: true}, nil
}

// simulateHost generates the --simulate machine into a new temp dir,
// which cleanup removes unless --simulate-keep keeps it (the spec's host
// paths point into it).
func (o *generateOptions) simulateHost(stderr io.Writer) (*driver.Options, error) {
	if o.driverRoot != "/" || o.devRoot != "" || o.procRoot != "/proc" || o.sysRoot != "/sys" {
		return nil, errors.New("cdi generate: --simulate cannot be combined with --driver-root, --dev-root, --proc-root or --sys-root")
	}
	mig, err := parseSimulateMIG(o.simulateMIG)
	if err != nil {
		return nil, err
	}
	m, err := nvctest.ParseMachine(o.simulate)
	if err != nil {
		return nil, fmt.Errorf("cdi generate: unknown --simulate machine %q (want one of %s)", o.simulate, machineNames())
	}
	h, err := nvctest.GenerateTemp(m, &nvctest.Options{MIG: mig, RealNodes: os.Geteuid() == 0})
	if err != nil {
		return nil, fmt.Errorf("cdi generate: simulating %s: %w", m, err)
	}
	o.simDir = h.Roots.Driver
	fate := "removed at exit (--simulate-keep keeps it for the spec's host paths)"
	if o.simulateKeep {
		fate = "kept for the spec; remove it when done"
	}
	what := "fake NVML, driver " + h.DriverVersion
	switch {
	case m.IsTegra():
		what = "Tegra, L4T " + h.DriverVersion + ", CSV mode"
	case m == nvctest.WSL:
		what = "WSL2, no NVML, driver " + h.DriverVersion
	}
	fmt.Fprintf(stderr, "nvidia-ctk: SIMULATED host %q (%s) generated in %s, %s. "+
		"Nothing in this spec describes this machine.\n", o.simulate, what, h.Roots.Driver, fate)
	return &driver.Options{Roots: h.Roots, NVML: h.NVML, ToolkitLibraries: true}, nil
}

// cleanup removes the --simulate host unless --simulate-keep asks to keep
// it, whether generate succeeded or not.
func (o *generateOptions) cleanup() {
	if o.simDir != "" && !o.simulateKeep {
		os.RemoveAll(o.simDir)
	}
}

// machineNames lists the machines --simulate takes.
func machineNames() string {
	var names []string
	for _, m := range nvctest.Machines() {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}

// parseSimulateMIG reads --simulate-mig values: "1=3g.20gb,1g.5gb".
func parseSimulateMIG(values []string) (map[int][]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	mig := map[int][]string{}
	for _, v := range values {
		gpu, profiles, _ := strings.Cut(v, "=")
		i, err := strconv.Atoi(gpu)
		if err != nil || i < 0 {
			return nil, fmt.Errorf("cdi generate: --simulate-mig %q: want INDEX=PROFILE,... (e.g. 0=3g.20gb,3g.20gb)", v)
		}
		mig[i] = nil
		if profiles != "" {
			mig[i] = strings.Split(profiles, ",")
		}
	}
	return mig, nil
}
