package nvcontainer_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/requirement"
)

func gpuIndices(p *nvcontainer.Plan) []int {
	var out []int
	for _, g := range p.GPUs {
		out = append(out, g.Index)
	}
	return out
}

// TestPlanDeviceSelection checks the ID forms NVIDIA_VISIBLE_DEVICES takes
// and that exactly the selected GPUs' nodes and rules are planned.
func TestPlanDeviceSelection(t *testing.T) {
	h := newTestHost(t, nil)
	g3 := h.host.Devices.GPUs[3]
	for _, tc := range []struct {
		env  string
		want []int
	}{
		{"all", []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"none", nil},
		{"1,0", []int{1, 0}},
		{g3.UUID, []int{3}},
		{"0:4e:0.0", []int{3}}, // short PCI bus id of GPU 3
		{"6," + g3.UUID + ",6", []int{6, 3}},
	} {
		p := h.plan(t, privReq(t, "NVIDIA_VISIBLE_DEVICES="+tc.env, "NVIDIA_DRIVER_CAPABILITIES=utility"), debianRootfs, nil)
		if got := gpuIndices(p); !slices.Equal(got, tc.want) {
			t.Errorf("%s: GPUs %v, want %v", tc.env, got, tc.want)
		}
		var nodes []string
		for _, m := range p.Mounts {
			if m.Kind == nvcontainer.MountDevice && m.For != "" {
				nodes = append(nodes, m.Target)
			}
		}
		var want []string
		for _, i := range tc.want {
			want = append(want, h.host.Devices.GPUs[i].Node.Path)
		}
		if !slices.Equal(nodes, want) {
			t.Errorf("%s: GPU nodes %v, want %v", tc.env, nodes, want)
		}
		if got := len(p.CgroupRules); got != 1+len(tc.want) { // nvidiactl + GPUs
			t.Errorf("%s: %d cgroup rules %+v", tc.env, got, p.CgroupRules)
		}
	}
}

// TestPlanErrors checks that refusals stop the plan with
// nvidia-container-cli's message, before the rootfs is looked at (the
// rootfs given does not exist).
func TestPlanErrors(t *testing.T) {
	h := newTestHost(t, nil)
	for _, tc := range []struct {
		env   []string
		stage nvcontainer.Stage
		msg   string
		is    error
	}{
		{[]string{"NVIDIA_VISIBLE_DEVICES=9"}, nvcontainer.StageDevice, "device error: 9: unknown device", devices.ErrUnknownDevice},
		{[]string{"NVIDIA_VISIBLE_DEVICES=0,GPU-nope"}, nvcontainer.StageDevice, "device error: GPU-nope: unknown device", devices.ErrUnknownDevice},
		{[]string{"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_REQUIRE_CUDA=cuda>=12.8"}, nvcontainer.StageRequirement,
			"requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container",
			requirement.ErrUnsatisfied},
		{[]string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_BRAND=brand=geforce arch>=9.0"}, nvcontainer.StageRequirement,
			"requirement error: unsatisfied condition: brand=geforce", requirement.ErrUnsatisfied},
		{[]string{"NVIDIA_VISIBLE_DEVICES=none", "NVIDIA_REQUIRE_DRIVER=driver<500"}, nvcontainer.StageRequirement,
			"requirement error: unsatisfied condition: driver<500", requirement.ErrUnsatisfied},
		{[]string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_X=cuda>=12.x"}, nvcontainer.StageRequirement,
			"", requirement.ErrInvalid},
		{[]string{"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_MIG_CONFIG_DEVICES=0"}, nvcontainer.StageMIGConfig,
			"mig-config error: 0: only 'all' devices are currently supported", devices.ErrInvalid},
		{[]string{"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_MIG_MONITOR_DEVICES=1"}, nvcontainer.StageMIGMonitor,
			"mig-monitor error: 1: only 'all' devices are currently supported", devices.ErrInvalid},
		{[]string{"NVIDIA_VISIBLE_DEVICES=void"}, nvcontainer.StageInput, "input error: not a GPU container", nvcontainer.ErrNotGPUContainer},
	} {
		req := privReq(t, tc.env...)
		p, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{Rootfs: "/nonexistent/rootfs"}, nil)
		var pe *nvcontainer.PlanError
		if p != nil || !errors.As(err, &pe) || pe.Stage != tc.stage || !errors.Is(err, tc.is) {
			t.Errorf("%v: plan %v, error %v", tc.env, p != nil, err)
			continue
		}
		if tc.msg != "" && err.Error() != tc.msg {
			t.Errorf("%v:\n got %q\nwant %q", tc.env, err, tc.msg)
		}
	}
}

// TestPlanRequirementsMet records the checked requirements; a disabled
// check plans despite an unmet one.
func TestPlanRequirementsMet(t *testing.T) {
	h := newTestHost(t, nil)
	p := h.plan(t, privReq(t, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=550"), debianRootfs, nil)
	if !slices.Equal(p.Requirements, []string{"cuda>=12.4 brand=tesla,driver>=550"}) {
		t.Errorf("requirements %q", p.Requirements)
	}
	req := privReq(t, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=99.0", "NVIDIA_DISABLE_REQUIRE=1")
	if p := h.plan(t, req, debianRootfs, nil); len(p.Requirements) != 0 {
		t.Errorf("disabled requirements recorded: %q", p.Requirements)
	}
	req = &request.Request{Devices: request.Devices{Mode: request.DevicesAll}, Requirements: []string{"cuda>=99.0"}, DisableRequire: true}
	if _, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{}, nil); err != nil {
		t.Errorf("DisableRequire with requirements: %v", err)
	}
}

// TestPlanNoCgroupsNoDevbind checks the two configure flags: no rules, and
// no node mounts but the rules kept.
func TestPlanNoCgroupsNoDevbind(t *testing.T) {
	h := newTestHost(t, nil)
	req := capsRequest(capabilities.Of(capabilities.Compute, capabilities.Display))
	full := h.plan(t, req, debianRootfs, nil)
	noCg := h.plan(t, req, debianRootfs, &nvcontainer.PlanOptions{NoCgroups: true})
	noDev := h.plan(t, req, debianRootfs, &nvcontainer.PlanOptions{NoDevbind: true})
	if len(full.CgroupRules) != 12 || len(noCg.CgroupRules) != 0 {
		t.Errorf("rules: %d with cgroups, %d without", len(full.CgroupRules), len(noCg.CgroupRules))
	}
	if len(mountTargets(noCg, nvcontainer.MountDevice)) != 12 {
		t.Errorf("NoCgroups dropped node mounts: %v", mountTargets(noCg, nvcontainer.MountDevice))
	}
	if got := mountTargets(noDev, nvcontainer.MountDevice); len(got) != 0 {
		t.Errorf("NoDevbind kept node mounts %v", got)
	}
	if !slices.Equal(noDev.CgroupRules, full.CgroupRules) {
		t.Errorf("NoDevbind changed the rules: %+v", noDev.CgroupRules)
	}
	if len(noDev.Mounts) != len(full.Mounts)-12 {
		t.Errorf("NoDevbind: %d mounts, full %d", len(noDev.Mounts), len(full.Mounts))
	}
}

// TestPlanIMEX binds requested channels that exist and warns about those
// that do not.
func TestPlanIMEX(t *testing.T) {
	h := newTestHost(t, &fakehost.Options{IMEXChannels: 2})
	req := privReq(t, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=1,7", "NVIDIA_DRIVER_CAPABILITIES=utility")
	p := h.plan(t, req, debianRootfs, nil)
	m, ok := findMount(p, "/dev/nvidia-caps-imex-channels/channel1")
	if !ok || m.Device == nil || m.Device.Major != fakehost.MajorIMEX || m.Device.Minor != 1 || m.For != "" {
		t.Errorf("channel1: %+v (%v)", m, ok)
	}
	if !hasRule(p, fakehost.MajorIMEX, 1) || hasRule(p, fakehost.MajorIMEX, 7) {
		t.Errorf("rules %+v", p.CgroupRules)
	}
	if _, ok := findMount(p, "/dev/nvidia-caps-imex-channels/channel7"); ok {
		t.Error("a missing channel was mounted")
	}
	if !slices.Contains(p.Warnings, "missing IMEX channel node /dev/nvidia-caps-imex-channels/channel7") {
		t.Errorf("warnings %q", p.Warnings)
	}
}

// TestPlanRequirementsWithoutNVML: on a host discovered without NVML (the
// generated host's libnvidia-ml.so.1 is no NVML, so Auto falls back to
// procfs), brand and compute capability are unknown, and a requirement on
// them fails saying so, where it used to pass. Arch and brand still pass
// without a selected device; the driver version, from procfs, is compared
// as usual, and the CUDA version is the driver's table answer (12.4 for
// the host's 550.54.15).
func TestPlanRequirementsWithoutNVML(t *testing.T) {
	fh, err := fakehost.Generate(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	host, err := nvcontainer.OpenHost(context.Background(), &driver.Options{Root: fh.Root, ProcRoot: fh.ProcRoot, DevRoot: fh.DevRoot}, devices.Auto)
	if err != nil || host.Devices.Backend != devices.Procfs || host.Devices.NVMLError == "" {
		t.Fatalf("host without NVML: %v, %+v", err, host)
	}
	for _, tc := range []struct {
		devs, req string
		fact      string // "" when the plan must be made, "-" when refused on known facts
	}{
		{"0", "cuda>=99.0", "-"}, // the CUDA version is the driver table's
		{"none", "cuda>=1.0", ""},
		{"0", "cuda>=12.4", ""},
		{"0", "cuda>=12.5 driver>=550", ""},
		{"0", "brand=geforce", "device brand"},
		{"0", "arch>=9.9", "device compute capability"},
		{"0,1", "arch<99", "device compute capability"},
		{"none", "arch>=9.9", ""},
		{"none", "brand=geforce", ""},
		{"0", "driver>=550", ""},
		{"0", "cuda>=12.0 driver>=550", ""},
	} {
		req := privReq(t, "NVIDIA_VISIBLE_DEVICES="+tc.devs, "NVIDIA_REQUIRE_X="+tc.req)
		_, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil)
		var ue *requirement.UnsatisfiedError
		switch {
		case tc.fact == "" && err != nil:
			t.Errorf("%s on %s: %v", tc.req, tc.devs, err)
		case tc.fact == "":
		case tc.fact == "-":
			if !errors.Is(err, requirement.ErrUnsatisfied) || errors.Is(err, requirement.ErrUnknownFact) {
				t.Errorf("%s on %s: %v, want refused on known facts", tc.req, tc.devs, err)
			}
		case !errors.As(err, &ue) || !errors.Is(err, requirement.ErrUnknownFact) || ue.Fact != tc.fact:
			t.Errorf("%s on %s: %v, want the %s unknown", tc.req, tc.devs, err, tc.fact)
		case ue.Why != host.Devices.NVMLError || !strings.HasPrefix(err.Error(), "requirement error: unsatisfied condition: "+tc.req+" (cannot check"):
			t.Errorf("%s on %s: %q", tc.req, tc.devs, err)
		}
	}
	req := privReq(t, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=99.0", "NVIDIA_DISABLE_REQUIRE=true")
	if _, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil); err != nil {
		t.Errorf("NVIDIA_DISABLE_REQUIRE: %v", err)
	}
}
