//go:build !cgo

package devices_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

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
	if assert.NoError(t, err, "auto") {
		assert.Equal(t, devices.Procfs, d.Backend, "auto: %+v", d)
		assert.True(t, strings.HasPrefix(d.NVMLError, "NVML unavailable: built without cgo"), "auto: NVML error %q", d.NVMLError)
	}
	o.Backend = devices.NVML
	_, err = devices.Discover(context.Background(), o)
	if assert.ErrorIs(t, err, devices.ErrNVMLUnavailable, "forced NVML") {
		assert.ErrorContains(t, err, "built without cgo", "forced NVML")
	}
	discover(t, h, devices.NVML)
}

// TestNoCgoLazyNVML: without cgo there is no NVML to load lazily.
func TestNoCgoLazyNVML(t *testing.T) {
	assert.Nil(t, devices.NewLazyNVML(nil), "NewLazyNVML")
}
