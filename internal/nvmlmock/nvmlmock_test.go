//go:build cgo

package nvmlmock_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/nvmlmock"
)

func mustNew(t *testing.T, machine string, opts *nvmlmock.Options) nvml.Interface {
	t.Helper()
	s, err := nvmlmock.New(machine, opts)
	require.NoError(t, err, "New(%q)", machine)
	return s
}

func cstr(b []int8) string {
	var s strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		s.WriteByte(byte(c))
	}
	return s.String()
}

var uuidRE = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestGPUsAreStableAndDistinct(t *testing.T) {
	for _, machine := range nvmlmock.Machines() {
		t.Run(machine, func(t *testing.T) {
			t.Parallel()
			a, b := mustNew(t, machine, nil), mustNew(t, machine, nil)
			n, ret := a.DeviceGetCount()
			require.Equal(t, nvml.SUCCESS, ret, "DeviceGetCount")
			require.Equal(t, 8, n, "DeviceGetCount")
			seen := map[string]bool{}
			for i := range n {
				da, _ := a.DeviceGetHandleByIndex(i)
				db, _ := b.DeviceGetHandleByIndex(i)
				ua, _ := da.GetUUID()
				ub, _ := db.GetUUID()
				pa, ret := da.GetPciInfo()
				require.Equal(t, nvml.SUCCESS, ret, "GetPciInfo(%d)", i)
				assert.Equal(t, ua, ub, "GPU %d UUID not stable", i)
				assert.Regexp(t, uuidRE, ua, "GPU %d UUID malformed", i)
				assert.Equal(t, nvmlmock.GPUUUID(machine, i), ua, "GPU %d UUID", i)
				bus := cstr(pa.BusId[:])
				require.Regexp(t, `^00000000:[0-9A-F]{2}:00\.0$`, bus, "GPU %d PCI bus id", i)
				assert.Equal(t, bus[4:], cstr(pa.BusIdLegacy[:]), "GPU %d PCI %q legacy", i, bus)
				assert.Zero(t, pa.Domain, "GPU %d PCI %q domain", i, bus)
				assert.Zero(t, pa.Device, "GPU %d PCI %q device (bus %#x)", i, bus, pa.Bus)
				assert.False(t, seen[ua], "GPU %d repeats UUID %s", i, ua)
				assert.False(t, seen[bus], "GPU %d repeats bus id %s", i, bus)
				seen[ua], seen[bus] = true, true
			}
		})
	}
}

func TestBusIDLookup(t *testing.T) {
	s := mustNew(t, "dgxa100", nil)
	want, _ := s.DeviceGetHandleByIndex(1)
	for _, id := range []string{"00000000:0F:00.0", "0000:0f:00.0", "0:f:0.0"} {
		t.Run(id, func(t *testing.T) {
			d, ret := s.DeviceGetHandleByPciBusId(id)
			assert.Equal(t, nvml.SUCCESS, ret, "DeviceGetHandleByPciBusId(%q)", id)
			assert.True(t, d == want, "DeviceGetHandleByPciBusId(%q) = %v; want GPU 1", id, d)
		})
	}
	_, ret := s.DeviceGetHandleByPciBusId("0000:0e:00.0")
	assert.Equal(t, nvml.ERROR_NOT_FOUND, ret, "absent bus id")
}

func TestVersions(t *testing.T) {
	for _, tc := range []struct {
		name         string
		opts         *nvmlmock.Options
		driver, nvml string
		cuda         int
	}{
		{"default", nil, "550.54.15", "12.550.54.15", 12040},
		{"560", &nvmlmock.Options{DriverVersion: "560.35.03"}, "560.35.03", "12.560.35.03", 12060},
		{"580", &nvmlmock.Options{DriverVersion: "580.65.06"}, "580.65.06", "13.580.65.06", 13000},
		{"explicit CUDA", &nvmlmock.Options{DriverVersion: "999.1", CUDADriverVersion: 12090}, "999.1", "12.999.1", 12090},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustNew(t, "dgxb200", tc.opts)
			d, _ := s.SystemGetDriverVersion()
			n, _ := s.SystemGetNVMLVersion()
			c, _ := s.SystemGetCudaDriverVersion()
			assert.Equal(t, tc.driver, d, "%+v: driver", tc.opts)
			assert.Equal(t, tc.nvml, n, "%+v: nvml", tc.opts)
			assert.Equal(t, tc.cuda, c, "%+v: cuda", tc.opts)
		})
	}
}

func TestUnknownMachine(t *testing.T) {
	_, err := nvmlmock.New("dgx1", nil)
	require.ErrorIs(t, err, nvmlmock.ErrUnknownMachine)
	require.ErrorContains(t, err, `"dgx1"`)
}
