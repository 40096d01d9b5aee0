package rootfs

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"github.com/cyphar/filepath-securejoin/pathrs-lite/procfs"
	"golang.org/x/sys/unix"
)

// finish gives a just-created entry (fd, whose fstat is st; recorded for
// undo already) its owner and exact mode (the umask may have stripped
// bits). What st shows already right is not set again.
func (r *Root) finish(fd int, st *unix.Stat_t, shown string, perm fs.FileMode, target string) error {
	if err := r.fault("chown", shown); err != nil {
		return err
	}
	chowned, err := r.chown(fd, shown, st)
	if err != nil {
		return err
	}
	if target == "" { // symlinks have no mode of their own
		if err := chmodFd(fd, shown, perm, st, chowned); err != nil {
			return err
		}
	}
	return nil
}

// chown gives fd the Root's owner unless st shows it has it; it reports
// whether it changed anything.
func (r *Root) chown(fd int, shown string, st *unix.Stat_t) (bool, error) {
	o := r.opts.Owner
	if o == nil || (st != nil && int(st.Uid) == o.UID && int(st.Gid) == o.GID) {
		return false, nil
	}
	err := unix.Fchownat(fd, "", o.UID, o.GID, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return false, &os.PathError{Op: fmt.Sprintf("chown %d:%d", o.UID, o.GID), Path: shown, Err: err}
	}
	return true, nil
}

// chmodFd sets fd's permissions through its descriptor, O_PATH included:
// fchmodat2(AT_EMPTY_PATH) on Linux >= 6.6, else through the descriptor's
// magic link in a verified procfs. It does nothing when st (nil: unknown)
// already has them, unless chowned: a chown may have cleared set-id bits.
func chmodFd(fd int, shown string, perm fs.FileMode, st *unix.Stat_t, chowned bool) error {
	mode := unixPerm(perm)
	if st != nil && st.Mode&0o7777 == mode && (!chowned || mode&(unix.S_ISUID|unix.S_ISGID) == 0) {
		return nil
	}
	err := unix.Fchmodat(fd, "", mode, unix.AT_EMPTY_PATH)
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS || err == unix.EINVAL {
		err = chmodViaProc(fd, mode)
	}
	if err != nil {
		return &os.PathError{Op: fmt.Sprintf("chmod %#o", mode), Path: shown, Err: err}
	}
	return nil
}

func chmodViaProc(fd int, mode uint32) error {
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
	return unix.Fchmodat(int(fdDir.Fd()), strconv.Itoa(fd), mode, 0)
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
