package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/tegra"
)

// csvFlags are cdi generate's --csv.* flags, as NVIDIA's tool has them.
type csvFlags struct {
	files, ignore []string
	compatRoot    string
	filesSet      func() bool
}

func (c *csvFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.files, "csv.file", tegra.DefaultFiles(tegra.DefaultMountSpecPath),
		"csv mode: the mount spec files (repeatable; default: the base files in the driver root's "+tegra.DefaultMountSpecPath+")")
	fs.StringSliceVar(&c.ignore, "csv.ignore-pattern", nil, "csv mode: leave out the sym entries a `PATTERN` matches (a glob; **/NAME matches the base name)")
	fs.StringVar(&c.compatRoot, "csv.compat-container-root", "", "accepted for NVIDIA's tool (the CUDA compat hook needs NVML, which a Jetson in CSV mode lacks)")
	c.filesSet = func() bool { return fs.Changed("csv.file") }
}

// csvMode reports whether the spec comes from the CSV mount specs: --mode
// csv, or --mode auto on a Tegra host whose procfs has no NVIDIA driver
// (tegra.CSVMode), as NVIDIA's tool resolves auto.
func (o *generateOptions) csvMode(d *driver.Options) bool {
	switch o.extra.mode {
	case modeCSV:
		return true
	case modeAuto:
		ok, _ := tegra.CSVMode(d.Roots)
		return ok
	}
	return false
}

// csvSpec writes the spec of the Tegra host d describes: the plan of
// nvcontainer.NewCSVPlan for --device-id (all, or 0) written as CDI. The
// default --csv.file lie in the driver root and are read inside it (a
// link never leads out of it); files given are host paths.
func (o *generateOptions) csvSpec(d *driver.Options, opts *cdispec.Options, stderr io.Writer, log *slog.Logger) (*specs.Spec, error) {
	files, specRoot := o.csv.files, "/"
	if !o.csv.filesSet() {
		files, specRoot = tegra.DefaultFiles(tegra.DefaultMountSpecPath), d.Roots.Driver
	}
	if o.csv.compatRoot != "" {
		log.Warn("--csv.compat-container-root is not used: no CUDA compat hook in CSV mode", "root", o.csv.compatRoot)
	}
	es, err := tegra.Load(specRoot, files)
	if err != nil {
		return nil, fmt.Errorf("cdi generate: %w", err)
	}
	if len(es) == 0 {
		return nil, fmt.Errorf("cdi generate: --mode csv: no entry in %q: %w", files, tegra.ErrNotTegra)
	}
	es = tegra.IgnoreSymlinks(es, o.csv.ignore)
	m, err := tegra.Resolve(es, driver.Roots{Driver: d.Roots.Driver, Dev: d.Roots.Dev})
	if err != nil {
		return nil, fmt.Errorf("cdi generate: %w", err)
	}
	rel, _ := tegra.Release(d.Roots.Driver)
	h := &nvcontainer.CSVHost{Root: d.Roots.Driver, Release: rel, Files: files, Mounts: m}
	log.Info("Tegra host opened (CSV mode)", "driver-root", d.Roots.Driver, "l4t", rel, "nodes", len(m.Nodes), "files", len(m.Files))
	req := &request.Request{Devices: o.extra.devices()}
	plan, err := nvcontainer.NewCSVPlan(h, req, nvcontainer.Container{}, nil)
	if err != nil {
		return nil, fmt.Errorf("generating CDI spec: %w", err)
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(stderr, "nvidia-ctk: warning: %s\n", w)
	}
	return cdispec.FromPlan(plan, opts)
}
