package nvcontainer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		t.Run(tc.env, func(t *testing.T) {
			p := h.plan(t, privReq(t, "NVIDIA_VISIBLE_DEVICES="+tc.env, "NVIDIA_DRIVER_CAPABILITIES=utility"), debianRootfs, nil)
			assert.Equal(t, tc.want, gpuIndices(p), "%s: GPUs", tc.env)
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
			assert.Equal(t, want, nodes, "%s: GPU nodes", tc.env)
			assert.Len(t, p.CgroupRules, 1+len(tc.want), "%s: cgroup rules (nvidiactl + GPUs)", tc.env)
		})
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
		t.Run(strings.Join(tc.env, ","), func(t *testing.T) {
			req := privReq(t, tc.env...)
			p, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{Rootfs: "/nonexistent/rootfs"}, nil)
			var pe *nvcontainer.PlanError
			require.Nil(t, p, "%v: plan made (error %v)", tc.env, err)
			require.ErrorAs(t, err, &pe, "%v", tc.env)
			require.Equal(t, tc.stage, pe.Stage, "%v: error %v", tc.env, err)
			require.ErrorIs(t, err, tc.is, "%v", tc.env)
			if tc.msg != "" {
				assert.EqualError(t, err, tc.msg, "%v", tc.env)
			}
		})
	}
}

// TestPlanRequirementsMet records the checked requirements; a disabled
// check plans despite an unmet one.
func TestPlanRequirementsMet(t *testing.T) {
	h := newTestHost(t, nil)
	p := h.plan(t, privReq(t, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=550"), debianRootfs, nil)
	assert.Equal(t, []string{"cuda>=12.4 brand=tesla,driver>=550"}, p.Requirements, "requirements")
	req := privReq(t, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=99.0", "NVIDIA_DISABLE_REQUIRE=1")
	p = h.plan(t, req, debianRootfs, nil)
	assert.Empty(t, p.Requirements, "disabled requirements recorded")
	req = &request.Request{Devices: request.Devices{Mode: request.DevicesAll}, Requirements: []string{"cuda>=99.0"}, DisableRequire: true}
	_, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{}, nil)
	assert.NoError(t, err, "DisableRequire with requirements")
}

// TestPlanNoCgroupsNoDevbind checks the two configure flags: no rules, and
// no node mounts but the rules kept.
func TestPlanNoCgroupsNoDevbind(t *testing.T) {
	h := newTestHost(t, nil)
	req := capsRequest(capabilities.Of(capabilities.Compute, capabilities.Display))
	full := h.plan(t, req, debianRootfs, nil)
	noCg := h.plan(t, req, debianRootfs, &nvcontainer.PlanOptions{NoCgroups: true})
	noDev := h.plan(t, req, debianRootfs, &nvcontainer.PlanOptions{NoDevbind: true})
	const nodes = 12 + 8*2 // control nodes, GPUs, and each GPU's DRM card and render node (display)
	assert.Len(t, full.CgroupRules, nodes, "rules with cgroups")
	assert.Empty(t, noCg.CgroupRules, "rules without cgroups")
	assert.Len(t, mountTargets(noCg, nvcontainer.MountDevice), nodes, "NoCgroups dropped node mounts")
	assert.Empty(t, mountTargets(noDev, nvcontainer.MountDevice), "NoDevbind kept node mounts")
	assert.Equal(t, full.CgroupRules, noDev.CgroupRules, "NoDevbind changed the rules")
	assert.Len(t, noDev.Mounts, len(full.Mounts)-nodes, "NoDevbind: mounts, full %d", len(full.Mounts))
	assert.Len(t, full.Symlinks, len(noDev.Symlinks)+8*2, "NoDevbind: by-path links")
}

// TestPlanIMEX binds requested channels that exist and warns about those
// that do not.
func TestPlanIMEX(t *testing.T) {
	h := newTestHost(t, &fakehost.Options{IMEXChannels: 2})
	req := privReq(t, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=1,7", "NVIDIA_DRIVER_CAPABILITIES=utility")
	p := h.plan(t, req, debianRootfs, nil)
	m, ok := findMount(p, "/dev/nvidia-caps-imex-channels/channel1")
	assert.True(t, ok, "channel1: not bound")
	if assert.NotNil(t, m.Device, "channel1: %+v", m) {
		assert.EqualValues(t, fakehost.MajorIMEX, m.Device.Major, "channel1: %+v", *m.Device)
		assert.EqualValues(t, 1, m.Device.Minor, "channel1: %+v", *m.Device)
	}
	assert.Empty(t, m.For, "channel1: %+v", m)
	assert.True(t, hasRule(p, fakehost.MajorIMEX, 1), "rules %+v", p.CgroupRules)
	assert.False(t, hasRule(p, fakehost.MajorIMEX, 7), "rules %+v", p.CgroupRules)
	_, ok = findMount(p, "/dev/nvidia-caps-imex-channels/channel7")
	assert.False(t, ok, "a missing channel was mounted")
	assert.Contains(t, p.Warnings, "missing IMEX channel node /dev/nvidia-caps-imex-channels/channel7", "warnings")
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
	require.NoError(t, err)
	host, err := nvcontainer.OpenHost(context.Background(), &driver.Options{Roots: driver.Roots{Driver: fh.Root, Proc: fh.ProcRoot, Dev: fh.DevRoot}}, devices.Auto)
	require.NoError(t, err, "host without NVML")
	require.Equal(t, devices.Procfs, host.Devices.Backend, "host without NVML: %+v", host)
	require.NotEmpty(t, host.Devices.NVMLError, "host without NVML: %+v", host)
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
		t.Run(tc.req+" on "+tc.devs, func(t *testing.T) {
			req := privReq(t, "NVIDIA_VISIBLE_DEVICES="+tc.devs, "NVIDIA_REQUIRE_X="+tc.req)
			_, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil)
			var ue *requirement.UnsatisfiedError
			switch tc.fact {
			case "":
				assert.NoError(t, err, "%s on %s", tc.req, tc.devs)
			case "-":
				assert.ErrorIs(t, err, requirement.ErrUnsatisfied, "%s on %s, want refused on known facts", tc.req, tc.devs)
				assert.NotErrorIs(t, err, requirement.ErrUnknownFact, "%s on %s, want refused on known facts", tc.req, tc.devs)
			default:
				require.ErrorAs(t, err, &ue, "%s on %s, want the %s unknown", tc.req, tc.devs, tc.fact)
				require.ErrorIs(t, err, requirement.ErrUnknownFact, "%s on %s, want the %s unknown", tc.req, tc.devs, tc.fact)
				require.Equal(t, tc.fact, ue.Fact, "%s on %s: %v, want the %s unknown", tc.req, tc.devs, err, tc.fact)
				assert.Equal(t, host.Devices.NVMLError, ue.Why, "%s on %s: %q", tc.req, tc.devs, err)
				assert.True(t, strings.HasPrefix(err.Error(), "requirement error: unsatisfied condition: "+tc.req+" (cannot check"), "%s on %s: %q", tc.req, tc.devs, err)
			}
		})
	}
	req := privReq(t, "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=99.0", "NVIDIA_DISABLE_REQUIRE=true")
	_, err = nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil)
	assert.NoError(t, err, "NVIDIA_DISABLE_REQUIRE")
}
