package nvcontainer

import (
	"errors"
	"fmt"

	"github.com/go-nvc/nvc/ldcache"
)

// Sentinel errors of Apply; an *ApplyError matches them with errors.Is.
var (
	// ErrInvalidPlan is matched when a plan cannot be applied as it is:
	// another PlanVersion, an unknown mount option, a device mount without
	// its device number, a tmpfs mount outside its tmpfs. Nothing was
	// changed.
	ErrInvalidPlan = errors.New("invalid plan")
	// ErrNoProcess is matched when a plan has device cgroup rules but the
	// container has no process (ModeRootfsOnly) whose cgroup could take
	// them. Plan with PlanOptions.NoCgroups and hand the devices to the
	// runtime instead. Nothing was changed.
	ErrNoProcess = errors.New("container has no process")
	// ErrInvalidPID is matched when the container's PID cannot be the
	// container's process in its Mode: out of range (0 or less, above the
	// kernel's pid_max), gone, a zombie, or — in ModeProcess — sharing
	// the caller's mount namespace or that of pid 1 (a host process; a
	// PID of 0 names no process, and rootfs-only mode must be asked for
	// as ModeRootfsOnly).
	// The error names the pid. Nothing was changed.
	ErrInvalidPID = errors.New("invalid container pid")
	// ErrWrongType is matched when something in the rootfs or on the host
	// has another file type than the plan needs: a symlink, FIFO, socket
	// or directory where a file should be, a symlink or a file where a
	// directory should be, a device node with another major:minor, a
	// library source that is not a regular file.
	ErrWrongType = errors.New("wrong file type")
)

// Owner is the user and group given to the files, directories and links
// Apply creates in a rootfs.
type Owner struct {
	UID, GID int
}

// ApplyOptions tune Apply. A nil *ApplyOptions means all defaults.
type ApplyOptions struct {
	// ProcRoot is the host's procfs, through which the container's
	// process is found: PID/ns/mnt, PID/cgroup and the owner of PID.
	// Empty: "/proc".
	ProcRoot string
	// Owner owns everything Apply creates in the rootfs (placeholders,
	// parent directories, symlinks, the new ld.so.cache) and in its
	// tmpfs mounts: they are created with its ids (see the package doc,
	// "User namespaces and rootless runtimes"). Nil: the owner of
	// /proc/PID, as with libnvidia-container — the container's root as
	// the host sees it, 100000 for a container whose root maps there; in
	// ModeRootfsOnly, the caller's uid and gid.
	Owner *Owner
	// LegacyMounts forces libnvidia-container's mount method: bind each
	// host path inside the container's namespace, then remount it with
	// the flags. It works only while the namespace still sees host paths
	// (before pivot_root). False: the new mount API (open_tree,
	// mount_setattr, move_mount) where the kernel has it (Linux 5.12+),
	// the legacy method otherwise.
	LegacyMounts bool
	// Libraries, when set, tells what the loader cache needs of the host
	// libraries the plan mounts, as read when they were found (the
	// *driver.Driver the plan was made from, Host.Driver, is one): the
	// ldcache step then takes each mounted library's entry from it after
	// one statx shows the file at the target is the one read, instead of
	// reading the file in the rootfs. The cache written is the same. Nil:
	// the mounted libraries are read in the rootfs.
	Libraries LibrarySource

	// fault, set only by this package's tests, is called at each point
	// where Apply checks its context; an error it returns fails Apply
	// there, as a cancelled context would.
	fault func(step Step, path string) error
}

// LibrarySource gives the loader cache's reading (ldcache.ReadLibrary)
// of a host file by its path, a Mount's Source; false when it has none.
// *driver.Driver is one.
type LibrarySource interface {
	LDCacheLibrary(hostPath string) (ldcache.Library, bool)
}

// Step names a stage of Apply, as an ApplyError reports it. The stages
// run in the order of the constants.
type Step string

// The stages of Apply.
const (
	// StepCheck validates the plan; it changes nothing.
	StepCheck Step = "check"
	// StepOpen opens what Apply acts through, in the host's mount
	// namespace: every mount source (checked for type and device number),
	// the tmpfs mounts (built and populated, still detached), the
	// container's mount namespace and its device cgroup.
	StepOpen Step = "open"
	// StepCgroup adds the plan's device cgroup rules.
	StepCgroup Step = "cgroup"
	// StepEnter enters the container's mount namespace and opens the
	// rootfs there, and through it the image's CUDA compat libraries
	// (mount mode).
	StepEnter Step = "enter"
	// StepTmpfs mounts each tmpfs and the mounts inside it.
	StepTmpfs Step = "tmpfs"
	// StepMount creates each bind mount's target and mounts its source.
	StepMount Step = "mount"
	// StepSymlink creates each symlink.
	StepSymlink Step = "symlink"
	// StepLDCache rewrites the container's loader cache.
	StepLDCache Step = "ldcache"
	// StepCommit is the last check of the context, after which the
	// changes are kept.
	StepCommit Step = "commit"
)

// ApplyError is a failed Apply: the stage, the path it was acting on and
// the cause. By the time it is returned, everything Apply had changed has
// been taken back, unless UndoErr says otherwise.
type ApplyError struct {
	// Step is the stage that failed.
	Step Step
	// Path is what the stage was acting on: a path inside the rootfs,
	// a host source for StepOpen, or the cgroup for StepCgroup; empty when
	// the stage acts on no single path.
	Path string
	// Err is the cause.
	Err error
	// UndoErr is the error of taking back the changes already made; nil
	// when all of them were taken back.
	UndoErr error

	kind error // ErrInvalidPlan, ErrNoProcess, ErrInvalidPID or ErrWrongType, or nil
}

// Error reads like: applying plan: mount "/usr/bin/nvidia-smi": ...
func (e *ApplyError) Error() string {
	s := "applying plan: " + string(e.Step)
	if e.Path != "" {
		s += fmt.Sprintf(" %q", e.Path)
	}
	s += ": " + e.Err.Error()
	if e.UndoErr != nil {
		s += " (undoing: " + e.UndoErr.Error() + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *ApplyError) Unwrap() error { return e.Err }

// Is matches the package's sentinel that classifies the cause.
func (e *ApplyError) Is(target error) bool {
	return e.kind != nil && target == e.kind
}
