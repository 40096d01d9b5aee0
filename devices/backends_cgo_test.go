//go:build cgo

package devices_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

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
	if err != nil || d.Backend != devices.Procfs || !strings.Contains(d.NVMLError, "ERROR_DRIVER_NOT_LOADED") {
		t.Errorf("auto: %v %+v", err, d)
	}
	o.Backend = devices.NVML
	_, err = devices.Discover(context.Background(), o)
	if !errors.Is(err, devices.ErrNVMLUnavailable) || !errors.Is(err, nvml.ERROR_DRIVER_NOT_LOADED) {
		t.Errorf("forced: %v", err)
	}
	if len(s.ShutdownCalls()) != 0 {
		t.Error("Shutdown called after a failed Init")
	}
}

// TestGoNVMLErrors: the adapter's errors keep the nvml.Return and its text,
// and map NOT_SUPPORTED, FUNCTION_NOT_FOUND and NOT_FOUND to the package's
// sentinels.
func TestGoNVMLErrors(t *testing.T) {
	s, _ := nvmlmock.New("dgxa100", &nvmlmock.Options{MIG: map[int][]string{0: {"3g.20gb"}}})
	s.InitFunc = func() nvml.Return { return nvml.ERROR_NOT_SUPPORTED }
	lib := devices.NewNVMLFromGoNVML(s)
	err := lib.Init()
	if !errors.Is(err, devices.ErrNVMLNotSupported) || !errors.Is(err, nvml.ERROR_NOT_SUPPORTED) || err.Error() != "ERROR_NOT_SUPPORTED" {
		t.Errorf("NOT_SUPPORTED: %v", err)
	}
	s.InitFunc = func() nvml.Return { return nvml.ERROR_FUNCTION_NOT_FOUND }
	if err := lib.Init(); !errors.Is(err, devices.ErrNVMLNotSupported) {
		t.Errorf("FUNCTION_NOT_FOUND: %v", err)
	}
	s.InitFunc = func() nvml.Return { return nvml.ERROR_UNKNOWN }
	if err := lib.Init(); errors.Is(err, devices.ErrNVMLNotSupported) || errors.Is(err, devices.ErrNVMLNotFound) || !errors.Is(err, nvml.ERROR_UNKNOWN) {
		t.Errorf("UNKNOWN: %v", err)
	}
	gpu, err := lib.DeviceByIndex(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gpu.MIGDeviceByIndex(1); !errors.Is(err, devices.ErrNVMLNotFound) || !errors.Is(err, nvml.ERROR_NOT_FOUND) {
		t.Errorf("empty MIG slot: %v", err)
	}
	if _, err := lib.DeviceByIndex(8); err == nil || errors.Is(err, devices.ErrNVMLNotFound) {
		t.Errorf("GPU 8: %v", err)
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
			if err != nil {
				t.Fatal(err)
			}
			byFake := discover(t, h, devices.NVML)
			o := optionsFor(h, devices.NVML)
			o.NVML = devices.NewNVMLFromGoNVML(s)
			byMock, err := devices.Discover(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(byFake, byMock) {
				t.Errorf("fake NVML %+v\ngo-nvml mock %+v", byFake, byMock)
			}
		})
	}
}
