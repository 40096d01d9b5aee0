package rootfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
	"github.com/go-nvc/nvc/internal/undo"
)

// Owner is the uid and gid given to everything a Root creates.
type Owner struct {
	UID, GID int
}

// ProcessOwner returns the owner of procRoot/pid ("" means /proc), which is
// whom libnvidia-container gives the files it creates in a container.
func ProcessOwner(procRoot string, pid int) (Owner, error) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	var st unix.Stat_t
	p := filepath.Join(procRoot, strconv.Itoa(pid))
	if err := unix.Stat(p, &st); err != nil {
		return Owner{}, fmt.Errorf("finding the owner of process %d: %w", pid, &os.PathError{Op: "stat", Path: p, Err: err})
	}
	return Owner{UID: int(st.Uid), GID: int(st.Gid)}, nil
}

// Resolver chooses how paths inside the root are resolved.
type Resolver int

const (
	// ResolveAuto uses openat2 and falls back to pathrs-lite where the
	// kernel lacks it.
	ResolveAuto Resolver = iota
	// ResolveOpenat2 uses openat2 only and fails closed without it.
	ResolveOpenat2
	// ResolvePathrsLite uses filepath-securejoin's pathrs-lite (which
	// itself uses openat2 when the kernel has it).
	ResolvePathrsLite
)

// Options configure a Root; nil means all defaults.
type Options struct {
	// Owner, if not nil, owns everything created; nil leaves the
	// creating process's uid and gid.
	Owner *Owner
	// Undo, if not nil, records how to remove everything created; nil
	// records nothing.
	Undo *undo.Stack
	// Resolver chooses the resolution method; zero is ResolveAuto.
	Resolver Resolver
	// KeepDirs keeps each parent directory open once resolved (or
	// created) and reuses it for later entries in the same directory
	// (the same unsafePath parent), until ForgetDirs or Close: one
	// resolution per directory instead of one per entry, for a batch of
	// changes such as the libraries of a driver, which all go into one
	// or two directories. A kept directory is pinned by its descriptor:
	// replacing it (by a symlink, say) later does not move where entries
	// go, and they still cannot leave the root. False: every call
	// resolves its parent afresh.
	KeepDirs bool
	// MayCreate, if not nil, is asked before anything is created in a
	// directory (a directory, placeholder, link, node, or the temporary
	// file or link that WriteFile and ReplaceSymlink rename into place):
	// dirFd is the directory (an O_PATH descriptor, valid only during the
	// call) and dir its path inside the root, for messages. An error
	// refuses: nothing is created there, the call fails with that error
	// wrapped, and an entry already there is still used as it is (a
	// placeholder to mount onto, the same symlink). Nil allows everything.
	// An answer must depend only on the directory's mount, not on the
	// directory nor on when it is asked: a directory allowed once is not
	// asked about again while the Root holds it open, nor is one the Root
	// creates in it and finds on the same mount (where the kernel reports
	// mount IDs; one mounted over meanwhile is asked about).
	MayCreate func(dirFd int, dir string) error
	// RemoveStaleTemps makes WriteFile and ReplaceSymlink first remove,
	// once per directory, the hidden temporaries (".NAME.nvc-" and 12 hex
	// digits, regular files and symlinks only) that an interrupted earlier
	// call left there. Set it only while no one else writes in the rootfs
	// through this package (Apply holds a lock on the rootfs): another
	// writer's live temporaries have the same names.
	RemoveStaleTemps bool

	// fault, set only by this package's tests, is called before the
	// system calls that follow a creation (op "openat", "fstat",
	// "chown"); an error it returns fails that call.
	fault func(op, path string) error
}

// Root is an open container rootfs. It is safe for concurrent use: a
// directory one goroutine creates is recorded on the undo stack before
// another can find it and create something inside, so that undo (last
// first) always empties a directory before removing it.
type Root struct {
	dir  *os.File
	fd   int // dir's descriptor
	opts Options

	top *handle // the rootfs directory itself, shared like the others

	mu    sync.Mutex
	dirs  map[string]*handle // under KeepDirs, by parent path
	swept map[dirKey]bool    // directories sweepStale has swept

	mkMu sync.Mutex // held while resolving afresh or creating directories
}

// Open opens the rootfs directory at path. Path is trusted (it comes from
// the runtime), but its last component must be a directory, not a symlink.
func Open(path string, opts *Options) (*Root, error) {
	r := &Root{}
	if opts != nil {
		r.opts = *opts
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening rootfs: %w", &os.PathError{Op: "open", Path: path, Err: err})
	}
	r.dir, r.fd = os.NewFile(uintptr(fd), path), fd
	id, err := checkTypeMount(fd, path, unix.S_IFDIR)
	if err != nil {
		r.dir.Close()
		return nil, fmt.Errorf("opening rootfs %q: %w", path, err)
	}
	if err := r.chooseResolver(); err != nil {
		r.dir.Close()
		return nil, err
	}
	r.top = handleOf(r.dir)
	r.top.mntID.Store(id)
	return r, nil
}

// MountID is the ID of the mount the rootfs directory is on (as in
// mountinfo), read when it was opened; 0 where the kernel does not say
// (before Linux 5.8).
func (r *Root) MountID() uint64 { return r.top.mntID.Load() }

// chooseResolver settles ResolveAuto by probing openat2 once.
func (r *Root) chooseResolver() error {
	if r.opts.Resolver == ResolvePathrsLite {
		return nil
	}
	if inroot.HaveOpenat2() {
		r.opts.Resolver = ResolveOpenat2
		return nil
	}
	if r.opts.Resolver == ResolveOpenat2 {
		return fmt.Errorf("opening rootfs %q: openat2: %w", r.dir.Name(), ErrNotSupported)
	}
	r.opts.Resolver = ResolvePathrsLite
	return nil
}

// Path is the rootfs path given to Open.
func (r *Root) Path() string { return r.dir.Name() }

// File is the rootfs's O_PATH directory descriptor; Root keeps ownership.
func (r *Root) File() *os.File { return r.dir }

// Resolver reports the resolution method in use (never ResolveAuto).
func (r *Root) Resolver() Resolver { return r.opts.Resolver }

// Close releases the rootfs descriptor and the kept directories. Entries
// stay valid (an entry directly in the rootfs keeps its descriptor open).
func (r *Root) Close() error {
	r.ForgetDirs()
	r.top.release()
	return nil
}

// checkType verifies that fd (opened without following) has type typ.
func checkType(fd int, name string, typ uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	return wantType(&st, name, typ)
}

// checkTypeMount is checkType that also returns the ID of the mount fd is
// on (0: unknown), read in the same statx.
func checkTypeMount(fd int, name string, typ uint32) (uint64, error) {
	var st unix.Stat_t
	id, err := fstatMount(fd, &st)
	if err != nil {
		return 0, &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	return id, wantType(&st, name, typ)
}

// wantType checks that st, of name, has type typ.
func wantType(st *unix.Stat_t, name string, typ uint32) error {
	if st.Mode&unix.S_IFMT != typ {
		return fmt.Errorf("%q is a %s, want a %s: %w", name, inroot.TypeName(st.Mode), inroot.TypeName(typ), ErrWrongType)
	}
	return nil
}
