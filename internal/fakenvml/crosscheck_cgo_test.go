//go:build cgo

package fakenvml_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakenvml"
	"github.com/go-nvc/nvc/internal/nvmlmock"
)

// TestMatchesGoNVMLMocks is the proof that the pure-Go fake is faithful:
// for every board, with MIG off and with MIG layouts that use every GPU
// instance profile (and a compute instance smaller than its GPU instance,
// MIG on without devices, several GPUs at once), it walks the fake and
// go-nvml's mock (as nvmlmock wires it, through NewNVMLFromGoNVML) call by
// call through devices.NVMLInterface and compares every answer: versions,
// GPU count, each GPU's minor, UUID, PCI address, name, brand,
// architecture, compute capability, MIG mode, MIG device count, every MIG
// handle index (present, NOT_FOUND, out of range) and each MIG device's
// UUID, name, instance ids and attributes. Layouts that the mock refuses
// must be refused by the fake with the same message.
func TestMatchesGoNVMLMocks(t *testing.T) {
	for _, machine := range fakenvml.Machines() {
		t.Run(machine, func(t *testing.T) {
			t.Parallel()
			for _, opts := range layouts(t, machine) {
				t.Run(opts.name(), func(t *testing.T) {
					want, werr := nvmlmock.New(machine, opts.mock())
					got, gerr := fakenvml.New(machine, opts.options)
					if werr != nil || gerr != nil {
						assert.Equal(t, fmt.Sprint(werr), fmt.Sprint(gerr), "%+v: New: fake %v, mock %v", opts.options, gerr, werr)
						return
					}
					w, g := walk(devices.NewNVMLFromGoNVML(want)), walk(got)
					assert.Equal(t, w, g, "%+v: fake and mock differ:\n%s", opts.options, diff(w, g))
				})
			}
		})
	}
}

type options = fakenvml.Options

func mockOptions(o *options) *nvmlmock.Options {
	if o == nil {
		return nil
	}
	return &nvmlmock.Options{DriverVersion: o.DriverVersion, CUDADriverVersion: o.CUDADriverVersion, MIG: o.MIG}
}

// layoutOpts pairs a layout with its conversion to nvmlmock.Options.
type layoutOpts struct{ *options }

func (l layoutOpts) mock() *nvmlmock.Options { return mockOptions(l.options) }

// name names a layout's subtest: its versions and MIG layout, "default"
// for none.
func (l layoutOpts) name() string {
	if l.options == nil {
		return "default"
	}
	return fmt.Sprintf("%s-%d-%v", l.DriverVersion, l.CUDADriverVersion, l.MIG)
}

// layouts are the option sets compared on machine: MIG off at several
// versions, each GPU instance profile alone, compute instance variants, the
// standard mixed layout, full single-slice packing, and refused layouts.
func layouts(t *testing.T, machine string) []layoutOpts {
	t.Helper()
	s, err := fakenvml.New(machine, nil)
	require.NoError(t, err, "New(%q)", machine)
	profiles := fakenvml.ProfileNames(s)
	half, single := profiles[2], profiles[0] // 3g.*, 1g.*
	seven := slices.Repeat([]string{single}, 7)
	out := []layoutOpts{
		{nil},
		{&options{DriverVersion: "560.35.03"}},
		{&options{DriverVersion: "580.65.06"}},
		{&options{DriverVersion: "999.1", CUDADriverVersion: 12090}},
		{&options{MIG: map[int][]string{2: nil}}},
		{&options{MIG: map[int][]string{1: {half, single}}}},
		{&options{MIG: map[int][]string{0: seven, 3: {half, half}, 7: {"1c." + half, "2c." + half}}}},
		{&options{MIG: map[int][]string{0: {"5g.25gb"}}}},
		{&options{MIG: map[int][]string{0: {half, half, half}}}},
		{&options{MIG: map[int][]string{0: {"5c." + half}}}},
		{&options{MIG: map[int][]string{8: {}}}},
		{&options{MIG: map[int][]string{-1: {}}}},
	}
	for _, p := range profiles {
		out = append(out, layoutOpts{&options{MIG: map[int][]string{5: {p}}}})
	}
	require.GreaterOrEqual(t, len(profiles), 7, "%s profiles %v", machine, profiles)
	require.True(t, strings.HasPrefix(half, "3g."), "%s profiles %v: half %q", machine, profiles, half)
	require.True(t, strings.HasPrefix(single, "1g."), "%s profiles %v: single %q", machine, profiles, single)
	return out
}

// walk records every answer lib gives to the calls discovery and the
// simulator make.
func walk(lib devices.NVMLInterface) []string {
	var r recorder
	r.add("Init", lib.Init())
	v, err := lib.SystemDriverVersion()
	r.add("SystemDriverVersion", err, v)
	c, err := lib.SystemCUDADriverVersion()
	r.add("SystemCUDADriverVersion", err, c)
	n, err := lib.DeviceCount()
	r.add("DeviceCount", err, n)
	for i := -1; i <= n; i++ {
		d, err := lib.DeviceByIndex(i)
		r.add(fmt.Sprintf("DeviceByIndex(%d)", i), err)
		if err == nil {
			walkGPU(&r, fmt.Sprintf("gpu%d.", i), d)
		}
	}
	r.add("Shutdown", lib.Shutdown())
	return r.lines
}

func walkGPU(r *recorder, p string, d devices.NVMLDevice) {
	minor, err := d.MinorNumber()
	r.add(p+"MinorNumber", err, minor)
	u, err := d.UUID()
	r.add(p+"UUID", err, u)
	pci, err := d.PCIInfo()
	r.add(p+"PCIInfo", err, pci)
	name, err := d.Name()
	r.add(p+"Name", err, name)
	brand, err := d.Brand()
	r.add(p+"Brand", err, brand)
	arch, err := d.Architecture()
	r.add(p+"Architecture", err, arch)
	major, minorCC, err := d.CUDAComputeCapability()
	r.add(p+"CUDAComputeCapability", err, major, minorCC)
	cur, pending, err := d.MIGMode()
	r.add(p+"MIGMode", err, cur, pending)
	max, err := d.MaxMIGDeviceCount()
	r.add(p+"MaxMIGDeviceCount", err, max)
	for k := -1; k <= max; k++ {
		m, err := d.MIGDeviceByIndex(k)
		r.add(fmt.Sprintf("%sMIGDeviceByIndex(%d)", p, k), err)
		if err == nil {
			walkMIG(r, fmt.Sprintf("%smig%d.", p, k), m)
		}
	}
}

func walkMIG(r *recorder, p string, m devices.NVMLDevice) {
	u, err := m.UUID()
	r.add(p+"UUID", err, u)
	name, err := m.Name()
	r.add(p+"Name", err, name)
	gi, err := m.GPUInstanceID()
	r.add(p+"GPUInstanceID", err, gi)
	ci, err := m.ComputeInstanceID()
	r.add(p+"ComputeInstanceID", err, ci)
	a, err := m.Attributes()
	r.add(p+"Attributes", err, a)
}

type recorder struct{ lines []string }

// add records a call's values, or the kind of its error: the fake's
// messages say more than NVML's codes, so only the kind is compared.
func (r *recorder) add(call string, err error, vals ...any) {
	switch {
	case errors.Is(err, devices.ErrNVMLNotFound):
		r.lines = append(r.lines, call+": not found")
	case errors.Is(err, devices.ErrNVMLNotSupported):
		r.lines = append(r.lines, call+": not supported")
	case err != nil:
		r.lines = append(r.lines, call+": error")
	default:
		r.lines = append(r.lines, fmt.Sprintf("%s = %+v", call, vals))
	}
}

func diff(want, got []string) string {
	var b strings.Builder
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "mock %q\nfake %q\n", w, g)
		}
	}
	return b.String()
}
