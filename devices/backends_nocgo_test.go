//go:build !cgo

package devices_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/devices"
)

// autoNVMLErrors are what TestAuto's two roots give without cgo: no NVML
// library is ever loaded.
var autoNVMLErrors = [2]string{"built without cgo", "built without cgo"}

// TestNoCgoNVML: a build without cgo discovers through procfs under Auto,
// says why in NVMLError, and refuses a forced NVML backend with
// ErrNVMLUnavailable naming the cause; an injected NVML is still used.
func TestNoCgoNVML(t *testing.T) {
	h := genHost(t, nil)
	o := optionsFor(h, devices.Auto)
	o.NVML = nil
	d, err := devices.Discover(context.Background(), o)
	if err != nil || d.Backend != devices.Procfs || !strings.HasPrefix(d.NVMLError, "NVML unavailable: built without cgo") {
		t.Errorf("auto: %v, %+v", err, d)
	}
	o.Backend = devices.NVML
	_, err = devices.Discover(context.Background(), o)
	if !errors.Is(err, devices.ErrNVMLUnavailable) || !strings.Contains(err.Error(), "built without cgo") {
		t.Errorf("forced NVML: %v", err)
	}
	discover(t, h, devices.NVML)
}

// TestNoCgoLazyNVML: without cgo there is no NVML to load lazily.
func TestNoCgoLazyNVML(t *testing.T) {
	if n := devices.NewLazyNVML(nil); n != nil {
		t.Errorf("NewLazyNVML: %v, want nil", n)
	}
}
