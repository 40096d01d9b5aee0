package nvcontainer

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/rootfs"
)

// actAs makes the calling thread create files as owner, as
// libnvidia-container does with setfsuid and setfsgid: every entry Apply
// creates in the container is then born with the owner's ids, which a
// filesystem mounted inside a user namespace (the runtime's tmpfs /dev)
// requires — there the kernel refuses (EOVERFLOW) to create an inode for
// a filesystem id its namespace does not map, such as the host's root, so
// creating and then chowning cannot work. The change is of this thread
// only: it must be the confined thread, which Go discards afterwards.
//
// Moving the filesystem uid away from 0 clears the filesystem capabilities
// from the effective set (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, …; see
// capabilities(7)); actAs sets the effective set it had back, so that
// Apply still writes into directories the owner could not. A caller
// whose ids are already the owner's changes nothing.
func actAs(o *rootfs.Owner) error {
	if o == nil {
		return nil
	}
	var hdr unix.CapUserHeader
	hdr.Version = unix.LINUX_CAPABILITY_VERSION_3
	var caps [2]unix.CapUserData
	if err := unix.Capget(&hdr, &caps[0]); err != nil {
		return os.NewSyscallError("capget", err)
	}
	if err := setfsid(unix.SetfsgidRetGid, o.GID, "gid"); err != nil {
		return err
	}
	if err := setfsid(unix.SetfsuidRetUid, o.UID, "uid"); err != nil {
		return err
	}
	if err := unix.Capset(&hdr, &caps[0]); err != nil {
		return os.NewSyscallError("capset", err)
	}
	return nil
}

// setfsid sets a filesystem id and checks that it holds: setfsuid and
// setfsgid fail silently (they return the previous id) for an id the
// caller may not take or its user namespace does not map.
func setfsid(set func(int) (int, error), id int, what string) error {
	if _, err := set(id); err != nil {
		return fmt.Errorf("acting as the container's owner: filesystem %s %d: %w", what, id, os.NewSyscallError("setfs"+what, err))
	}
	if cur, _ := set(-1); cur != id {
		return fmt.Errorf("acting as the container's owner: filesystem %s %d not taken (still %d): the caller may not act as it or does not map it", what, id, cur)
	}
	return nil
}
