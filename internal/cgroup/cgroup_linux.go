package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// Options say where Find and Open read from. A nil *Options means defaults.
type Options struct {
	// ProcRoot is the procfs mount holding PID/cgroup for the container's
	// process; empty means "/proc".
	ProcRoot string
	// MountInfo is the mountinfo file of the process that will write the
	// rules, whose view of the cgroup mounts the paths are for; empty means
	// ProcRoot + "/thread-self/mountinfo" (the calling thread).
	MountInfo string
}

func (o *Options) procRoot() string {
	if o == nil || o.ProcRoot == "" {
		return "/proc"
	}
	return o.ProcRoot
}

func (o *Options) mountInfo() string {
	if o == nil || o.MountInfo == "" {
		return filepath.Join(o.procRoot(), "thread-self", "mountinfo")
	}
	return o.MountInfo
}

// Find locates the device cgroup of process pid by reading its cgroup file
// and the caller's mountinfo (see [Locate]).
func Find(pid int, opts *Options) (Location, error) {
	cgFile := filepath.Join(opts.procRoot(), strconv.Itoa(pid), "cgroup")
	f, err := os.Open(cgFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %w", err, ErrNotFound)
		}
		return Location{}, fmt.Errorf("finding the device cgroup of pid %d: %w", pid, err)
	}
	defer f.Close()
	return FindFrom(f, pid, opts)
}

// FindFrom is [Find] with process pid's cgroup file already open as f
// (through a descriptor of its /proc/PID directory, say, that stays bound
// to the process whatever becomes of its number); pid is for errors.
func FindFrom(f *os.File, pid int, opts *Options) (Location, error) {
	entries, err := ParseProcCgroup(f)
	if err != nil {
		return Location{}, fmt.Errorf("finding the device cgroup of pid %d: %s: %w", pid, f.Name(), err)
	}
	mounts, err := readMountInfo(opts.mountInfo())
	if err != nil {
		return Location{}, fmt.Errorf("finding the device cgroup of pid %d: %w", pid, err)
	}
	loc, err := Locate(entries, mounts)
	if err != nil {
		return Location{}, fmt.Errorf("finding the device cgroup of pid %d: %w", pid, err)
	}
	return loc, nil
}

func readMountInfo(name string) ([]*mountinfo.Info, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mounts, err := mountinfo.GetMountsFromReader(f, cgroupMounts)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", name, err)
	}
	return mounts, nil
}

func cgroupMounts(m *mountinfo.Info) (skip, stop bool) {
	return m.FSType != "cgroup" && m.FSType != "cgroup2", false
}

// Cgroup is an open device cgroup. Its methods are safe for one goroutine at
// a time.
type Cgroup struct {
	dir     *os.File
	path    string
	version Version
}

// Open finds the device cgroup of process pid and opens it.
func Open(pid int, opts *Options) (*Cgroup, error) {
	loc, err := Find(pid, opts)
	if err != nil {
		return nil, err
	}
	return openLocation(loc, pid)
}

// OpenFrom is [Open] with process pid's cgroup file already open as f (see
// [FindFrom]).
func OpenFrom(f *os.File, pid int, opts *Options) (*Cgroup, error) {
	loc, err := FindFrom(f, pid, opts)
	if err != nil {
		return nil, err
	}
	return openLocation(loc, pid)
}

func openLocation(loc Location, pid int) (*Cgroup, error) {
	c, err := OpenPath(loc.Path)
	if err != nil {
		return nil, err
	}
	if c.version != loc.Version {
		c.Close()
		return nil, fmt.Errorf("opening device cgroup %s of pid %d: a %s file system, but the cgroup file says %s: %w", loc.Path, pid, c.version, loc.Version, ErrInvalid)
	}
	return c, nil
}

// OpenPath opens a cgroup directory given by path, a v1 devices hierarchy
// directory or a cgroup2 directory; the file system says which.
func OpenPath(path string) (*Cgroup, error) {
	dir, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %w", err, ErrNotFound)
		}
		return nil, fmt.Errorf("opening device cgroup: %w", err)
	}
	c := &Cgroup{dir: dir, path: path}
	if c.version, err = c.detect(); err != nil {
		dir.Close()
		return nil, fmt.Errorf("opening device cgroup %s: %w", path, err)
	}
	return c, nil
}

// detect tells v1 from v2 by the file system's magic number and checks that
// a v1 directory belongs to the devices controller.
func (c *Cgroup) detect() (Version, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(c.dir.Fd()), &st); err != nil {
		return 0, os.NewSyscallError("fstatfs", err)
	}
	switch st.Type {
	case unix.CGROUP2_SUPER_MAGIC:
		return V2, nil
	case unix.CGROUP_SUPER_MAGIC:
		var s unix.Stat_t
		if err := unix.Fstatat(int(c.dir.Fd()), "devices.list", &s, 0); err != nil {
			return 0, fmt.Errorf("not a devices controller directory: devices.list: %w", errors.Join(err, ErrNotFound))
		}
		return V1, nil
	}
	return 0, fmt.Errorf("file system type %#x is not a cgroup: %w", st.Type, ErrNotFound)
}

// Version returns the mechanism that holds the cgroup's device rules.
func (c *Cgroup) Version() Version { return c.version }

// Path returns the cgroup directory as given to [OpenPath] or found by [Open].
func (c *Cgroup) Path() string { return c.path }

// Close releases the cgroup directory. Undo functions returned by Allow keep
// working after Close.
func (c *Cgroup) Close() error { return c.dir.Close() }

// Allow grants the device accesses of rules in the cgroup and returns a
// function that takes back exactly what it granted. Nothing is changed when
// it fails; errors name the cgroup path and the rules. Run undo functions in
// the reverse order of the Allow calls; an undo not run is released by the
// garbage collector and leaves the grant in place.
//
// Allow is idempotent: accesses a v1 cgroup's devices.list already grants
// are not written again, and a v2 device program that already starts with
// the prefix these rules make (an earlier Allow never taken back, as after
// a process killed part-way) is kept as it is; their undo leaves them.
func (c *Cgroup) Allow(rules []Rule) (undo func() error, err error) {
	norm, err := normalizeAll(rules)
	if err != nil {
		return nil, fmt.Errorf("allowing devices in %s: %w", c.path, err)
	}
	if len(norm) == 0 {
		return func() error { return nil }, nil
	}
	if c.version == V1 {
		return c.allowV1(norm)
	}
	return c.allowV2(norm)
}

// dupDir returns a new descriptor of the cgroup directory for an undo
// function, so that undo does not depend on c staying open.
func (c *Cgroup) dupDir() (*os.File, error) {
	fd, err := unix.FcntlInt(c.dir.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("fcntl F_DUPFD_CLOEXEC", err)
	}
	return os.NewFile(uintptr(fd), c.path), nil
}
