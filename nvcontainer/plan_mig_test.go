package nvcontainer_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
)

// migHost is a DGX A100 with GPU 1 split into two MIG devices and GPU 3
// into one.
func migHost(t *testing.T, backend devices.Backend) *testHost {
	t.Helper()
	fh, err := fakehost.Generate(t.TempDir(), &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}, 3: {"1c.3g.20gb"}}})
	require.NoError(t, err)
	return openTestHost(t, fh, backend)
}

// capMinor is the nvidia-caps minor the driver gives a GI (ci < 0) or CI
// access capability (the generated host follows nv-caps.c's table).
func capMinor(gpu uint32, gi, ci int) uint32 {
	m := 3 + gpu*135 + uint32(gi)*9
	if ci >= 0 {
		m += 1 + uint32(ci)
	}
	return m
}

// TestPlanMIGDevice checks a selected MIG device: its parent's node, and
// the access capabilities of its GPU and compute instance as proc binds,
// device nodes and rules, all attributed to the MIG device.
func TestPlanMIGDevice(t *testing.T) {
	for _, backend := range []devices.Backend{devices.NVML, devices.Procfs} {
		t.Run(string(backend), func(t *testing.T) {
			h := migHost(t, backend)
			mig := h.host.Devices.GPUs[1].MIGDevices[1]
			ids := []string{"1:1"}
			if mig.UUID != "" {
				ids = append(ids, mig.UUID)
			}
			for _, id := range ids {
				t.Run(id, func(t *testing.T) {
					p := h.plan(t, privReq(t, "NVIDIA_VISIBLE_DEVICES="+id, "NVIDIA_DRIVER_CAPABILITIES=utility"), debianRootfs, nil)
					checkMIGDevice(t, p, mig)
					checkInvariants(t, h, p)
				})
			}
		})
	}
}

func checkMIGDevice(t *testing.T, p *nvcontainer.Plan, mig devices.MIGDevice) {
	t.Helper()
	require.Equal(t, []int{1}, gpuIndices(p), "selection %+v %+v", p.GPUs, p.MIGDevices)
	require.Len(t, p.MIGDevices, 1, "selection %+v %+v", p.GPUs, p.MIGDevices)
	require.Equal(t, 1, p.MIGDevices[0].Index, "selection %+v %+v", p.GPUs, p.MIGDevices)
	require.Equal(t, mig.GI, p.MIGDevices[0].GI, "selection %+v %+v", p.GPUs, p.MIGDevices)
	assert.True(t, p.GPUs[0].MIGEnabled, "parent not marked MIG-enabled")
	m, ok := findMount(p, "/dev/nvidia1")
	assert.True(t, ok, "parent node: not bound")
	assert.Equal(t, "1", m.For, "parent node: %+v", m)
	gi := fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu1/mig/gi%d/access", mig.GI)
	ci := fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu1/mig/gi%d/ci%d/access", mig.GI, mig.CI)
	for _, c := range []struct {
		proc  string
		minor uint32
	}{{gi, capMinor(1, mig.GI, -1)}, {ci, capMinor(1, mig.GI, mig.CI)}} {
		m, ok := findMount(p, c.proc)
		assert.True(t, ok, "proc bind %s: not bound", c.proc)
		assert.Equal(t, "1:1", m.For, "proc bind %s: %+v", c.proc, m)
		assert.False(t, m.Dir, "proc bind %s: %+v", c.proc, m)
		node := fmt.Sprintf("/dev/nvidia-caps/nvidia-cap%d", c.minor)
		m, ok = findMount(p, node)
		assert.True(t, ok, "cap node %s: not bound", node)
		assert.Equal(t, "1:1", m.For, "cap node %s: %+v", node, m)
		if assert.NotNil(t, m.Device, "cap node %s: %+v", node, m) {
			assert.Equal(t, nvcontainer.DeviceNumber{Major: fakehost.MajorCaps, Minor: c.minor}, *m.Device, "cap node %s: %+v", node, m)
		}
	}
	_, ok = findMount(p, "/proc/driver/nvidia/capabilities")
	assert.False(t, ok, "whole capabilities tree bound without mig-config")
	assert.Len(t, p.CgroupRules, 4, "rules: nvidiactl, nvidia1, GI and CI caps")
}

// TestPlanMIGConfigAll checks NVIDIA_MIG_CONFIG_DEVICES=all (and monitor):
// the whole capabilities tree, the /dev/nvidia-caps dir, the global cap
// and every MIG minor of the MIG-capable GPUs are granted, per-device
// access binds are not made.
func TestPlanMIGConfigAll(t *testing.T) {
	h := migHost(t, devices.NVML)
	env := []string{"NVIDIA_VISIBLE_DEVICES=3", "NVIDIA_DRIVER_CAPABILITIES=utility", "NVIDIA_MIG_CONFIG_DEVICES=all", "NVIDIA_MIG_MONITOR_DEVICES=all"}
	p := h.plan(t, privReq(t, env...), debianRootfs, nil)
	m, ok := findMount(p, "/proc/driver/nvidia/capabilities")
	assert.True(t, ok, "capabilities bind: none")
	assert.True(t, m.Dir, "capabilities bind: %+v", m)
	assert.Equal(t, nvcontainer.MountProc, m.Kind, "capabilities bind: %+v", m)
	m, ok = findMount(p, "/dev/nvidia-caps")
	assert.True(t, ok, "/dev/nvidia-caps bind: none")
	assert.True(t, m.Dir, "/dev/nvidia-caps bind: %+v", m)
	assert.Equal(t, nvcontainer.MountCapsDir, m.Kind, "/dev/nvidia-caps bind: %+v", m)
	for _, minor := range []uint32{1, 2, capMinor(3, 0, -1), capMinor(3, 14, 7), capMinor(3, 2, 0)} {
		assert.True(t, hasRule(p, fakehost.MajorCaps, minor), "no rule for nvidia-cap%d", minor)
	}
	assert.False(t, hasRule(p, fakehost.MajorCaps, capMinor(1, 0, -1)), "rule for a MIG minor of GPU 1, which is not visible")
	// 3 nodes (nvidiactl, nvidia3) + config + monitor + 15 GIs x 9 caps of GPU 3.
	assert.Len(t, p.CgroupRules, 2+2+15*9, "rules")
	for _, m := range p.Tmpfs[0].Mounts {
		if m.For != "" {
			assert.Equal(t, h.host.Devices.GPUs[3].ProcDir, m.Target, "per-device bind %s with mig-config all", m.Target)
		}
	}
	checkInvariants(t, h, p)

	_, err := nvcontainer.NewPlan(h.host, privReq(t, "NVIDIA_VISIBLE_DEVICES=1:0", "NVIDIA_MIG_CONFIG_DEVICES=all"), nvcontainer.Container{}, nil)
	assert.EqualError(t, err, "mig-config error: all: cannot enable mig-config with specific MIG devices selected", "mig-config with a MIG device")
}

// TestPlanMIGConfigAllNoDevbind: with --no-devbind, mig-config and
// mig-monitor "all" still bind the /dev/nvidia-caps directory (as
// libnvidia-container does) and allow the same devices, while no
// device node is bound.
func TestPlanMIGConfigAllNoDevbind(t *testing.T) {
	h := migHost(t, devices.NVML)
	for _, v := range []string{"NVIDIA_MIG_CONFIG_DEVICES=all", "NVIDIA_MIG_MONITOR_DEVICES=all"} {
		t.Run(v, func(t *testing.T) {
			req := privReq(t, "NVIDIA_VISIBLE_DEVICES=3", "NVIDIA_DRIVER_CAPABILITIES=utility", v)
			full := h.plan(t, req, debianRootfs, nil)
			p := h.plan(t, req, debianRootfs, &nvcontainer.PlanOptions{NoDevbind: true})
			m, ok := findMount(p, "/dev/nvidia-caps")
			assert.True(t, ok, "%s: /dev/nvidia-caps bind: none", v)
			assert.True(t, m.Dir, "%s: /dev/nvidia-caps bind %+v", v, m)
			assert.Equal(t, nvcontainer.MountCapsDir, m.Kind, "%s: /dev/nvidia-caps bind %+v", v, m)
			assert.Equal(t, h.fake.DevRoot+"/nvidia-caps", m.Source, "%s: /dev/nvidia-caps bind %+v", v, m)
			assert.Empty(t, mountTargets(p, nvcontainer.MountDevice), "%s: device nodes bound with NoDevbind", v)
			assert.Equal(t, full.CgroupRules, p.CgroupRules, "%s: rules differ from the plan with device binds", v)
		})
	}
}
