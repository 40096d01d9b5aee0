package nvcontainer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer/request"

	"github.com/go-nvc/nvc/internal/sentinel"
)

// ErrNotGPUContainer is matched by NewPlan's error for a request that asks
// for no GPU container at all (request.DevicesVoid): there is nothing to plan, and a
// runtime should leave the container alone.
var ErrNotGPUContainer = errors.New("not a GPU container")

// Stage is a stage of NewPlan, named after the prefix nvidia-container-cli
// puts before its error message for it.
type Stage string

// The stages of NewPlan.
const (
	StageInput       Stage = "input"       // a nil host or request, a void request
	StageDevice      Stage = "device"      // an unknown or refused device ID
	StageMIGConfig   Stage = "mig-config"  // a refused NVIDIA_MIG_CONFIG_DEVICES
	StageMIGMonitor  Stage = "mig-monitor" // a refused NVIDIA_MIG_MONITOR_DEVICES
	StageRequirement Stage = "requirement" // an unmet or invalid NVIDIA_REQUIRE_*
	StageContainer   Stage = "container"   // the rootfs cannot be inspected
	StageDetection   Stage = "detection"   // the driver's files or procfs cannot be read
)

// PlanError is an error NewPlan returns: the stage that failed and why.
// Its text is nvidia-container-cli's line for the same failure,
// e.g. "requirement error: unsatisfied condition: cuda>=12.8, please update
// your driver to a newer version, or use an earlier cuda container" or
// "device error: 9: unknown device".
type PlanError struct {
	// Stage is the stage that failed.
	Stage Stage
	// Err is the cause: a *devices.DeviceIDError, an *requirement.UnsatisfiedError, an
	// *requirement.InvalidError, ErrNotGPUContainer, or an I/O error.
	Err error
}

// Error returns "<stage> error: <cause>". A device ID refused at the
// device, mig-config or mig-monitor stage prints as libnvidia-container's
// select_devices prints it, the ID first: "device error: 9: unknown
// device", "mig-config error: 0: only 'all' devices are currently
// supported".
func (e *PlanError) Error() string {
	var id *devices.DeviceIDError
	if e.Stage == StageDevice || e.Stage == StageMIGConfig || e.Stage == StageMIGMonitor {
		if errors.As(e.Err, &id) {
			return string(e.Stage) + " error: " + id.ID + ": " + id.Reason
		}
	}
	return string(e.Stage) + " error: " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *PlanError) Unwrap() error { return e.Err }

func stageErr(stage Stage, err error) error {
	return &PlanError{Stage: stage, Err: err}
}

// NewPlan computes every change that configuring ctr for req needs on host,
// without changing anything. It follows nvidia-container-cli configure
// (libnvidia-container's configure, step by step):
//
//   - it selects the requested devices (Request.Devices, MIGConfig,
//     MIGMonitor) and checks the requirements (unless DisableRequire)
//     against the driver, the CUDA version and each selected GPU; any
//     failure returns a *PlanError before anything else is looked at;
//   - it picks the layout of ctr.Rootfs (Debian multiarch dirs when
//     /etc/debian_version exists in it, else /usr/lib64; the lib32 rules;
//     /usr/bin), reading the rootfs only through in-root resolution
//     (openat2 RESOLVE_IN_ROOT or its emulation), so a symlink the image
//     planted never leads to a host file, and, when ctr.PID is set, as
//     that process sees it (<PlanOptions.ProcRoot>/PID/root), so the
//     runtime's mounts in the container (a volume at /usr/local/cuda)
//     count, as in libnvidia-container's supervised mode;
//   - it lists the /proc/driver/nvidia tmpfs (copies of params, with
//     ModifyDeviceFiles forced to 0, version and registry; binds of the
//     selected GPUs' gpus/<bus id> and of MIG capabilities), the application
//     profile tmpfs with graphics, the bind mounts in libnvidia-container's
//     order with its flags, the symlinks, the device cgroup rules, the
//     loader cache dirs and the CUDA forward-compatibility decision.
//
// ctr.Rootfs is the host path of the container's root filesystem: absolute,
// not "/", not a symlink. An empty ctr.Rootfs plans for no container in
// particular (see Layout.HostPaths): that is the plan a CDI spec is made
// from.
//
// NewPlan reads the host's small procfs files (params, version, registry)
// and, when the plan has a rootfs, its /etc/debian_version, /usr/lib32,
// /usr/lib and /usr/local/cuda/compat; it is otherwise pure. The same host,
// request and rootfs give the same plan, byte for byte once encoded.
//
// Decisions where libnvidia-container leaves room:
//
//   - request.CompatDefault (no --cuda-compat-mode) is planned as request.CompatLdconfig,
//     not as nvidia-container-cli's mount: the newer libraries from the
//     image are preferred through the loader cache and nothing from the
//     image is mounted (CVE-2024-0132, CVE-2025-23359). Plan.CUDACompat.Mode
//     records the mode used.
//   - A requested IMEX channel whose node is missing on the host is left out
//     with a warning (libnvidia-container neither fails nor mounts it
//     reliably).
//   - Library majors are compared as numbers, not as strings of the
//     library's digit count.
func NewPlan(host *Host, req *request.Request, ctr Container, opts *PlanOptions) (*Plan, error) {
	return NewPlanContext(context.Background(), host, req, ctr, opts)
}

// NewPlanContext is NewPlan with ctx bounding its one step that may block:
// asking PlanOptions.NVML for facts a requirement needs.
func NewPlanContext(ctx context.Context, host *Host, req *request.Request, ctr Container, opts *PlanOptions) (*Plan, error) {
	pl, err := newPlanner(host, req, ctr, opts)
	if err != nil {
		return nil, err
	}
	pl.ctx = ctx
	if err := pl.decide(); err != nil {
		return nil, err
	}
	if err := pl.build(); err != nil {
		return nil, err
	}
	return pl.p, nil
}

// planner holds one NewPlan call's inputs and the plan being built.
type planner struct {
	ctx  context.Context // bounds the lazy NVML query
	host *Host
	dev  *devices.Host
	req  *request.Request
	ctr  Container
	opts PlanOptions
	exp  capabilities.Set // the requested classes, expanded

	sel        *devices.Selection
	migConfig  *devices.Selection
	migMonitor *devices.Selection
	files      *driver.Files
	// compatMounts are the image's compat libraries to mount (mount
	// mode), as paths inside the rootfs.
	compatMounts []string

	p       *Plan
	proc    int // index of the /proc/driver/nvidia tmpfs in p.Tmpfs; -1: none
	targets map[string]bool
	rules   map[DeviceNumber]bool
	libs    []plannedLib // library mounts, for symlinks
	// storeBins are the WSL driver store programs bound, for their links.
	storeBins []string
}

// checkRootfs refuses a container rootfs that is relative or "/" (empty:
// no container, planned with host paths).
func checkRootfs(r string) error {
	if r != "" && (!filepath.IsAbs(r) || filepath.Clean(r) == "/") {
		return stageErr(StageInput, sentinel.Mark(fmt.Errorf("invalid rootfs directory %q: want an absolute path other than /", r), ErrInvalidRootfs))
	}
	return nil
}

func newPlanner(host *Host, req *request.Request, ctr Container, opts *PlanOptions) (*planner, error) {
	if host == nil || host.Driver == nil || host.Devices == nil {
		return nil, stageErr(StageInput, errors.New("planning needs a host with a driver and devices"))
	}
	if req == nil || !req.IsGPU() {
		return nil, stageErr(StageInput, ErrNotGPUContainer)
	}
	if err := checkCompatMode(req.CUDACompatMode); err != nil {
		return nil, stageErr(StageInput, err)
	}
	if err := checkRootfs(ctr.Rootfs); err != nil {
		return nil, err
	}
	pl := &planner{host: host, dev: host.Devices, req: req, ctr: ctr, exp: req.Capabilities.Expand(),
		proc: -1, targets: map[string]bool{}, rules: map[DeviceNumber]bool{}}
	if opts != nil {
		pl.opts = *opts
	}
	if pl.opts.GOARCH == "" {
		pl.opts.GOARCH = runtime.GOARCH
	}
	pl.p = pl.emptyPlan()
	return pl, nil
}

// emptyPlan is the plan before anything is planned: the facts it is made
// from, and empty (not null) lists where the JSON layout has lists.
func (pl *planner) emptyPlan() *Plan {
	return &Plan{
		Version:      PlanVersion,
		Container:    pl.ctr,
		Driver:       PlanDriver{Root: pl.host.Driver.Root(), Version: pl.host.Driver.Version().NVRM, CUDAVersion: pl.host.Driver.Version().CUDA},
		Capabilities: pl.req.Capabilities,
		GPUs:         []PlannedGPU{},
		Tmpfs:        []Tmpfs{},
		Mounts:       []Mount{},
		LDCache:      LDCacheUpdate{Dirs: []string{}},
	}
}

// decide does everything that may refuse the request, in
// nvidia-container-cli's order, before anything is planned.
func (pl *planner) decide() error {
	if err := pl.selectDevices(); err != nil {
		return err
	}
	if err := pl.checkRequirements(); err != nil {
		return err
	}
	if err := pl.inspectRootfs(); err != nil {
		return err
	}
	files, err := pl.host.Driver.Files(pl.req.Capabilities)
	if err != nil {
		return stageErr(StageDetection, err)
	}
	pl.files = files
	return nil
}

// build lists the changes, in the order Apply makes them.
func (pl *planner) build() error {
	pl.planWarnings()
	if err := pl.planProcfs(); err != nil {
		return err
	}
	pl.planAppProfile()
	pl.planDriverFiles()
	pl.planSymlinks()
	pl.planNodes()
	pl.planLDCache()
	return nil
}

// planWarnings carries the driver's missing-file warnings.
func (pl *planner) planWarnings() {
	for _, w := range pl.files.Warnings {
		pl.p.Warnings = append(pl.p.Warnings, w.String())
	}
}
