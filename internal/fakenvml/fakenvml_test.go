package fakenvml_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakenvml"
)

func mustNew(t *testing.T, machine string, opts *fakenvml.Options) *fakenvml.Server {
	t.Helper()
	s, err := fakenvml.New(machine, opts)
	require.NoError(t, err, "New(%q)", machine)
	return s
}

var uuidRE = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestGPUsAreStableAndDistinct(t *testing.T) {
	for _, machine := range fakenvml.Machines() {
		t.Run(machine, func(t *testing.T) {
			s := mustNew(t, machine, nil)
			n, err := s.DeviceCount()
			require.NoError(t, err, "DeviceCount")
			require.Equal(t, 8, n, "DeviceCount")
			seen := map[any]bool{}
			for i := range n {
				d, _ := s.DeviceByIndex(i)
				u, _ := d.UUID()
				pci, _ := d.PCIInfo()
				assert.Regexp(t, uuidRE, u, "GPU %d: UUID malformed", i)
				assert.Equal(t, fakenvml.GPUUUID(machine, i), u, "GPU %d: UUID", i)
				assert.False(t, seen[u], "GPU %d: UUID %q repeated", i, u)
				assert.False(t, seen[pci], "GPU %d: PCI %+v repeated", i, pci)
				seen[u], seen[pci] = true, true
			}
		})
	}
}

func TestVersions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   *fakenvml.Options
		driver string
		cuda   int
	}{
		{"default", nil, "550.54.15", 12040},
		{"560", &fakenvml.Options{DriverVersion: "560.35.03"}, "560.35.03", 12060},
		{"580", &fakenvml.Options{DriverVersion: "580.65.06"}, "580.65.06", 13000},
		{"explicit CUDA", &fakenvml.Options{DriverVersion: "999.1", CUDADriverVersion: 12090}, "999.1", 12090},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustNew(t, "dgxb200", tc.opts)
			d, _ := s.SystemDriverVersion()
			c, _ := s.SystemCUDADriverVersion()
			assert.Equal(t, tc.driver, d, "%+v: driver", tc.opts)
			assert.Equal(t, tc.cuda, c, "%+v: cuda", tc.opts)
		})
	}
}

func TestMIGLayout(t *testing.T) {
	s := mustNew(t, "dgxa100", &fakenvml.Options{MIG: map[int][]string{1: {"1g.5gb", "3g.20gb"}}})
	gpu, _ := s.DeviceByIndex(1)
	cur, pending, err := gpu.MIGMode()
	require.NoError(t, err, "MIG mode")
	require.True(t, cur, "MIG mode current")
	require.True(t, pending, "MIG mode pending")
	// The 1g, created first, takes slot 0 (GI 7); the 3g then fits only in
	// slots 4-7 (GI 2). Handles come in GPU instance order.
	for k, want := range []struct {
		gi   int
		name string
	}{{2, "3g.20gb"}, {7, "1g.5gb"}} {
		m, err := gpu.MIGDeviceByIndex(k)
		require.NoError(t, err, "MIGDeviceByIndex(%d)", k)
		gi, _ := m.GPUInstanceID()
		name, _ := m.Name()
		u, _ := m.UUID()
		assert.Equal(t, want.gi, gi, "MIG device %d: GI", k)
		assert.True(t, strings.HasSuffix(name, " MIG "+want.name), "MIG device %d: name %q", k, name)
		assert.Equal(t, fakenvml.MIGUUID("dgxa100", 1, gi, 0), u, "MIG device %d: UUID", k)
	}
	_, err = gpu.MIGDeviceByIndex(2)
	assert.ErrorIs(t, err, devices.ErrNVMLNotFound, "empty slot")
	_, err = gpu.MIGDeviceByIndex(7)
	assert.ErrorIs(t, err, fakenvml.ErrInvalidArgument, "slot 7")
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
			_, err := fakenvml.New("dgxa100", &fakenvml.Options{MIG: tc.layout})
			assert.ErrorContains(t, err, tc.want, "%v", tc.layout)
		})
	}
	_, err := fakenvml.New("dgx1", nil)
	assert.ErrorIs(t, err, fakenvml.ErrUnknownMachine, "unknown machine")
	assert.ErrorContains(t, err, `"dgx1"`, "unknown machine")
}
