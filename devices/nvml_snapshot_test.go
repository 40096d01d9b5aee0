package devices_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
)

// throughJSON takes lib's snapshot and reads it back from its JSON, as a
// helper's caller does.
func throughJSON(t *testing.T, lib devices.NVMLInterface) devices.NVMLInterface {
	t.Helper()
	s, err := devices.TakeNVMLSnapshot(lib)
	require.NoError(t, err)
	data, err := json.Marshal(s)
	require.NoError(t, err)
	var back devices.NVMLSnapshot
	require.NoError(t, json.Unmarshal(data, &back))
	return back.Interface()
}

// TestSnapshotDiscoversAsLive: Discover and driver.Open through a snapshot
// (JSON and back) of a host's NVML give what they give on that NVML
// directly: a DGX A100 with two GPUs in MIG mode (a 3g and a 1g device,
// and a 1c.3g one, whose profile comes from its name).
func TestSnapshotDiscoversAsLive(t *testing.T) {
	h := genHost(t, &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}, 3: {"1c.3g.20gb"}}})
	live := discover(t, h, devices.NVML)
	o := optionsFor(h, devices.NVML)
	o.NVML = throughJSON(t, h.NVML)
	got, err := devices.Discover(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, live, got, "live NVML, snapshot")
	require.NotEmpty(t, got.GPUs[1].MIGDevices, "MIG devices")

	roots := driver.Roots{Driver: h.Root, Proc: h.ProcRoot}
	want, err := driver.Open(&driver.Options{Roots: roots, NVML: h.NVML})
	require.NoError(t, err)
	drv, err := driver.Open(&driver.Options{Roots: roots, NVML: o.NVML})
	require.NoError(t, err)
	assert.Equal(t, want.Version(), drv.Version(), "driver version")
	assert.Equal(t, driver.FromNVML, drv.Version().Source)
}

// failing answers NOT_SUPPORTED for the architecture and MIG mode,
// NOT_FOUND for a MIG slot, and another error for the brand of GPU 2.
type failing struct{ devices.NVMLInterface }

type failingGPU struct {
	devices.NVMLDevice
	i int
}

var errBroken = errors.New("ERROR_UNKNOWN")

func (f failing) DeviceByIndex(i int) (devices.NVMLDevice, error) {
	d, err := f.NVMLInterface.DeviceByIndex(i)
	return failingGPU{d, i}, err
}

func (failingGPU) Architecture() (string, error) { return "", devices.ErrNVMLNotSupported }

func (g failingGPU) MIGMode() (bool, bool, error) {
	if g.i == 0 {
		return false, false, devices.ErrNVMLNotSupported
	}
	return g.NVMLDevice.MIGMode()
}

func (g failingGPU) Brand() (string, error) {
	if g.i == 2 {
		return "", errBroken
	}
	return g.NVMLDevice.Brand()
}

// TestSnapshotErrors: a snapshot keeps each call's error, its text and
// whether it matches ErrNVMLNotSupported or ErrNVMLNotFound; a call it
// did not take fails; Discover through it fails or not as on the live
// NVML.
func TestSnapshotErrors(t *testing.T) {
	h := genHost(t, &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb"}}})
	lib := failing{h.NVML}
	snap := throughJSON(t, lib)
	for i, tc := range []struct {
		name          string
		call          func(devices.NVMLInterface) error
		supp, notFond bool
	}{
		{"arch", func(n devices.NVMLInterface) error {
			d, _ := n.DeviceByIndex(0)
			_, err := d.Architecture()
			return err
		}, true, false},
		{"MIG mode", func(n devices.NVMLInterface) error {
			d, _ := n.DeviceByIndex(0)
			_, _, err := d.MIGMode()
			return err
		}, true, false},
		{"empty MIG slot", func(n devices.NVMLInterface) error {
			d, _ := n.DeviceByIndex(1)
			_, err := d.MIGDeviceByIndex(1)
			return err
		}, false, true},
		{"brand", func(n devices.NVMLInterface) error {
			d, _ := n.DeviceByIndex(2)
			_, err := d.Brand()
			return err
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := tc.call(lib), tc.call(snap)
			require.Error(t, want, "row %d: the live call", i)
			require.EqualError(t, got, want.Error())
			assert.Equal(t, tc.supp, errors.Is(got, devices.ErrNVMLNotSupported), "matches ErrNVMLNotSupported")
			assert.Equal(t, tc.notFond, errors.Is(got, devices.ErrNVMLNotFound), "matches ErrNVMLNotFound")
		})
	}
	t.Run("not taken", func(t *testing.T) {
		d, err := snap.DeviceByIndex(0)
		require.NoError(t, err)
		_, err = d.GPUInstanceID() // a GPU's: never asked
		assert.ErrorContains(t, err, "not in the NVML snapshot")
		_, err = snap.DeviceByIndex(8)
		assert.ErrorContains(t, err, "not in the NVML snapshot")
	})
	t.Run("discover", func(t *testing.T) {
		o := optionsFor(h, devices.NVML)
		o.NVML = lib
		_, want := devices.Discover(context.Background(), o)
		o.NVML = snap
		_, got := devices.Discover(context.Background(), o)
		require.Error(t, want)
		assert.EqualError(t, got, want.Error())
	})
}
