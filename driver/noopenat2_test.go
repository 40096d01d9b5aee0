package driver

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// TestWithoutOpenat2 runs the resolution and selection tests in a child
// process where openat2 fails with ENOSYS (container.DenySyscalls), so that
// both this package and filepath-securejoin fall back to their userspace
// resolution, as on RHEL 8's 4.18 kernel.
func TestWithoutOpenat2(t *testing.T) {
	if !container.InChild(t) {
		return
	}
	if err := container.DenySyscalls(unix.SYS_OPENAT2); err != nil {
		testutil.RequireKernel(t, "seccomp filters", err)
	}
	if _, err := unix.Openat2(unix.AT_FDCWD, ".", &unix.OpenHow{Flags: unix.O_PATH}); !errors.Is(err, unix.ENOSYS) {
		t.Fatalf("openat2 still works in the child: %v", err)
	}
	t.Log("openat2 denied: ENOSYS")
	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"TestResolveInRoot", TestResolveInRoot},
		{"TestSelectionRules", TestSelectionRules},
		{"TestSelectionWSL", TestSelectionWSL},
	} {
		var skipped bool
		t.Run(tc.name, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			tc.test(t)
		})
		if skipped {
			t.Errorf("%s skipped without openat2", tc.name)
		}
	}
	h, err := fakehost.Generate(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(&Options{Root: h.Root, ProcRoot: h.ProcRoot, DevRoot: h.DevRoot})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := d.Files(capabilities.All)
	if err != nil {
		t.Fatal(err)
	}
	// 33 driver libraries and the two EGL platform libraries
	if len(fs.Libraries) != 35 || len(fs.Libraries32) != 22 || len(fs.Binaries) != 6 || len(fs.IPCs) != 3 || len(fs.Firmware) != 2 {
		t.Errorf("without openat2: %d libraries, %d 32-bit, %d binaries, %d IPCs, %d firmware", len(fs.Libraries), len(fs.Libraries32), len(fs.Binaries), len(fs.IPCs), len(fs.Firmware))
	}
}
