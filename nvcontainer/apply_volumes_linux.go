package nvcontainer

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// volumeGuard keeps Apply out of the runtime's volumes (see Plan.Apply,
// "Volumes and shared mounts"). It reads the container namespace's mount
// table once per Apply, on the confined thread, and the caller's only
// when a fresh-looking tmpfs has to be told from a host one.
type volumeGuard struct {
	proc   *os.File // the host's procfs, opened before entering
	mode   Mode
	rootfs string // the rootfs as mountinfo shows it (ctr.Rootfs)

	rootID uint64                     // the rootfs's own mount
	mounts map[uint64]*mountinfo.Info // the container namespace's, by ID
	host   map[string]bool            // "major:minor" of the caller's mounts; nil until read
}

// openProc opens the host's procfs for the guard, in the caller's
// namespace: on the confined thread, /proc may be the container's.
func (a *applier) openProc() error {
	fd, err := unix.Open(a.opts.ProcRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return stepError(StepOpen, a.opts.ProcRoot, &os.PathError{Op: "open", Path: a.opts.ProcRoot, Err: err})
	}
	f := os.NewFile(uintptr(fd), a.opts.ProcRoot) // not os.OpenFile: no poller to try
	a.vol = &volumeGuard{proc: f, mode: a.ctr.Mode, rootfs: path.Clean(a.ctr.Rootfs)}
	return nil
}

// openRoot opens the rootfs on the confined thread, with the guard
// watching every creation in it.
func (a *applier) openRoot() (*rootfs.Root, error) {
	root, err := rootfs.Open(a.ctr.Rootfs, &rootfs.Options{Owner: a.owner, Undo: &a.inner, KeepDirs: true, MayCreate: a.vol.mayCreate, RemoveStaleTemps: true})
	if err == nil {
		a.vol.rootID = root.MountID() // read when it was opened
		if a.vol.rootID == 0 {        // a kernel before 5.8
			a.vol.rootID, err = a.vol.mountID(int(root.File().Fd()))
		}
		if err != nil {
			root.Close()
		}
	}
	if err != nil {
		return nil, stepError(StepEnter, a.ctr.Rootfs, err)
	}
	return root, nil
}

// readMounts reads the container namespace's mount table, on the confined
// thread while the caller opens the sources (reading it takes longer than
// parsing it: some 0.15 ms for 20 mounts).
func (g *volumeGuard) readMounts() error {
	mounts, err := g.readMountInfo("thread-self/mountinfo", nil)
	if err != nil {
		return err
	}
	g.mounts = make(map[uint64]*mountinfo.Info, len(mounts))
	for _, m := range mounts {
		g.mounts[uint64(m.ID)] = m
	}
	return nil
}

// mayCreate is rootfs.Options.MayCreate: it allows creating entries in
// the directory dirFd only on the rootfs's own mount, on a procfs or
// sysfs (which keep nothing), or on a tmpfs the runtime made for the
// container (its root directory, a filesystem mounted nowhere in the
// caller's namespace: /dev, /run).
func (g *volumeGuard) mayCreate(dirFd int, dir string) error {
	id, err := g.mountID(dirFd)
	if err != nil || id == g.rootID {
		return err
	}
	m := g.mounts[id]
	if m == nil {
		return fmt.Errorf("directory %q is on a mount made since Apply began (ID %d: a directory Apply mounted from the host?), not in the rootfs: %w", dir, id, ErrVolume)
	}
	if m.FSType == "proc" || m.FSType == "sysfs" {
		return nil
	}
	fresh, err := g.freshTmpfs(m)
	if err != nil || fresh {
		return err
	}
	return fmt.Errorf("directory %q is in the volume mounted at %q (%s), not in the rootfs: what Apply creates there would stay on the host: %w",
		dir, g.shown(m), describe(m), ErrVolume)
}

// mayMountOn refuses a target whose mount has shared propagation: the new
// mount would propagate to its peers, outside the container. Rootfs-only
// mode works in the caller's own namespace, whose mounts are the
// caller's business, and is not checked; nor are the mounts this Apply
// made itself (a tmpfs, a directory), which are private.
func (g *volumeGuard) mayMountOn(e *rootfs.Entry, target string) error {
	if g.mode == ModeRootfsOnly {
		return nil
	}
	id := e.MountID() // read with the entry's stat
	if id == 0 {
		var err error
		if id, err = g.mountID(e.Fd()); err != nil {
			return err
		}
	}
	m := g.mounts[id]
	if m == nil {
		return nil
	}
	for _, f := range strings.Fields(m.Optional) {
		if strings.HasPrefix(f, "shared:") {
			return fmt.Errorf("%q is on the mount at %q (%s), which has shared propagation (%s): a mount there would propagate outside the container: %w",
				target, g.shown(m), describe(m), f, ErrSharedMount)
		}
	}
	return nil
}

// freshTmpfs tells a tmpfs the runtime made for the container (mounted
// whole, and nowhere in the caller's namespace) from a host one. In
// ModeRootfsOnly every mount is the caller's; in ModeStandalone the
// caller is in the container and cannot see the host's mounts: a tmpfs
// mounted whole counts as the container's.
func (g *volumeGuard) freshTmpfs(m *mountinfo.Info) (bool, error) {
	if g.mode == ModeRootfsOnly || m.Root != "/" || (m.FSType != "tmpfs" && m.FSType != "ramfs") {
		return false, nil
	}
	if g.mode == ModeStandalone {
		return true, nil
	}
	if g.host == nil {
		host := map[string]bool{}
		_, err := g.readMountInfo("self/mountinfo", func(i *mountinfo.Info) (bool, bool) {
			host[devOf(i)] = true
			return true, false
		})
		if err != nil {
			return false, err
		}
		g.host = host
	}
	return !g.host[devOf(m)], nil
}

func devOf(m *mountinfo.Info) string {
	return strconv.Itoa(m.Major) + ":" + strconv.Itoa(m.Minor)
}

// readMountInfo reads name below the host's procfs: thread-self is the
// confined thread (the container's namespace), self the process's leader
// (the caller's, which the confined thread never is).
func (g *volumeGuard) readMountInfo(name string, filter mountinfo.FilterFunc) ([]*mountinfo.Info, error) {
	f, err := openAt(g.proc, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mounts, err := mountinfo.GetMountsFromReader(bufio.NewReaderSize(f, 32<<10), filter)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", f.Name(), err)
	}
	return mounts, nil
}

func openAt(dir *os.File, name string) (*os.File, error) {
	shown := dir.Name() + "/" + name
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: shown, Err: err}
	}
	return os.NewFile(uintptr(fd), shown), nil
}

// mountID is the ID of the mount fd is on: statx (Linux 5.8), else the
// mnt_id line of the descriptor's fdinfo.
func (g *volumeGuard) mountID(fd int) (uint64, error) {
	if id, err := inroot.MountID(fd, ""); err == nil && id != 0 {
		return id, nil
	}
	f, err := openAt(g.proc, "thread-self/fdinfo/"+strconv.Itoa(fd))
	if err != nil {
		return 0, fmt.Errorf("finding the mount of descriptor %d: %w", fd, err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "mnt_id:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("finding the mount of descriptor %d: no mnt_id in %s", fd, f.Name())
}

// shown is m's mount point inside the rootfs, where it is below it.
func (g *volumeGuard) shown(m *mountinfo.Info) string {
	if g.rootfs == "/" {
		return m.Mountpoint
	}
	if rel, ok := strings.CutPrefix(m.Mountpoint, g.rootfs); ok && (rel == "" || rel[0] == '/') {
		return "/" + strings.TrimPrefix(rel, "/")
	}
	return m.Mountpoint
}

// describe says what m is: "ext4 /dev/vda:/srv/libs".
func describe(m *mountinfo.Info) string {
	return m.FSType + " " + m.Source + ":" + m.Root
}

func (g *volumeGuard) close() {
	if g != nil && g.proc != nil {
		g.proc.Close()
	}
}
