//go:build cgo

package nvmlmock_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/go-nvc/nvc/internal/nvmlmock"
)

func mustNew(t *testing.T, machine string, opts *nvmlmock.Options) nvml.Interface {
	t.Helper()
	s, err := nvmlmock.New(machine, opts)
	if err != nil {
		t.Fatal(err)
	}
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
			if ret != nvml.SUCCESS || n != 8 {
				t.Fatalf("DeviceGetCount = %d, %v; want 8", n, ret)
			}
			seen := map[string]bool{}
			for i := range n {
				da, _ := a.DeviceGetHandleByIndex(i)
				db, _ := b.DeviceGetHandleByIndex(i)
				ua, _ := da.GetUUID()
				ub, _ := db.GetUUID()
				pa, ret := da.GetPciInfo()
				if ret != nvml.SUCCESS {
					t.Fatalf("GetPciInfo(%d): %v", i, ret)
				}
				if ua != ub || !uuidRE.MatchString(ua) || ua != nvmlmock.GPUUUID(machine, i) {
					t.Errorf("GPU %d UUID %q / %q: not stable or malformed", i, ua, ub)
				}
				bus := cstr(pa.BusId[:])
				if !regexp.MustCompile(`^00000000:[0-9A-F]{2}:00\.0$`).MatchString(bus) ||
					cstr(pa.BusIdLegacy[:]) != bus[4:] || pa.Domain != 0 || pa.Device != 0 {
					t.Errorf("GPU %d PCI %q legacy %q bus %#x", i, bus, cstr(pa.BusIdLegacy[:]), pa.Bus)
				}
				if seen[ua] || seen[bus] {
					t.Errorf("GPU %d repeats UUID or bus id %s %s", i, ua, bus)
				}
				seen[ua], seen[bus] = true, true
			}
		})
	}
}

func TestBusIDLookup(t *testing.T) {
	s := mustNew(t, "dgxa100", nil)
	want, _ := s.DeviceGetHandleByIndex(1)
	for _, id := range []string{"00000000:0F:00.0", "0000:0f:00.0", "0:f:0.0"} {
		d, ret := s.DeviceGetHandleByPciBusId(id)
		if ret != nvml.SUCCESS || d != want {
			t.Errorf("DeviceGetHandleByPciBusId(%q) = %v, %v; want GPU 1", id, d, ret)
		}
	}
	if _, ret := s.DeviceGetHandleByPciBusId("0000:0e:00.0"); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("absent bus id: %v, want ERROR_NOT_FOUND", ret)
	}
}

func TestVersions(t *testing.T) {
	for _, tc := range []struct {
		opts         *nvmlmock.Options
		driver, nvml string
		cuda         int
	}{
		{nil, "550.54.15", "12.550.54.15", 12040},
		{&nvmlmock.Options{DriverVersion: "560.35.03"}, "560.35.03", "12.560.35.03", 12060},
		{&nvmlmock.Options{DriverVersion: "580.65.06"}, "580.65.06", "13.580.65.06", 13000},
		{&nvmlmock.Options{DriverVersion: "999.1", CUDADriverVersion: 12090}, "999.1", "12.999.1", 12090},
	} {
		s := mustNew(t, "dgxb200", tc.opts)
		d, _ := s.SystemGetDriverVersion()
		n, _ := s.SystemGetNVMLVersion()
		c, _ := s.SystemGetCudaDriverVersion()
		if d != tc.driver || n != tc.nvml || c != tc.cuda {
			t.Errorf("%+v: driver %q nvml %q cuda %d; want %q %q %d", tc.opts, d, n, c, tc.driver, tc.nvml, tc.cuda)
		}
	}
}

func TestUnknownMachine(t *testing.T) {
	_, err := nvmlmock.New("dgx1", nil)
	if !errors.Is(err, nvmlmock.ErrUnknownMachine) || !strings.Contains(err.Error(), `"dgx1"`) {
		t.Fatalf("err = %v", err)
	}
}
