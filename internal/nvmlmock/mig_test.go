//go:build cgo

package nvmlmock_test

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/go-nvc/nvc/internal/nvmlmock"
)

func TestMIGLayout(t *testing.T) {
	t.Parallel()
	s := mustNew(t, "dgxa100", &nvmlmock.Options{MIG: map[int][]string{1: {"1g.5gb", "3g.20gb"}}})
	gpu1, _ := s.DeviceGetHandleByIndex(1)
	if cur, pend, ret := gpu1.GetMigMode(); ret != nvml.SUCCESS || cur != nvml.DEVICE_MIG_ENABLE || pend != cur {
		t.Fatalf("GPU 1 MIG mode %d/%d %v", cur, pend, ret)
	}
	gpu0, _ := s.DeviceGetHandleByIndex(0)
	if cur, _, _ := gpu0.GetMigMode(); cur != nvml.DEVICE_MIG_DISABLE {
		t.Errorf("GPU 0 MIG mode %d, want disabled", cur)
	}
	if n, _ := gpu1.GetMaxMigDeviceCount(); n != 7 {
		t.Errorf("GetMaxMigDeviceCount = %d, want 7", n)
	}
	// The 1g, created first, takes slot 0 (GI 7); the 3g then fits only in
	// slots 4-7 (GI 2). Handles come in GPU instance order.
	want := []struct {
		gi      int
		profile string
	}{{2, "3g.20gb"}, {7, "1g.5gb"}}
	for k, w := range want {
		h, ret := gpu1.GetMigDeviceHandleByIndex(k)
		if ret != nvml.SUCCESS {
			t.Fatalf("GetMigDeviceHandleByIndex(%d): %v", k, ret)
		}
		checkMIGHandle(t, s, h, gpu1, w.gi, 0, w.profile)
		if h2, _ := gpu1.GetMigDeviceHandleByIndex(k); h2 != h {
			t.Errorf("handle %d not stable", k)
		}
	}
	for k, wantRet := range map[int]nvml.Return{2: nvml.ERROR_NOT_FOUND, 6: nvml.ERROR_NOT_FOUND, 7: nvml.ERROR_INVALID_ARGUMENT} {
		if _, ret := gpu1.GetMigDeviceHandleByIndex(k); ret != wantRet {
			t.Errorf("GetMigDeviceHandleByIndex(%d) = %v, want %v", k, ret, wantRet)
		}
	}
	if is, _ := gpu1.IsMigDeviceHandle(); is {
		t.Error("parent reports being a MIG handle")
	}
}

func checkMIGHandle(t *testing.T, s nvml.Interface, h, parent nvml.Device, gi, ci int, profile string) {
	t.Helper()
	is, _ := h.IsMigDeviceHandle()
	p, _ := h.GetDeviceHandleFromMigDeviceHandle()
	g, _ := h.GetGpuInstanceId()
	c, _ := h.GetComputeInstanceId()
	name, _ := h.GetName()
	id, _ := h.GetUUID()
	if !is || p != parent || g != gi || c != ci {
		t.Errorf("MIG handle: is %v parent ok %v gi %d ci %d; want gi %d ci %d", is, p == parent, g, c, gi, ci)
	}
	if !strings.HasSuffix(name, " MIG "+profile) || !strings.HasPrefix(id, "MIG-") || id != nvmlmock.MIGUUID("dgxa100", 1, gi, ci) {
		t.Errorf("MIG handle name %q uuid %q; want profile %s", name, id, profile)
	}
	giHandle, ret := parent.GetGpuInstanceById(gi)
	if ret != nvml.SUCCESS {
		t.Fatalf("GetGpuInstanceById(%d): %v", gi, ret)
	}
	if info, _ := giHandle.GetInfo(); int(info.Id) != gi {
		t.Errorf("GPU instance %d reports id %d", gi, info.Id)
	}
	if _, ret := giHandle.GetComputeInstanceById(ci); ret != nvml.SUCCESS {
		t.Errorf("GetComputeInstanceById(%d): %v", ci, ret)
	}
}

// TestProfileNames creates every GPU instance profile of every board by the
// name nvidia-smi prints for it.
func TestProfileNames(t *testing.T) {
	names := map[string][]string{
		"dgxa100": {"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"},
		"dgxh100": {"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
		"dgxh200": {"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"},
		"dgxb200": {"1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"},
	}
	for machine, profiles := range names {
		t.Run(machine, func(t *testing.T) {
			t.Parallel()
			for _, p := range profiles {
				s := mustNew(t, machine, &nvmlmock.Options{MIG: map[int][]string{0: {p}}})
				gpu, _ := s.DeviceGetHandleByIndex(0)
				h, ret := gpu.GetMigDeviceHandleByIndex(0)
				if ret != nvml.SUCCESS {
					t.Fatalf("%s: %v", p, ret)
				}
				if name, _ := h.GetName(); !strings.HasSuffix(name, " MIG "+p) {
					t.Errorf("%s: name %q", p, name)
				}
			}
		})
	}
}

func TestComputeInstanceProfile(t *testing.T) {
	s := mustNew(t, "dgxh100", &nvmlmock.Options{MIG: map[int][]string{3: {"1c.3g.40gb"}}})
	gpu, _ := s.DeviceGetHandleByIndex(3)
	h, _ := gpu.GetMigDeviceHandleByIndex(0)
	a, ret := h.GetAttributes()
	if ret != nvml.SUCCESS || a.GpuInstanceSliceCount != 3 || a.ComputeInstanceSliceCount != 1 || a.MemorySizeMB != 40960 {
		t.Errorf("attributes %+v %v", a, ret)
	}
}

func TestMIGLayoutErrors(t *testing.T) {
	for _, tc := range []struct {
		layout map[int][]string
		want   string
	}{
		{map[int][]string{0: {"5g.25gb"}}, `unknown MIG profile "5g.25gb"`},
		{map[int][]string{0: {"3g.20gb", "3g.20gb", "3g.20gb"}}, `no free placement for MIG profile "3g.20gb"`},
		{map[int][]string{0: {"7g.40gb", "1g.5gb"}}, `no free placement`},
		{map[int][]string{0: {"5c.3g.20gb"}}, `no 5-slice compute instance`},
		{map[int][]string{8: {}}, "MIG layout names GPU 8; the machine has 8"},
	} {
		_, err := nvmlmock.New("dgxa100", &nvmlmock.Options{MIG: tc.layout})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.layout, err, tc.want)
		}
	}
}

func TestMIGEnabledWithoutDevices(t *testing.T) {
	s := mustNew(t, "dgxh200", &nvmlmock.Options{MIG: map[int][]string{2: nil}})
	gpu, _ := s.DeviceGetHandleByIndex(2)
	if cur, _, _ := gpu.GetMigMode(); cur != nvml.DEVICE_MIG_ENABLE {
		t.Errorf("MIG mode %d", cur)
	}
	if _, ret := gpu.GetMigDeviceHandleByIndex(0); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("GetMigDeviceHandleByIndex(0) = %v", ret)
	}
}
