package devices_test

import (
	"io/fs"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/testutil"
)

// dropCapability removes c from the calling thread's effective set. The
// goroutine stays locked to the thread, which Go discards when the test's
// goroutine ends: no other goroutine runs without c.
func dropCapability(t *testing.T, c uint) {
	t.Helper()
	runtime.LockOSThread()
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	// It runs on a goroutine of its own: it asserts, never FailNow.
	if !assert.NoError(t, unix.Capget(&hdr, &data[0]), "capget") {
		return
	}
	data[c/32].Effective &^= 1 << (c % 32)
	assert.NoError(t, unix.Capset(&hdr, &data[0]), "capset")
}

// Creating nodes without CAP_MKNOD is an error matching ErrPermission and
// fs.ErrPermission that names the capability.
func TestCreateNodesErrPermission(t *testing.T) {
	testutil.RequireRoot(t)
	h := migHost(t)
	dev := t.TempDir()
	done := make(chan error)
	go func() {
		dropCapability(t, unix.CAP_MKNOD)
		_, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}})
		done <- err
	}()
	err := <-done
	assert.ErrorIs(t, err, devices.ErrPermission, "CreateNodes without CAP_MKNOD")
	assert.ErrorIs(t, err, fs.ErrPermission, "CreateNodes without CAP_MKNOD")
	assert.ErrorContains(t, err, "CAP_MKNOD", "CreateNodes without CAP_MKNOD: want CAP_MKNOD named")
}
