package undo

import (
	"slices"

	"golang.org/x/sys/unix"
)

// CloseFds closes every descriptor in fds, each one the caller's own (a
// bare number no *os.File or netpoller holds; fds may be reordered). A
// run of consecutive numbers that are all in fds is closed with one
// close_range(2); a number not in fds is never inside a range, so a
// descriptor someone else opened between two of ours stays open. Where
// close_range is missing (Linux < 5.9) each is closed alone.
func CloseFds(fds []int) {
	slices.Sort(fds)
	fds = slices.Compact(fds) // a number twice is closed once
	for i := 0; i < len(fds); {
		j := i + 1
		for j < len(fds) && fds[j] == fds[j-1]+1 {
			j++
		}
		closeRun(fds[i:j])
		i = j
	}
}

// closeRun closes run, consecutive descriptor numbers.
func closeRun(run []int) {
	if len(run) > 1 && unix.CloseRange(uint(run[0]), uint(run[len(run)-1]), 0) == nil {
		return
	}
	for _, fd := range run {
		unix.Close(fd)
	}
}
