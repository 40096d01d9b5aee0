package devices_test

import (
	"errors"
	"io/fs"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/devices"
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
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		t.Fatal(err)
	}
	data[c/32].Effective &^= 1 << (c % 32)
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		t.Fatal(err)
	}
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
		_, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{ProcRoot: h.ProcRoot, DevRoot: dev})
		done <- err
	}()
	err := <-done
	if !errors.Is(err, devices.ErrPermission) || !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "CAP_MKNOD") {
		t.Errorf("CreateNodes without CAP_MKNOD: %v; want ErrPermission naming CAP_MKNOD", err)
	}
}
