package cdihook

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/cyphar/filepath-securejoin/pathrs-lite/procfs"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// maskMethod is how the copy of params gets its own mount.
type maskMethod int

const (
	// maskAuto clones the file out of the detached tmpfs (recent kernels,
	// 6.18 here, allow it) and falls back to maskViaParent where the
	// kernel refuses (EINVAL).
	maskAuto maskMethod = iota
	// maskDetached only clones out of the detached tmpfs.
	maskDetached
	// maskViaParent attaches the tmpfs over the target's directory for a
	// moment, clones the file from the attached tmpfs, and detaches it
	// again; the container has not started, so nothing sees the moment.
	maskViaParent
)

// copyAttr are the attributes of the mounted copy.
const copyAttr = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC

// copyName is the copy's name in its tmpfs.
const copyName = "params"

// mountCopy puts data in a file of a private tmpfs of its own size and
// mounts that file, read-only, nosuid, nodev and noexec, over target,
// through target's descriptor: nothing is resolved by path in the
// container, and the copy is never visible anywhere but over target.
func mountCopy(data []byte, target *rootfs.Entry, how maskMethod) error {
	tmpfs, err := newCopyTmpfs(data)
	if err != nil {
		return err
	}
	defer unix.Close(tmpfs)
	clone, err := cloneCopy(tmpfs, target, how)
	if err != nil {
		return err
	}
	defer unix.Close(clone)
	err = unix.MoveMount(clone, "", target.Fd(), "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	return os.NewSyscallError("move_mount", err)
}

// newCopyTmpfs makes a detached tmpfs (fsopen, fsmount: nosuid, nodev,
// noexec) holding data as copyName, mode 0444, and returns its mount
// descriptor.
func newCopyTmpfs(data []byte) (int, error) {
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, os.NewSyscallError("fsopen tmpfs", err)
	}
	defer unix.Close(fsfd)
	size := (len(data) + os.Getpagesize()) &^ (os.Getpagesize() - 1)
	for _, kv := range [][2]string{{"size", strconv.Itoa(size)}, {"mode", "0555"}} {
		if err := unix.FsconfigSetString(fsfd, kv[0], kv[1]); err != nil {
			return -1, os.NewSyscallError("fsconfig "+kv[0]+"="+kv[1], err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, os.NewSyscallError("fsconfig create", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return -1, os.NewSyscallError("fsmount", err)
	}
	if err := writeCopy(mfd, data); err != nil {
		unix.Close(mfd)
		return -1, err
	}
	return mfd, nil
}

func writeCopy(dir int, data []byte) error {
	fd, err := unix.Openat(dir, copyName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o444)
	if err != nil {
		return os.NewSyscallError("openat "+copyName, err)
	}
	f := os.NewFile(uintptr(fd), copyName)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o444)
	}
	return errors.Join(err, f.Close())
}

// cloneCopy returns a detached mount of the copy alone, with copyAttr.
func cloneCopy(tmpfs int, target *rootfs.Entry, how maskMethod) (int, error) {
	if how != maskViaParent {
		fd, err := cloneFile(tmpfs)
		if err != unix.EINVAL || how == maskDetached {
			return fd, err
		}
	}
	return cloneViaParent(tmpfs, target)
}

// cloneFile clones copyName out of the tmpfs at dir (open_tree
// OPEN_TREE_CLONE) and sets copyAttr on the clone. The error is the bare
// errno, for cloneCopy to test.
func cloneFile(dir int) (int, error) {
	fd, err := unix.OpenTree(dir, copyName, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return -1, err
	}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: copyAttr}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// cloneViaParent attaches the tmpfs over target's directory, where the
// kernel lets open_tree clone from it, clones the copy, and detaches the
// tmpfs again.
func cloneViaParent(tmpfs int, target *rootfs.Entry) (int, error) {
	err := unix.MoveMount(tmpfs, "", target.DirFd(), "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	if err != nil {
		return -1, os.NewSyscallError("move_mount tmpfs over "+target.Path()+"/..", err)
	}
	clone, cerr := cloneFile(tmpfs)
	if err := detach(tmpfs); err != nil {
		if cerr == nil {
			unix.Close(clone)
		}
		return -1, fmt.Errorf("detaching the tmpfs from %s/..: %w", target.Path(), err)
	}
	if cerr != nil {
		return -1, os.NewSyscallError("open_tree "+copyName, cerr)
	}
	return clone, nil
}

// detach unmounts (MNT_DETACH) the mount whose root fd is, through fd's
// magic link in a private procfs (pathrs-lite), on a thread of its own
// filesystem context (ns.Current), so that nothing is resolved by path.
func detach(fd int) error {
	return ns.Current().Run(func() error {
		proc, err := procfs.OpenProcRoot()
		if err != nil {
			return err
		}
		defer proc.Close()
		dir, unlock, err := proc.OpenThreadSelf("fd/")
		if err != nil {
			return err
		}
		defer unlock()
		defer dir.Close()
		if err := unix.Fchdir(int(dir.Fd())); err != nil {
			return os.NewSyscallError("fchdir", err)
		}
		return os.NewSyscallError("umount2", unix.Unmount(strconv.Itoa(fd), unix.MNT_DETACH))
	})
}
