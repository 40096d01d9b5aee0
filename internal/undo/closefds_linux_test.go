package undo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fdsAt opens /dev/null as n descriptors numbered base, base+1, …, with
// base the start of a free range; they are closed when tb ends (those
// still open).
func fdsAt(tb testing.TB, n int) []int {
	tb.Helper()
	src, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	require.NoError(tb, err)
	defer unix.Close(src)
	base := 400
	for !allFree(base, n) {
		base += n
	}
	fds := make([]int, n)
	for i := range fds {
		fds[i] = base + i
		require.NoError(tb, unix.Dup3(src, fds[i], unix.O_CLOEXEC))
	}
	tb.Cleanup(func() {
		for _, fd := range fds {
			if isOpen(fd) {
				unix.Close(fd)
			}
		}
	})
	return fds
}

func allFree(base, n int) bool {
	for fd := base; fd < base+n; fd++ {
		if isOpen(fd) {
			return false
		}
	}
	return true
}

func isOpen(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}

// TestCloseFdsSparesForeign: descriptors not in the list, between and
// around runs of ours, stay open; a close_range over the whole span
// would close them.
func TestCloseFdsSparesForeign(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ours    []int // offsets from the first descriptor
		foreign []int
	}{
		{"one run", []int{1, 2, 3, 4}, []int{0, 5}},
		{"foreign inside", []int{0, 1, 2, 4, 5, 7}, []int{3, 6, 8}},
		{"unsorted, twice", []int{5, 0, 2, 1, 5, 2}, []int{3, 4, 6}},
		{"singles", []int{0, 2, 4}, []int{1, 3, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fds := fdsAt(t, 9)
			var ours []int
			for _, i := range tc.ours {
				ours = append(ours, fds[i])
			}
			CloseFds(ours)
			for _, i := range tc.ours {
				assert.False(t, isOpen(fds[i]), "our descriptor %d (offset %d) still open", fds[i], i)
			}
			for _, i := range tc.foreign {
				assert.True(t, isOpen(fds[i]), "foreign descriptor %d (offset %d) closed", fds[i], i)
			}
		})
	}
}

// TestDiscardClosesHandedBackFds: Discard closes what AddStepFd releases
// hand back, runs AddStep releases, and leaves a foreign descriptor
// between two of ours open.
func TestDiscardClosesHandedBackFds(t *testing.T) {
	fds := fdsAt(t, 4)
	var s Stack
	var log []string
	hand := func(fd int) func() int { return func() int { return fd } }
	s.AddStepFd(record(&log, "a", nil), hand(fds[0]))
	s.AddStep(record(&log, "b", nil), func() { log = append(log, "release b") })
	s.AddStepFd(record(&log, "c", nil), hand(fds[1]))
	s.AddStepFd(record(&log, "d", nil), func() int { log = append(log, "release d"); return -1 })
	s.AddStepFd(record(&log, "e", nil), hand(fds[3]))
	s.Discard()
	assert.Equal(t, []string{"release d", "release b"}, log, "releases run, undos not")
	for _, i := range []int{0, 1, 3} {
		assert.False(t, isOpen(fds[i]), "handed-back descriptor %d still open", fds[i])
	}
	assert.True(t, isOpen(fds[2]), "foreign descriptor %d closed", fds[2])
	assert.Zero(t, s.Len())
}

// TestUndoRunsStepFdUndo: an AddStepFd step is undone like any other
// (its undo frees its descriptor itself).
func TestUndoRunsStepFdUndo(t *testing.T) {
	var log []string
	var s Stack
	s.AddStepFd(record(&log, "a", nil), func() int { t.Error("release ran on Undo"); return -1 })
	s.Add(record(&log, "b", nil))
	require.NoError(t, s.Undo())
	assert.Equal(t, []string{"b", "a"}, log)
}
