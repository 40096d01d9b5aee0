package nvcli

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/nvcontainer"
)

// ErrNotProcfs is matched by the error of [Container] in standalone
// mode when ROOTFS/proc is not the root of a procfs mount.
var ErrNotProcfs = errors.New("not the root of a procfs mount")

// procRootIno is the inode number of every procfs's root directory.
const procRootIno = 1

// Container returns the container nvidia-container-cli configure acts on
// for its --pid value and ROOTFS argument, and the procfs its process is
// found in (nvcontainer.PlanOptions.ProcRoot and
// nvcontainer.ApplyOptions.ProcRoot). A pid above 0 is that process and
// procRoot is "" (the running kernel's /proc). A ROOTFS that is not
// absolute, or is "/", is [nvcontainer.ErrInvalidRootfs]. Errors are
// [PrefixInput] errors.
//
// A pid above 0 is [nvcontainer.ModeProcess]: Apply refuses it unless it
// is a live process in another mount namespace than the caller's.
//
// A pid of 0 or less is standalone mode ([nvcontainer.ModeStandalone]), as
// in libnvidia-container: the caller runs inside the container's
// namespaces (a hook the runtime starts there), so the container is the
// caller's parent process (getppid) and its procfs is ROOTFS/proc, from
// which the plan and Apply read the process's cgroup, mount namespace and
// owner; Apply refuses the parent unless it is alive and its mount
// namespace is the caller's. The CLI never uses
// [nvcontainer.ModeRootfsOnly]. Files the image ships there would choose
// which host cgroup gets the device rules or which mount namespace is
// entered, so ROOTFS/proc must be a real procfs mount: it is opened
// inside the rootfs without following it (O_PATH|O_NOFOLLOW, parents
// resolved with openat2 RESOLVE_IN_ROOT) and must be on procfs
// (fstatfs), a mount root (statx STATX_ATTR_MOUNT_ROOT, where the kernel
// reports it) and procfs's own root directory (inode 1, so that a bind
// of a procfs subdirectory such as /proc/1 is refused too); otherwise the
// error matches [ErrNotProcfs]. What remains trusted: that the procfs
// mounted there is the one of the caller's PID namespace (the runtime
// mounts it; a hook running inside the container's namespaces sees its
// parent there), and that nothing replaces the mount between this check
// and the plan's reads — standalone mode is meant for such hooks, not for
// pointing the CLI at an arbitrary directory from the host.
func Container(pid int, rootfsPath string) (ctr nvcontainer.Container, procRoot string, err error) {
	if !strings.HasPrefix(rootfsPath, "/") || path.Clean(rootfsPath) == "/" {
		return nvcontainer.Container{}, "", wrap(PrefixInput, nvcontainer.ErrInvalidRootfs)
	}
	if pid > 0 {
		return nvcontainer.Container{PID: pid, Rootfs: rootfsPath}, "", nil
	}
	if err := checkRootfsProc(rootfsPath); err != nil {
		return nvcontainer.Container{}, "", wrap(PrefixInput, err)
	}
	return nvcontainer.Container{PID: os.Getppid(), Rootfs: rootfsPath, Mode: nvcontainer.ModeStandalone}, path.Join(rootfsPath, "proc"), nil
}

// CheckContainer refuses, before anything is planned or changed, what
// configure would refuse later: a caller without root ([PrefixPermission],
// matching [nvcontainer.ErrPermission]) and a container
// [nvcontainer.CheckContainer] refuses (a host process, a zombie, …;
// [PrefixInput]). ctr and procRoot are those of [Container].
func CheckContainer(ctr nvcontainer.Container, procRoot string) error {
	if os.Geteuid() != 0 {
		return wrap(PrefixPermission, errNeedsRoot)
	}
	return wrap(PrefixInput, nvcontainer.CheckContainer(ctr, procRoot))
}

// checkRootfsProc checks that ROOTFS/proc is the root of a procfs mount.
func checkRootfsProc(rootfsPath string) error {
	shown := path.Join(rootfsPath, "proc")
	root, err := rootfs.Open(rootfsPath, nil)
	if err != nil {
		return fmt.Errorf("standalone mode (no --pid): %w", err)
	}
	defer root.Close()
	e, err := root.Lookup("/proc")
	if err != nil {
		return fmt.Errorf("standalone mode (no --pid) reads %s: %w", shown, err)
	}
	defer e.Close()
	if err := isProcfsRoot(e.Fd()); err != nil {
		return fmt.Errorf("standalone mode (no --pid) reads %s, which is %w: %w", shown, err, ErrNotProcfs)
	}
	return nil
}

// isProcfsRoot checks the file fd (opened without following it) is the
// root directory of a procfs mount; the error says what it is instead.
func isProcfsRoot(fd int) error {
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return os.NewSyscallError("fstatfs", err)
	}
	if sfs.Type != unix.PROC_SUPER_MAGIC {
		return fmt.Errorf("on a filesystem of type %#x, not procfs", sfs.Type)
	}
	var stx unix.Statx_t
	err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_INO, &stx)
	if err != nil {
		return os.NewSyscallError("statx", err)
	}
	if stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return errors.New("inside a procfs, not a mount of one")
	}
	if stx.Ino != procRootIno || stx.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("procfs inode %d, not procfs's root directory", stx.Ino)
	}
	return nil
}

// errNeedsRoot is configure's error without root: it matches
// nvcontainer.ErrPermission and prints as nvidia-container-cli's.
var errNeedsRoot error = needsRoot{}

type needsRoot struct{}

func (needsRoot) Error() string {
	return "configure needs root (CAP_SYS_ADMIN); use --dry-run to see the plan"
}

func (needsRoot) Unwrap() error { return nvcontainer.ErrPermission }
