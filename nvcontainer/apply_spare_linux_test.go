package nvcontainer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func fdOpen(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}

// TestFdReserveRelease: release closes every reserved descriptor (in
// runs, undo.CloseFds), once, and nothing else: a descriptor opened in a
// gap of the reserve stays open.
func TestFdReserveRelease(t *testing.T) {
	r := reserveFds()
	require.Len(t, r.fds, spareFds)
	// Make a gap inside the reserve and fill it with a foreign descriptor.
	gap := r.fds[spareFds/2]
	require.NoError(t, unix.Close(gap))
	foreign, err := unix.Open("/", unix.O_PATH|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(foreign)
	r.fds = append(r.fds[:spareFds/2], r.fds[spareFds/2+1:]...)
	r.release()
	r.release()
	for _, fd := range r.fds {
		assert.False(t, fdOpen(fd), "reserved descriptor %d still open", fd)
	}
	assert.True(t, fdOpen(foreign), "foreign descriptor %d (the gap was %d) closed", foreign, gap)
}
