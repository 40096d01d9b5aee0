//go:build cgo

package nvmlmock_test

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/nvmlmock"
)

func TestMIGLayout(t *testing.T) {
	t.Parallel()
	s := mustNew(t, "dgxa100", &nvmlmock.Options{MIG: map[int][]string{1: {"1g.5gb", "3g.20gb"}}})
	gpu1, _ := s.DeviceGetHandleByIndex(1)
	cur, pend, ret := gpu1.GetMigMode()
	require.Equal(t, nvml.SUCCESS, ret, "GPU 1 MIG mode")
	require.Equal(t, nvml.DEVICE_MIG_ENABLE, cur, "GPU 1 MIG mode current")
	require.Equal(t, cur, pend, "GPU 1 MIG mode pending")
	gpu0, _ := s.DeviceGetHandleByIndex(0)
	cur0, _, _ := gpu0.GetMigMode()
	assert.Equal(t, nvml.DEVICE_MIG_DISABLE, cur0, "GPU 0 MIG mode, want disabled")
	n, _ := gpu1.GetMaxMigDeviceCount()
	assert.Equal(t, 7, n, "GetMaxMigDeviceCount")
	// The 1g, created first, takes slot 0 (GI 7); the 3g then fits only in
	// slots 4-7 (GI 2). Handles come in GPU instance order.
	want := []struct {
		gi      int
		profile string
	}{{2, "3g.20gb"}, {7, "1g.5gb"}}
	for k, w := range want {
		h, ret := gpu1.GetMigDeviceHandleByIndex(k)
		require.Equal(t, nvml.SUCCESS, ret, "GetMigDeviceHandleByIndex(%d)", k)
		checkMIGHandle(t, s, h, gpu1, w.gi, 0, w.profile)
		h2, _ := gpu1.GetMigDeviceHandleByIndex(k)
		assert.Equal(t, h, h2, "handle %d not stable", k)
	}
	for k, wantRet := range map[int]nvml.Return{2: nvml.ERROR_NOT_FOUND, 6: nvml.ERROR_NOT_FOUND, 7: nvml.ERROR_INVALID_ARGUMENT} {
		_, ret := gpu1.GetMigDeviceHandleByIndex(k)
		assert.Equal(t, wantRet, ret, "GetMigDeviceHandleByIndex(%d)", k)
	}
	is, _ := gpu1.IsMigDeviceHandle()
	assert.False(t, is, "parent reports being a MIG handle")
}

func checkMIGHandle(t *testing.T, s nvml.Interface, h, parent nvml.Device, gi, ci int, profile string) {
	t.Helper()
	is, _ := h.IsMigDeviceHandle()
	p, _ := h.GetDeviceHandleFromMigDeviceHandle()
	g, _ := h.GetGpuInstanceId()
	c, _ := h.GetComputeInstanceId()
	name, _ := h.GetName()
	id, _ := h.GetUUID()
	assert.True(t, is, "MIG handle: IsMigDeviceHandle")
	assert.True(t, p == parent, "MIG handle: parent")
	assert.Equal(t, gi, g, "MIG handle: gi")
	assert.Equal(t, ci, c, "MIG handle: ci")
	assert.True(t, strings.HasSuffix(name, " MIG "+profile), "MIG handle name %q; want profile %s", name, profile)
	assert.True(t, strings.HasPrefix(id, "MIG-"), "MIG handle uuid %q", id)
	assert.Equal(t, nvmlmock.MIGUUID("dgxa100", 1, gi, ci), id, "MIG handle uuid")
	giHandle, ret := parent.GetGpuInstanceById(gi)
	require.Equal(t, nvml.SUCCESS, ret, "GetGpuInstanceById(%d)", gi)
	info, _ := giHandle.GetInfo()
	assert.Equal(t, gi, int(info.Id), "GPU instance %d reports id", gi)
	_, ret = giHandle.GetComputeInstanceById(ci)
	assert.Equal(t, nvml.SUCCESS, ret, "GetComputeInstanceById(%d)", ci)
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
				t.Run(p, func(t *testing.T) {
					s := mustNew(t, machine, &nvmlmock.Options{MIG: map[int][]string{0: {p}}})
					gpu, _ := s.DeviceGetHandleByIndex(0)
					h, ret := gpu.GetMigDeviceHandleByIndex(0)
					require.Equal(t, nvml.SUCCESS, ret, "%s", p)
					name, _ := h.GetName()
					assert.True(t, strings.HasSuffix(name, " MIG "+p), "%s: name %q", p, name)
				})
			}
		})
	}
}

func TestComputeInstanceProfile(t *testing.T) {
	s := mustNew(t, "dgxh100", &nvmlmock.Options{MIG: map[int][]string{3: {"1c.3g.40gb"}}})
	gpu, _ := s.DeviceGetHandleByIndex(3)
	h, _ := gpu.GetMigDeviceHandleByIndex(0)
	a, ret := h.GetAttributes()
	require.Equal(t, nvml.SUCCESS, ret, "attributes")
	assert.Equal(t, uint32(3), a.GpuInstanceSliceCount, "attributes %+v", a)
	assert.Equal(t, uint32(1), a.ComputeInstanceSliceCount, "attributes %+v", a)
	assert.Equal(t, uint64(40960), a.MemorySizeMB, "attributes %+v", a)
}

func TestMIGLayoutErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout map[int][]string
		want   string
	}{
		{"unknown profile", map[int][]string{0: {"5g.25gb"}}, `unknown MIG profile "5g.25gb"`},
		{"three 3g", map[int][]string{0: {"3g.20gb", "3g.20gb", "3g.20gb"}}, `no free placement for MIG profile "3g.20gb"`},
		{"7g then 1g", map[int][]string{0: {"7g.40gb", "1g.5gb"}}, `no free placement`},
		{"5-slice compute", map[int][]string{0: {"5c.3g.20gb"}}, `no 5-slice compute instance`},
		{"GPU out of range", map[int][]string{8: {}}, "MIG layout names GPU 8; the machine has 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nvmlmock.New("dgxa100", &nvmlmock.Options{MIG: tc.layout})
			assert.ErrorContains(t, err, tc.want, "%v", tc.layout)
		})
	}
}

func TestMIGEnabledWithoutDevices(t *testing.T) {
	s := mustNew(t, "dgxh200", &nvmlmock.Options{MIG: map[int][]string{2: nil}})
	gpu, _ := s.DeviceGetHandleByIndex(2)
	cur, _, _ := gpu.GetMigMode()
	assert.Equal(t, nvml.DEVICE_MIG_ENABLE, cur, "MIG mode")
	_, ret := gpu.GetMigDeviceHandleByIndex(0)
	assert.Equal(t, nvml.ERROR_NOT_FOUND, ret, "GetMigDeviceHandleByIndex(0)")
}
