package nvcontainer_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
)

// migHost is a DGX A100 with GPU 1 split into two MIG devices and GPU 3
// into one.
func migHost(t *testing.T, backend devices.Backend) *testHost {
	t.Helper()
	fh, err := fakehost.Generate(t.TempDir(), &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}, 3: {"1c.3g.20gb"}}})
	if err != nil {
		t.Fatal(err)
	}
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
				p := h.plan(t, privReq(t, "NVIDIA_VISIBLE_DEVICES="+id, "NVIDIA_DRIVER_CAPABILITIES=utility"), debianRootfs, nil)
				checkMIGDevice(t, p, mig)
				checkInvariants(t, h, p)
			}
		})
	}
}

func checkMIGDevice(t *testing.T, p *nvcontainer.Plan, mig devices.MIGDevice) {
	t.Helper()
	if !slices.Equal(gpuIndices(p), []int{1}) || len(p.MIGDevices) != 1 || p.MIGDevices[0].Index != 1 || p.MIGDevices[0].GI != mig.GI {
		t.Fatalf("selection %+v %+v", p.GPUs, p.MIGDevices)
	}
	if !p.GPUs[0].MIGEnabled {
		t.Error("parent not marked MIG-enabled")
	}
	if m, ok := findMount(p, "/dev/nvidia1"); !ok || m.For != "1" {
		t.Errorf("parent node: %+v", m)
	}
	gi := fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu1/mig/gi%d/access", mig.GI)
	ci := fmt.Sprintf("/proc/driver/nvidia/capabilities/gpu1/mig/gi%d/ci%d/access", mig.GI, mig.CI)
	for _, c := range []struct {
		proc  string
		minor uint32
	}{{gi, capMinor(1, mig.GI, -1)}, {ci, capMinor(1, mig.GI, mig.CI)}} {
		if m, ok := findMount(p, c.proc); !ok || m.For != "1:1" || m.Dir {
			t.Errorf("proc bind %s: %+v", c.proc, m)
		}
		node := fmt.Sprintf("/dev/nvidia-caps/nvidia-cap%d", c.minor)
		m, ok := findMount(p, node)
		if !ok || m.For != "1:1" || m.Device == nil || *m.Device != (nvcontainer.DeviceNumber{Major: fakehost.MajorCaps, Minor: c.minor}) {
			t.Errorf("cap node %s: %+v", node, m)
		}
	}
	if _, ok := findMount(p, "/proc/driver/nvidia/capabilities"); ok {
		t.Error("whole capabilities tree bound without mig-config")
	}
	if len(p.CgroupRules) != 4 { // nvidiactl, nvidia1, GI and CI caps
		t.Errorf("rules %+v", p.CgroupRules)
	}
}

// TestPlanMIGConfigAll checks NVIDIA_MIG_CONFIG_DEVICES=all (and monitor):
// the whole capabilities tree, the /dev/nvidia-caps dir, the global cap
// and every MIG minor of the MIG-capable GPUs are granted, per-device
// access binds are not made.
func TestPlanMIGConfigAll(t *testing.T) {
	h := migHost(t, devices.NVML)
	env := []string{"NVIDIA_VISIBLE_DEVICES=3", "NVIDIA_DRIVER_CAPABILITIES=utility", "NVIDIA_MIG_CONFIG_DEVICES=all", "NVIDIA_MIG_MONITOR_DEVICES=all"}
	p := h.plan(t, privReq(t, env...), debianRootfs, nil)
	if m, ok := findMount(p, "/proc/driver/nvidia/capabilities"); !ok || !m.Dir || m.Kind != nvcontainer.MountProc {
		t.Errorf("capabilities bind: %+v", m)
	}
	if m, ok := findMount(p, "/dev/nvidia-caps"); !ok || !m.Dir || m.Kind != nvcontainer.MountCapsDir {
		t.Errorf("/dev/nvidia-caps bind: %+v", m)
	}
	for _, minor := range []uint32{1, 2, capMinor(3, 0, -1), capMinor(3, 14, 7), capMinor(3, 2, 0)} {
		if !hasRule(p, fakehost.MajorCaps, minor) {
			t.Errorf("no rule for nvidia-cap%d", minor)
		}
	}
	if hasRule(p, fakehost.MajorCaps, capMinor(1, 0, -1)) {
		t.Error("rule for a MIG minor of GPU 1, which is not visible")
	}
	// 3 nodes (nvidiactl, nvidia3) + config + monitor + 15 GIs x 9 caps of GPU 3.
	if len(p.CgroupRules) != 2+2+15*9 {
		t.Errorf("%d rules", len(p.CgroupRules))
	}
	for _, m := range p.Tmpfs[0].Mounts {
		if m.For != "" && m.Target != h.host.Devices.GPUs[3].ProcDir {
			t.Errorf("per-device bind %s with mig-config all", m.Target)
		}
	}
	checkInvariants(t, h, p)

	_, err := nvcontainer.NewPlan(h.host, privReq(t, "NVIDIA_VISIBLE_DEVICES=1:0", "NVIDIA_MIG_CONFIG_DEVICES=all"), nvcontainer.Container{}, nil)
	if err == nil || err.Error() != "mig-config error: all: cannot enable mig-config with specific MIG devices selected" {
		t.Errorf("mig-config with a MIG device: %v", err)
	}
}

// TestPlanMIGConfigAllNoDevbind: with --no-devbind, mig-config and
// mig-monitor "all" still bind the /dev/nvidia-caps directory (as
// libnvidia-container does) and allow the same devices, while no
// device node is bound.
func TestPlanMIGConfigAllNoDevbind(t *testing.T) {
	h := migHost(t, devices.NVML)
	for _, v := range []string{"NVIDIA_MIG_CONFIG_DEVICES=all", "NVIDIA_MIG_MONITOR_DEVICES=all"} {
		req := privReq(t, "NVIDIA_VISIBLE_DEVICES=3", "NVIDIA_DRIVER_CAPABILITIES=utility", v)
		full := h.plan(t, req, debianRootfs, nil)
		p := h.plan(t, req, debianRootfs, &nvcontainer.PlanOptions{NoDevbind: true})
		m, ok := findMount(p, "/dev/nvidia-caps")
		if !ok || !m.Dir || m.Kind != nvcontainer.MountCapsDir || m.Source != h.fake.DevRoot+"/nvidia-caps" {
			t.Errorf("%s: /dev/nvidia-caps bind %+v (%v)", v, m, ok)
		}
		if nodes := mountTargets(p, nvcontainer.MountDevice); len(nodes) != 0 {
			t.Errorf("%s: device nodes bound with NoDevbind: %v", v, nodes)
		}
		if !slices.Equal(p.CgroupRules, full.CgroupRules) {
			t.Errorf("%s: rules differ from the plan with device binds", v)
		}
	}
}
