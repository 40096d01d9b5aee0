package rootfs

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"github.com/cyphar/filepath-securejoin/pathrs-lite/procfs"
	"golang.org/x/sys/unix"
)

// finish gives a just-created f its owner and exact mode (the umask may
// have stripped bits), then records it for undo.
func (r *Root) finish(dir *os.File, name string, f *os.File, perm fs.FileMode, target string) error {
	if err := r.chown(f); err != nil {
		return err
	}
	if target == "" { // symlinks have no mode of their own
		if err := chmodFd(f, perm); err != nil {
			return err
		}
	}
	return r.record(dir, name, f, target)
}

func (r *Root) chown(f *os.File) error {
	if r.opts.Owner == nil {
		return nil
	}
	o := r.opts.Owner
	err := unix.Fchownat(int(f.Fd()), "", o.UID, o.GID, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return &os.PathError{Op: fmt.Sprintf("chown %d:%d", o.UID, o.GID), Path: f.Name(), Err: err}
	}
	return nil
}

// chmodFd sets f's permissions through its descriptor, O_PATH included:
// fchmodat2(AT_EMPTY_PATH) on Linux >= 6.6, else through the descriptor's
// magic link in a verified procfs.
func chmodFd(f *os.File, perm fs.FileMode) error {
	mode := unixPerm(perm)
	err := unix.Fchmodat(int(f.Fd()), "", mode, unix.AT_EMPTY_PATH)
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS || err == unix.EINVAL {
		err = chmodViaProc(f, mode)
	}
	if err != nil {
		return &os.PathError{Op: fmt.Sprintf("chmod %#o", mode), Path: f.Name(), Err: err}
	}
	return nil
}

func chmodViaProc(f *os.File, mode uint32) error {
	proc, err := procfs.OpenProcRoot()
	if err != nil {
		return err
	}
	defer proc.Close()
	fdDir, unlock, err := proc.OpenThreadSelf("fd/")
	if err != nil {
		return err
	}
	defer unlock()
	defer fdDir.Close()
	return unix.Fchmodat(int(fdDir.Fd()), strconv.Itoa(int(f.Fd())), mode, 0)
}

func unixPerm(perm fs.FileMode) uint32 {
	mode := uint32(perm.Perm())
	if perm&fs.ModeSetuid != 0 {
		mode |= unix.S_ISUID
	}
	if perm&fs.ModeSetgid != 0 {
		mode |= unix.S_ISGID
	}
	if perm&fs.ModeSticky != 0 {
		mode |= unix.S_ISVTX
	}
	return mode
}
