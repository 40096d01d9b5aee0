package toolkit

import (
	"fmt"

	cdispecs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/tegra"
)

// IsCSVHost reports whether auto mode is csv on the host cfg's
// [nvidia-container-cli] root names ("": this host), by tegra.CSVMode: a
// Tegra host (/etc/nv_tegra_release in the root, or a Tegra SoC family
// in /sys) where /proc/driver/nvidia does not exist. It runs at every
// container start in auto mode; on a discrete-GPU host one stat answers.
func IsCSVHost(cfg *Config) bool {
	var roots driver.Roots
	if cfg != nil {
		roots.Driver = cfg.CLI.Root
	}
	ok, _ := tegra.CSVMode(roots)
	return ok
}

// csvDecision is the csv mode decision for req: its devices as names of
// kind JitCDIKind.
func csvDecision(req *request.Request) *ModeDecision {
	return &ModeDecision{Mode: ModeCSV, Request: req, Devices: QualifyDevices(req, JitCDIKind)}
}

// CSVFiles are the mount spec files a container that asks for req reads
// under cfg: the *.csv files of modes.csv.mount-spec-path (a host path,
// default tegra.DefaultMountSpecPath), all of them when the container's
// NVIDIA_REQUIRE_JETPACK is csv-mounts=all, else only the base files
// (devices.csv, drivers.csv, l4t.csv), as the toolkit selects them.
func CSVFiles(cfg *Config, req *request.Request) ([]string, error) {
	dir := tegra.DefaultMountSpecPath
	if cfg != nil && cfg.Runtime.Modes.CSV.MountSpecPath != "" {
		dir = cfg.Runtime.Modes.CSV.MountSpecPath
	}
	files, err := tegra.Files("/", dir)
	if err != nil {
		return nil, err
	}
	jetpack := ""
	if req != nil {
		jetpack = req.Jetpack
	}
	return tegra.SelectFiles(files, jetpack), nil
}

// CSVSpec makes the CDI spec (kind JitCDIKind) of the devices ids ("all"
// or "0") for a container that asks for req, from the mount specs
// [CSVFiles] selects, found on the host below cfg's
// [nvidia-container-cli] root (and opts' dev root): the plan of
// nvcontainer.NewCSVPlan without a rootfs, written with
// cdispec.FromPlan. Mount spec files that do not exist are skipped; no
// file at all is an error wrapping tegra.ErrNotTegra.
func CSVSpec(cfg *Config, req *request.Request, ids []string, opts *JitOptions) (*cdispecs.Spec, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	var o JitOptions
	if opts != nil {
		o = *opts
	}
	files, err := CSVFiles(cfg, req)
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	roots := driver.Roots{Driver: cfg.CLI.Root}
	if o.Roots != nil && o.Roots.Roots.Dev != "" {
		roots.Dev = o.Roots.Roots.Dev
	}
	h, err := nvcontainer.OpenCSVHost(roots, "/", files)
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	if len(h.Files) == 0 {
		return nil, fmt.Errorf("csv: no mount spec file in nvidia-container-runtime.modes.csv.mount-spec-path (read %q): %w", files, tegra.ErrNotTegra)
	}
	plan, err := nvcontainer.NewCSVPlan(h, jitRequest(req, ids), nvcontainer.Container{}, nil)
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	return cdispec.FromPlan(plan, &cdispec.Options{Kind: JitCDIKind, HookPath: o.HookPath})
}
