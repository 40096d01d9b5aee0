package nvcontainer_test

import (
	"io/fs"
	"reflect"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/cgroup"
	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/ldcache"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// One sentinel per condition: the packages' errors for the same condition
// match each other with errors.Is, and keep their own text.
func TestOneSentinelPerCondition(t *testing.T) {
	tests := []struct {
		name        string
		err, target error
		wantText    string
	}{
		{"driver no version is no driver", driver.ErrNoVersion, devices.ErrNoDriver, "driver version not found"},
		{"driver and devices no driver", driver.ErrNoDriver, devices.ErrNoDriver, "NVIDIA driver not loaded"},
		{"driver not supported", driver.ErrNotSupported, ldcache.ErrNotSupported, "not supported"},
		{"NVML not supported", devices.ErrNVMLNotSupported, ldcache.ErrNotSupported, "not supported by NVML"},
		{"NVML not supported, driver's", devices.ErrNVMLNotSupported, driver.ErrNotSupported, "not supported by NVML"},
		{"mount API not supported", mount.ErrNotSupported, ldcache.ErrNotSupported, "not supported by the kernel"},
		{"openat2 not supported", rootfs.ErrNotSupported, driver.ErrNotSupported, "not supported by the kernel"},
		{"cgroup change not supported", cgroup.ErrNotSupported, ldcache.ErrNotSupported, "device cgroup change not supported"},
		{"permission", nvcontainer.ErrPermission, fs.ErrPermission, "permission denied"},
		{"permission, devices'", devices.ErrPermission, nvcontainer.ErrPermission, "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, tt.err, tt.target)
			assert.EqualError(t, tt.err, tt.wantText, "text")
		})
	}
}

// NewPlan's error for a relative or "/" rootfs matches ErrInvalidRootfs,
// as ContainerFor's and nvcli.Container's do.
func TestNewPlanInvalidRootfs(t *testing.T) {
	h := newTestHost(t, nil)
	for _, rootfs := range []string{"rootfs", "/", "/.."} {
		t.Run(strconv.Quote(rootfs), func(t *testing.T) {
			_, err := nvcontainer.NewPlan(h.host, privReq(t, "NVIDIA_VISIBLE_DEVICES=0"), nvcontainer.Container{Rootfs: rootfs}, nil)
			assert.ErrorIs(t, err, nvcontainer.ErrInvalidRootfs, "rootfs %q", rootfs)
		})
	}
}

// State is the package's own type, so go doc shows its fields, and it
// parses as before.
func TestStateIsOwnType(t *testing.T) {
	assert.Equal(t, "github.com/go-nvc/nvc/nvcontainer/request", reflect.TypeFor[request.State]().PkgPath(), "State is defined in another package")
	st, err := request.ParseState([]byte(`{"ociVersion":"1.0.2","id":"c","status":"creating","pid":7,"bundlePath":"/b","root":"/r","annotations":{"a":"b"}}`))
	want := &request.State{OCIVersion: "1.0.2", ID: "c", Status: "creating", PID: 7, BundlePath: "/b", Root: "/r", Annotations: map[string]string{"a": "b"}}
	require.NoError(t, err, "ParseState")
	assert.Equal(t, want, st, "ParseState")
	assert.Equal(t, "/b", st.BundleDir(), "ParseState: BundleDir")
}
