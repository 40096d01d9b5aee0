package nvcontainer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/cyphar/filepath-securejoin/pathrs-lite/procfs"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// maxCompatEntries bounds the directory entries read from the image's
// CUDA compat dir; real ones hold a handful.
const maxCompatEntries = 4096

// rootfsView reads a container rootfs without leaving it.
type rootfsView interface {
	// resolve follows unsafePath inside the rootfs, symlinks included,
	// and returns the path it leads to (inside the rootfs) and its mode
	// (S_IFMT bits and permissions).
	resolve(unsafePath string) (inRoot string, mode uint32, err error)
	// list returns the sorted names in the directory at inRoot (a path
	// resolve returned).
	list(inRoot string) ([]string, error)
	close()
}

// imageRoot is a rootfs opened as an O_PATH directory; every lookup
// in it goes through inroot.Open (openat2 RESOLVE_IN_ROOT, or
// filepath-securejoin's emulation), so symlinks and ".." stay inside.
type imageRoot struct {
	dir  *os.File
	real string // the rootfs path as the kernel names it
}

// openRootfs opens the rootfs at rootfs, whose last component must be a
// directory, not a symlink; the components before it (a /proc/PID/root
// link among them) are followed.
func openRootfs(rootfs string) (rootfsView, error) {
	fd, err := unix.Open(rootfs, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: rootfs, Err: err}
	}
	dir := os.NewFile(uintptr(fd), rootfs)
	real, err := procfs.ProcSelfFdReadlink(dir)
	if err != nil {
		dir.Close()
		return nil, fmt.Errorf("reading the path of %s: %w", rootfs, err)
	}
	return &imageRoot{dir: dir, real: real}, nil
}

func (r *imageRoot) close() { r.dir.Close() }

func (r *imageRoot) resolve(unsafePath string) (string, uint32, error) {
	fd, err := inroot.Open(r.dir, unsafePath, unix.O_PATH)
	if err != nil {
		return "", 0, fmt.Errorf("resolving %q in rootfs %q: %w", unsafePath, r.dir.Name(), err)
	}
	h := os.NewFile(uintptr(fd), unsafePath)
	defer h.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", 0, fmt.Errorf("resolving %q in rootfs %q: %w", unsafePath, r.dir.Name(), os.NewSyscallError("fstat", err))
	}
	p, err := procfs.ProcSelfFdReadlink(h)
	if err != nil {
		return "", 0, fmt.Errorf("resolving %q in rootfs %q: %w", unsafePath, r.dir.Name(), err)
	}
	in, ok := underRoot(r.real, p)
	if !ok {
		return "", 0, fmt.Errorf("resolving %q in rootfs %q: it led to %q, outside the rootfs", unsafePath, r.dir.Name(), p)
	}
	return in, st.Mode, nil
}

// underRoot returns p as a path inside root, if it is one.
func underRoot(root, p string) (string, bool) {
	if p == root {
		return "/", true
	}
	if root == "/" {
		return p, true
	}
	rest, ok := strings.CutPrefix(p, root+"/")
	return "/" + rest, ok
}

func (r *imageRoot) list(inRoot string) ([]string, error) {
	fd, err := inroot.Open(r.dir, inRoot, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("listing %q in rootfs %q: %w", inRoot, r.dir.Name(), err)
	}
	d := os.NewFile(uintptr(fd), inRoot)
	defer d.Close()
	names, err := d.Readdirnames(maxCompatEntries)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("listing %q in rootfs %q: %w", inRoot, r.dir.Name(), err)
	}
	slices.Sort(names)
	return names, nil
}

// Mode tests on the S_IFMT bits resolve returns.
func isDirMode(m uint32) bool { return m&unix.S_IFMT == unix.S_IFDIR }
func isRegMode(m uint32) bool { return m&unix.S_IFMT == unix.S_IFREG }
