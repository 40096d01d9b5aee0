package mount

import (
	"os"

	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// Thread is the check that Attach and AttachEntry make on every call —
// that the caller runs on a thread confined by ns.Namespace.Run — made
// once, for a batch of mounts (asking costs a system call, gettid). A
// confined goroutine stays locked to its thread until it returns, so the
// answer holds for every later call it makes: use a Thread only on the
// goroutine that made it.
type Thread struct{}

// ConfinedThread makes the check, or fails with ErrNotConfined.
func ConfinedThread() (*Thread, error) {
	if !ns.OnConfinedThread() {
		return nil, &Error{Op: "attach", Err: ErrNotConfined}
	}
	return &Thread{}, nil
}

// Attach is s.Attach(dir, name) without the check.
func (*Thread) Attach(s *Source, dir *os.File, name string) (*Mount, error) {
	return s.attachAt(dir, name)
}

// AttachEntry is s.AttachEntry(e) without the check.
func (*Thread) AttachEntry(s *Source, e *rootfs.Entry) (*Mount, error) {
	return s.attachEntry(e)
}
