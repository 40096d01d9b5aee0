package nvcontainer

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/undo"
)

// spareFds is how many descriptors Apply holds in reserve for its undo:
// detaching a mount takes a few (a private procfs and the thread's fd
// directory), withdrawing a cgroup v1 rule one. Without them, an Apply
// that failed because the process ran out of descriptors (EMFILE) could not
// take its mounts back either.
const spareFds = 8

// fdReserve is descriptors held so that undo has some to spend; release
// frees them (once) right before undo runs.
type fdReserve struct {
	once sync.Once
	fds  []int
}

// reserveFds opens up to spareFds descriptors (of "/", O_PATH); as many
// as the limit allows.
func reserveFds() *fdReserve {
	r := &fdReserve{}
	fd, err := unix.Open("/", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return r
	}
	r.fds = append(r.fds, fd)
	for len(r.fds) < spareFds {
		d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			break
		}
		r.fds = append(r.fds, d)
	}
	return r
}

func (r *fdReserve) release() {
	if r == nil {
		return
	}
	r.once.Do(func() { undo.CloseFds(r.fds) })
}

// undoInner takes back the changes made inside the namespace, with the
// reserve freed first.
func (a *applier) undoInner() error {
	a.spare.release()
	return a.inner.Undo()
}
