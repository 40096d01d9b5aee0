package main

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/tegra"
)

// csvHost is a Tegra host's roots and the mount spec files of its
// DefaultMountSpecPath, paths inside roots.Driver (read inside it).
type csvHost struct {
	roots driver.Roots
	files []string
}

// openCSV returns the host in CSV mode when it is a Tegra host without a
// procfs driver (tegra.CSVMode: the simulated Jetson, or a --root naming
// one); nil otherwise.
func (a *app) openCSV() (*csvHost, error) {
	ho := a.cmd.HostOptions(nil, nil)
	if err := a.simulateHost(ho); err != nil {
		return nil, &nvcli.Error{Prefix: nvcli.PrefixInput, Err: err}
	}
	r := ho.Driver.Roots
	ok, why := tegra.CSVMode(r) // a discrete-GPU host: one stat, at every configure
	if !ok {
		return nil, nil
	}
	root := orDefault(r.Driver, "/")
	files, err := tegra.Files(root, tegra.DefaultMountSpecPath)
	if err != nil {
		return nil, &nvcli.Error{Prefix: nvcli.PrefixInput, Err: err}
	}
	a.log.Info("Tegra host: CSV mode", "root", root, "why", why, "mount-specs", len(files))
	return &csvHost{roots: driver.Roots{Driver: root, Dev: r.Dev}, files: files}, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// open reads the files selected by jetpack (NVIDIA_REQUIRE_JETPACK's
// value) and finds their entries.
func (c *csvHost) open(jetpack string) (*nvcontainer.CSVHost, error) {
	h, err := nvcontainer.OpenCSVHost(c.roots, c.roots.Driver, tegra.SelectFiles(c.files, jetpack))
	if err != nil {
		return nil, &nvcli.Error{Prefix: nvcli.PrefixInput, Err: err}
	}
	return h, nil
}

// csvCommand runs info, list or configure in CSV mode.
func (a *app) csvCommand(stdout io.Writer, c *csvHost) error {
	switch a.cmd.Name {
	case nvcli.CommandInfo:
		return a.csvInfo(stdout, c)
	case nvcli.CommandList:
		return a.csvList(stdout, c)
	}
	return a.csvConfigure(stdout, c)
}

// csvInfo prints the L4T release, the mount spec files and what the base
// files give, in info's label layout.
func (a *app) csvInfo(stdout io.Writer, c *csvHost) error {
	h, err := c.open(tegra.MountsAll)
	if err != nil {
		return err
	}
	base, err := c.open("")
	if err != nil {
		return err
	}
	var names []string
	for _, f := range h.Files {
		names = append(names, filepath.Base(f))
	}
	w := bufio.NewWriter(stdout)
	line := func(label, value string) { fmt.Fprintf(w, "%-15s %s\n", label+":", value) }
	line("NVRM version", "N/A (Tegra, CSV mode)")
	line("L4T release", orDefault(h.Release, "unknown"))
	line("Mount specs", strings.Join(names, ", "))
	fmt.Fprintln(w)
	line("Device Index", nvcontainer.CSVDevice)
	line("Model", "Tegra iGPU")
	line("Device nodes", fmt.Sprint(len(base.Mounts.Nodes)))
	line("Files", fmt.Sprint(len(base.Mounts.Files)))
	line("Symlinks", fmt.Sprint(len(base.Mounts.Links)))
	for _, warn := range base.Mounts.Warnings {
		a.log.Warn(warn)
	}
	return w.Flush()
}

// csvList prints the container paths the base mount specs give: device
// nodes, then directories and files, then links.
func (a *app) csvList(stdout io.Writer, c *csvHost) error {
	h, err := c.open("")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	for _, n := range h.Mounts.Nodes {
		fmt.Fprintln(w, n.Path)
	}
	for _, f := range h.Mounts.Files {
		fmt.Fprintln(w, f.Path)
	}
	for _, l := range h.Mounts.Links {
		fmt.Fprintln(w, l.Path)
	}
	return w.Flush()
}

// csvConfigure plans (nvcontainer.NewCSVPlan) and applies, or prints with
// --dry-run. --require=csv-mounts=all reads every mount spec file (the
// hook passes no NVIDIA_REQUIRE_JETPACK); other requirements are not
// checked in CSV mode.
func (a *app) csvConfigure(stdout io.Writer, c *csvHost) error {
	ctr, procRoot, req, err := a.target()
	if err != nil {
		return err
	}
	jetpack := ""
	if slices.Contains(req.Requirements, tegra.MountsAll) {
		jetpack = tegra.MountsAll
	}
	req.Requirements = slices.DeleteFunc(req.Requirements, func(r string) bool { return strings.HasPrefix(r, "csv-mounts=") })
	h, err := c.open(jetpack)
	if err != nil {
		return err
	}
	return a.applyCSV(stdout, h, req, ctr, procRoot)
}

func (a *app) applyCSV(stdout io.Writer, h *nvcontainer.CSVHost, req *request.Request, ctr nvcontainer.Container, procRoot string) error {
	o := &a.cmd.Configure
	plan, err := nvcontainer.NewCSVPlan(h, req, ctr, &nvcontainer.PlanOptions{NoCgroups: o.NoCgroups, NoDevbind: o.NoDevbind, ProcRoot: procRoot})
	if err != nil {
		return nvcli.ErrorFor(err)
	}
	return a.run(stdout, plan, ctr, &nvcontainer.ApplyOptions{ProcRoot: procRoot}, "configured (CSV mode)")
}
