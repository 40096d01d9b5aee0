package driver_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
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
	_, err := unix.Openat2(unix.AT_FDCWD, ".", &unix.OpenHow{Flags: unix.O_PATH})
	require.ErrorIs(t, err, unix.ENOSYS, "openat2 still works in the child")
	t.Log("openat2 denied: ENOSYS")
	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"TestResolveInRoot", driver.ResolveInRootTest},
		{"TestSelectionRules", driver.SelectionRulesTest},
		{"TestSelectionWSL", driver.SelectionWSLTest},
	} {
		var skipped bool
		t.Run(tc.name, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			tc.test(t)
		})
		assert.False(t, skipped, "%s skipped without openat2", tc.name)
	}
	h, err := fakehost.Generate(t.TempDir(), nil)
	require.NoError(t, err)
	d, err := driver.Open(&driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}})
	require.NoError(t, err)
	fs, err := d.Files(capabilities.All)
	require.NoError(t, err)
	// 33 driver libraries and the two EGL platform libraries
	assert.Len(t, fs.Libraries, 35, "without openat2: libraries")
	assert.Len(t, fs.Libraries32, 22, "without openat2: 32-bit libraries")
	assert.Len(t, fs.Binaries, 6, "without openat2: binaries")
	assert.Len(t, fs.IPCs, 3, "without openat2: IPCs")
	assert.Len(t, fs.Firmware, 2, "without openat2: firmware")
}
