package ldcache

import (
	"io"

	"golang.org/x/sys/unix"
)

// Reading a library. A directory entry's d_type (or an fstatat) says
// what it was when listed; a process sharing the directory can rename a
// device node or a FIFO over it before it is read. So no library is
// opened by name for reading: it is opened O_PATH (which opens nothing),
// checked with fstat on that descriptor, and only a regular file is
// opened for reading, through the descriptor (the Build's
// inroot.Reopener: /proc/thread-self/fd/N). Anything else is skipped, as glibc skips a
// file that is not a library.

// classifyAll reads the needed files and resolves the other symlinks, in
// parallel: these are independent reads, and on most systems the time
// goes to system calls.
func (s *dirScan) classifyAll() {
	parallel(len(s.ordered)+len(s.slow), s.job, &s.b.scratch)
}

func (s *dirScan) job(i int, buf []byte) {
	if i < len(s.ordered) {
		name := s.ordered[i]
		if r, ok := s.knownFile(name); ok {
			*s.files[name] = r
			return
		}
		*s.files[name] = s.classifyAt(name, buf)
		return
	}
	c := s.slow[i-len(s.ordered)]
	pfd, err := s.b.r.open(s.d.path+"/"+c.name, unix.O_PATH)
	if err != nil {
		return
	}
	defer unix.Close(pfd)
	c.slow.statOK = unix.Fstat(pfd, &c.slow.st) == nil
	if !c.slow.statOK || c.slow.st.Mode&unix.S_IFMT != unix.S_IFREG {
		return
	}
	if readHook != nil {
		readHook(s.d.path + "/" + c.name)
	}
	if fd, err := s.b.rp.Reopen(pfd); err == nil {
		c.slow.res = s.classifyFD(fd, c.name, c.slow.st.Size, buf)
	}
}

// classifyAt reads a regular file of the directory, not following a
// symlink there.
func (s *dirScan) classifyAt(name string, buf []byte) fileResult {
	if readHook != nil {
		readHook(s.d.path + "/" + name)
	}
	fd, st, err := s.b.rp.OpenRegularAt(s.fd, name)
	if err != nil {
		return fileResult{}
	}
	return s.classifyFD(fd, name, st.Size, buf)
}

// classifyFD classifies the regular file of size bytes open at fd, and
// closes fd.
func (s *dirScan) classifyFD(fd int, name string, size int64, buf []byte) fileResult {
	defer unix.Close(fd)
	stat := func() (uint64, bool) { return uint64(size), true }
	fr := newFileReader(fdReader(fd), buf, stat)
	info, ok := s.b.t.readLib(fr, name)
	return fileResult{info: info, ok: ok}
}

// fdReader reads a file descriptor with pread(2), without the runtime
// poller registration an *os.File makes for non-blocking descriptors.
type fdReader int

// ReadAt is pread(2), retried on EINTR; a short read reports io.EOF.
func (r fdReader) ReadAt(b []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(int(r), b, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n < len(b) {
			return n, io.EOF
		}
		return n, nil
	}
}
