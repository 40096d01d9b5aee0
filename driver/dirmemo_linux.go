package driver

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A directory's entries change only through its parent-side operations
// (create, unlink, rename, link, symlink), and each of them sets the
// directory's ctime; a symlink's target cannot change at all without a new
// inode. So while a directory keeps its device, inode and ctime, a name in
// it that was a symlink still is the same symlink, and a name that was
// missing is still missing. dirMemo keeps those two kinds of lookup
// result across Files calls, by directory, so that a later call stats the
// directory once instead of each of those names. Regular files are
// stat()ed every call (their content can change in place).
//
// A memo is only made from a directory whose ctime was at least
// racyWindow older than the lookups (git's "racy" rule): file times come
// from a coarse clock, and a change in the same tick as the last one
// would otherwise leave the ctime as it was. Not covered: a mount made
// over a name in the directory (it changes no ctime), and the clock set
// back by more than racyWindow.
type dirMemo struct {
	snap  dirSnap
	names map[string]memoEntry
}

// dirSnap identifies a directory's state.
type dirSnap struct {
	dev, ino uint64
	ctime    int64
}

// memoEntry is a kept lookup: a symlink's target, or missing.
type memoEntry struct {
	target  string // "" when missing
	missing bool
}

// racyWindow is how much older than the lookups a directory's ctime
// must be for them to be kept.
const racyWindow = time.Second

// dirState is one Files call's view of a directory's memo.
type dirState struct {
	snap    dirSnap
	statted bool
	ok      bool // snap could be taken
	memo    *dirMemo
	pending map[string]memoEntry
}

// memos are the rootDir's per-directory states, created on first use.
type memos struct {
	shared *sync.Map // resolved dir path → *dirMemo, the Driver's
	start  time.Time // when the call began
	dirs   map[string]*dirState
}

// state returns the call's state of d, stat()ing d once per call.
func (m *memos) state(d dirHandle) *dirState {
	if s, ok := m.dirs[d.path]; ok {
		return s
	}
	s := &dirState{}
	if m.dirs == nil {
		m.dirs = make(map[string]*dirState, 16)
	}
	m.dirs[d.path] = s
	if v, ok := m.shared.Load(d.path); ok {
		s.memo = v.(*dirMemo)
		s.stat(d)
	}
	return s
}

func (s *dirState) stat(d dirHandle) {
	if s.statted {
		return
	}
	s.statted = true
	var st unix.Stat_t
	if unix.Fstat(d.fd, &st) == nil {
		s.snap, s.ok = dirSnap{st.Dev, st.Ino, st.Ctim.Nano()}, true
	}
}

// find returns the kept result of name in d, if d is unchanged.
func (m *memos) find(d dirHandle, name string) (memoEntry, bool) {
	if m == nil || m.shared == nil {
		return memoEntry{}, false
	}
	s := m.state(d)
	if s.memo == nil || !s.ok || s.snap != s.memo.snap {
		return memoEntry{}, false
	}
	e, ok := s.memo.names[name]
	return e, ok
}

// keep records a symlink or missing result of name in d, if d's ctime
// is old enough.
func (m *memos) keep(d dirHandle, name string, e memoEntry) {
	if m == nil || m.shared == nil {
		return
	}
	s := m.state(d)
	s.stat(d)
	if !s.ok || m.start.UnixNano()-s.snap.ctime < int64(racyWindow) {
		return
	}
	if s.pending == nil {
		s.pending = make(map[string]memoEntry)
	}
	s.pending[name] = e
}

// publish merges the call's new results into the shared memos.
func (m *memos) publish() {
	if m == nil || m.shared == nil {
		return
	}
	for p, s := range m.dirs {
		if len(s.pending) == 0 {
			continue
		}
		names := s.pending
		if s.memo != nil && s.memo.snap == s.snap {
			for n, e := range s.memo.names {
				if _, ok := names[n]; !ok {
					names[n] = e
				}
			}
		}
		m.shared.Store(p, &dirMemo{snap: s.snap, names: names})
	}
}
