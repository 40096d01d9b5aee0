package fakenvml_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakenvml"
)

func mustNew(t *testing.T, machine string, opts *fakenvml.Options) *fakenvml.Server {
	t.Helper()
	s, err := fakenvml.New(machine, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var uuidRE = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestGPUsAreStableAndDistinct(t *testing.T) {
	for _, machine := range fakenvml.Machines() {
		t.Run(machine, func(t *testing.T) {
			s := mustNew(t, machine, nil)
			n, err := s.DeviceCount()
			if err != nil || n != 8 {
				t.Fatalf("DeviceCount = %d, %v; want 8", n, err)
			}
			seen := map[any]bool{}
			for i := range n {
				d, _ := s.DeviceByIndex(i)
				u, _ := d.UUID()
				pci, _ := d.PCIInfo()
				if !uuidRE.MatchString(u) || u != fakenvml.GPUUUID(machine, i) || seen[u] || seen[pci] {
					t.Errorf("GPU %d: UUID %q PCI %+v: malformed or repeated", i, u, pci)
				}
				seen[u], seen[pci] = true, true
			}
		})
	}
}

func TestVersions(t *testing.T) {
	for _, tc := range []struct {
		opts   *fakenvml.Options
		driver string
		cuda   int
	}{
		{nil, "550.54.15", 12040},
		{&fakenvml.Options{DriverVersion: "560.35.03"}, "560.35.03", 12060},
		{&fakenvml.Options{DriverVersion: "580.65.06"}, "580.65.06", 13000},
		{&fakenvml.Options{DriverVersion: "999.1", CUDADriverVersion: 12090}, "999.1", 12090},
	} {
		s := mustNew(t, "dgxb200", tc.opts)
		d, _ := s.SystemDriverVersion()
		c, _ := s.SystemCUDADriverVersion()
		if d != tc.driver || c != tc.cuda {
			t.Errorf("%+v: driver %q cuda %d; want %q %d", tc.opts, d, c, tc.driver, tc.cuda)
		}
	}
}

func TestMIGLayout(t *testing.T) {
	s := mustNew(t, "dgxa100", &fakenvml.Options{MIG: map[int][]string{1: {"1g.5gb", "3g.20gb"}}})
	gpu, _ := s.DeviceByIndex(1)
	if cur, pending, err := gpu.MIGMode(); !cur || !pending || err != nil {
		t.Fatalf("MIG mode %v/%v %v", cur, pending, err)
	}
	// The 1g, created first, takes slot 0 (GI 7); the 3g then fits only in
	// slots 4-7 (GI 2). Handles come in GPU instance order.
	for k, want := range []struct {
		gi   int
		name string
	}{{2, "3g.20gb"}, {7, "1g.5gb"}} {
		m, err := gpu.MIGDeviceByIndex(k)
		if err != nil {
			t.Fatal(err)
		}
		gi, _ := m.GPUInstanceID()
		name, _ := m.Name()
		u, _ := m.UUID()
		if gi != want.gi || !strings.HasSuffix(name, " MIG "+want.name) || u != fakenvml.MIGUUID("dgxa100", 1, gi, 0) {
			t.Errorf("MIG device %d: GI %d name %q UUID %s", k, gi, name, u)
		}
	}
	if _, err := gpu.MIGDeviceByIndex(2); !errors.Is(err, devices.ErrNVMLNotFound) {
		t.Errorf("empty slot: %v", err)
	}
	if _, err := gpu.MIGDeviceByIndex(7); !errors.Is(err, fakenvml.ErrInvalidArgument) {
		t.Errorf("slot 7: %v", err)
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
		_, err := fakenvml.New("dgxa100", &fakenvml.Options{MIG: tc.layout})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.layout, err, tc.want)
		}
	}
	if _, err := fakenvml.New("dgx1", nil); !errors.Is(err, fakenvml.ErrUnknownMachine) || !strings.Contains(err.Error(), `"dgx1"`) {
		t.Errorf("unknown machine: %v", err)
	}
}
