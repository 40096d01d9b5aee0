//go:build cgo

package devices_test

import (
	"context"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/nvmlmock"
)

// autoNVMLErrors are what TestAuto's two roots give in a cgo build: the fake
// host's libnvidia-ml.so.1 lacks NVML's symbols; the empty root has none.
var autoNVMLErrors = [2]string{"nvmlInit_v2", "libnvidia-ml.so.1"}

// TestGoNVMLInitFailure: an Init failure of a go-nvml library, through
// NewNVMLFromGoNVML, makes Auto fall back with NVML's error text, and a
// forced NVML backend fails with an error that matches both
// ErrNVMLUnavailable and the nvml.Return.
func TestGoNVMLInitFailure(t *testing.T) {
	h := genHost(t, nil)
	s, _ := nvmlmock.New("dgxa100", nil)
	s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
	o := optionsFor(h, devices.Auto)
	o.NVML = devices.NewNVMLFromGoNVML(s)
	d, err := devices.Discover(context.Background(), o)
	if assert.NoError(t, err, "auto") {
		assert.Equal(t, devices.Procfs, d.Backend, "auto: %+v", d)
		assert.Contains(t, d.NVMLError, "ERROR_DRIVER_NOT_LOADED", "auto")
	}
	o.Backend = devices.NVML
	_, err = devices.Discover(context.Background(), o)
	assert.ErrorIs(t, err, devices.ErrNVMLUnavailable, "forced")
	assert.ErrorIs(t, err, nvml.ERROR_DRIVER_NOT_LOADED, "forced")
	assert.Empty(t, s.ShutdownCalls(), "Shutdown called after a failed Init")
}

// TestGoNVMLErrors: the adapter's errors keep the nvml.Return and its text,
// and map NOT_SUPPORTED, FUNCTION_NOT_FOUND and NOT_FOUND to the package's
// sentinels.
func TestGoNVMLErrors(t *testing.T) {
	s, _ := nvmlmock.New("dgxa100", &nvmlmock.Options{MIG: map[int][]string{0: {"3g.20gb"}}})
	s.InitFunc = func() nvml.Return { return nvml.ERROR_NOT_SUPPORTED }
	lib := devices.NewNVMLFromGoNVML(s)
	err := lib.Init()
	assert.ErrorIs(t, err, devices.ErrNVMLNotSupported, "NOT_SUPPORTED")
	assert.ErrorIs(t, err, nvml.ERROR_NOT_SUPPORTED, "NOT_SUPPORTED")
	assert.EqualError(t, err, "ERROR_NOT_SUPPORTED", "NOT_SUPPORTED")
	s.InitFunc = func() nvml.Return { return nvml.ERROR_FUNCTION_NOT_FOUND }
	assert.ErrorIs(t, lib.Init(), devices.ErrNVMLNotSupported, "FUNCTION_NOT_FOUND")
	s.InitFunc = func() nvml.Return { return nvml.ERROR_UNKNOWN }
	err = lib.Init()
	assert.NotErrorIs(t, err, devices.ErrNVMLNotSupported, "UNKNOWN")
	assert.NotErrorIs(t, err, devices.ErrNVMLNotFound, "UNKNOWN")
	assert.ErrorIs(t, err, nvml.ERROR_UNKNOWN, "UNKNOWN")
	gpu, err := lib.DeviceByIndex(0)
	require.NoError(t, err)
	_, err = gpu.MIGDeviceByIndex(1)
	assert.ErrorIs(t, err, devices.ErrNVMLNotFound, "empty MIG slot")
	assert.ErrorIs(t, err, nvml.ERROR_NOT_FOUND, "empty MIG slot")
	_, err = lib.DeviceByIndex(8)
	if assert.Error(t, err, "GPU 8") {
		assert.NotErrorIs(t, err, devices.ErrNVMLNotFound, "GPU 8")
	}
}

// TestFakeNVMLDiscoversAsGoNVMLMock: on every board, with GPU 1 in MIG mode,
// discovery through the pure-Go fake (the simulator's NVML) and through
// go-nvml's mock wrapped by NewNVMLFromGoNVML give the same Host.
func TestFakeNVMLDiscoversAsGoNVMLMock(t *testing.T) {
	for machine, b := range boards {
		t.Run(machine, func(t *testing.T) {
			t.Parallel()
			mig := map[int][]string{1: b.mig}
			h := genHost(t, &fakehost.Options{Machine: machine, MIG: mig})
			s, err := nvmlmock.New(machine, &nvmlmock.Options{MIG: mig})
			require.NoError(t, err)
			byFake := discover(t, h, devices.NVML)
			o := optionsFor(h, devices.NVML)
			o.NVML = devices.NewNVMLFromGoNVML(s)
			byMock, err := devices.Discover(context.Background(), o)
			require.NoError(t, err)
			assert.Equal(t, byFake, byMock, "fake NVML, go-nvml mock")
		})
	}
}
