package rootfs

import (
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// handle is a directory descriptor shared by the entries made in it, the
// undo records that remove them and the Root's directory cache; the last
// release closes it. Hot paths use fd directly: wrapping every descriptor
// in an *os.File costs an fcntl(F_GETFL) and a finalizer each.
type handle struct {
	fd   int
	name string // the path inside the root, for messages
	refs atomic.Int32

	allowed atomic.Bool   // Options.MayCreate allowed creating here
	mntID   atomic.Uint64 // the ID of the mount it is on; 0: not read yet
	swept   atomic.Bool   // sweepStale has been here

	mu   sync.Mutex
	file *os.File // made on demand by File, or the file fd came from
}

// newHandle takes ownership of fd with one reference.
func newHandle(fd int, name string) *handle {
	h := &handle{fd: fd, name: name}
	h.refs.Store(1)
	return h
}

// handleOf takes ownership of f with one reference.
func handleOf(f *os.File) *handle {
	h := newHandle(int(f.Fd()), f.Name())
	h.file = f
	return h
}

// mountID is the ID of the mount the directory is on, read once (statx);
// 0 where the kernel cannot tell.
func (h *handle) mountID() uint64 {
	if id := h.mntID.Load(); id != 0 {
		return id
	}
	var st unix.Stat_t
	id, err := fstatMount(h.fd, &st)
	if err != nil {
		return 0
	}
	h.mntID.Store(id)
	return id
}

// acquire adds a reference.
func (h *handle) acquire() *handle {
	h.refs.Add(1)
	return h
}

// release drops a reference; the last one closes the descriptor.
func (h *handle) release() {
	if fd := h.releaseFd(); fd >= 0 {
		unix.Close(fd)
	}
}

// releaseFd is release for an undo step released with others
// (undo.Stack.AddStepFd): the last reference hands the bare descriptor
// back for the caller to close. It returns -1 while other references
// remain, or when an *os.File owned the descriptor (closed here).
func (h *handle) releaseFd() int {
	if h.refs.Add(-1) != 0 {
		return -1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.file != nil {
		h.file.Close()
		return -1
	}
	return h.fd
}

// File wraps the descriptor for callers that need an *os.File; the handle
// keeps ownership. Call it only while holding a reference.
func (h *handle) File() *os.File {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.file == nil {
		h.file = os.NewFile(uintptr(h.fd), h.name)
	}
	return h.file
}

// detach hands the descriptor of a handle nobody else references over to
// the caller, as an *os.File; the handle is not to be used again.
func (h *handle) detach() *os.File {
	f := h.File()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.file = nil
	h.refs.Store(0)
	return f
}

// cachedDir returns a new reference to the kept directory key, or nil.
func (r *Root) cachedDir(key string) *handle {
	if !r.opts.KeepDirs {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := r.dirs[key]; d != nil {
		return d.acquire()
	}
	return nil
}

// keepDir remembers d as the directory key (with a reference of its own)
// when Options.KeepDirs asks for it.
func (r *Root) keepDir(key string, d *handle) {
	if !r.opts.KeepDirs {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dirs == nil {
		r.dirs = map[string]*handle{}
	}
	if old := r.dirs[key]; old != nil {
		old.release()
	}
	r.dirs[key] = d.acquire()
}

// ForgetDirs drops the directories kept under [Options].KeepDirs, so
// that later calls resolve their parents afresh. Call it after mounting
// over a directory inside the root: a kept descriptor still names the
// directory underneath.
func (r *Root) ForgetDirs() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.dirs {
		d.release()
	}
	r.dirs = nil
}
