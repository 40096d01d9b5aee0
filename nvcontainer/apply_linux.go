package nvcontainer

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-nvc/nvc/internal/cgroup"
	"github.com/go-nvc/nvc/internal/liblink"
	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/internal/undo"
)

// Apply makes the plan true in a container, all or nothing: it mounts the
// plan's tmpfs, files, directories and device nodes into the rootfs,
// creates its symlinks, adds its device cgroup rules and rewrites the
// rootfs's ld.so.cache. If any of that fails, or ctx is done before the
// end, everything already changed is taken back in reverse order (mounts
// detached, created files, directories and links removed, cgroup rules
// withdrawn, the previous ld.so.cache put back) and the error is an
// *ApplyError naming the step and the path. A process killed part-way
// leaves changes only inside the container, and Apply run again converges
// to a clean run's result; Applies on one rootfs are serialized (see the
// package doc, "Interrupted runs, retries and shared rootfs").
//
// The container is ctr. In ModeProcess (the zero Mode) Apply works in the
// mount namespace of the process ctr.PID (ProcRoot/PID/ns/mnt) and
// ctr.Rootfs is the rootfs as seen there — its host path while an OCI hook
// runs (before pivot_root), "/" once the workload runs. The PID is not
// trusted (an OCI state can carry anything): it must be within pid_max and
// its process alive — not a zombie — and in a mount namespace other than
// the caller's; otherwise the error matches ErrInvalidPID and names the pid.
// The process's /proc/PID directory is opened once and everything is read
// through it (namespace, cgroup, owner), so a process that exits, or whose
// number is reused, cannot redirect Apply. In ModeRootfsOnly (for a runtime
// that has not started the process yet), asked for by name, Apply works in
// the caller's own mount namespace on the rootfs directory ctr.Rootfs; PID
// must be 0 and the plan must have no cgroup rules (ErrNoProcess): give
// the devices to the runtime instead. ModeStandalone is for a caller inside
// the container's mount namespace (see Mode).
// The same plan may be applied to several containers with the same rootfs
// layout, concurrently.
//
// The steps, in order (see the Step constants):
//
//  1. check: the plan is validated; nothing is touched.
//  2. open: in the caller's (host) mount namespace every host source is
//     opened without following symlinks and checked: a library, binary,
//     firmware or config source must be a regular file, a directory
//     source a directory, a device source a character device with the
//     plan's major:minor. With the new mount API each is cloned into a detached
//     mount (open_tree) whose flags are set (mount_setattr) before anyone
//     can see it, and each tmpfs is created (fsopen, fsmount) and filled —
//     files and placeholders for the mounts inside it — while detached.
//     The container's process is pinned and checked first (see above),
//     then its mount namespace and device cgroup are opened. The
//     sources (on up to GOMAXPROCS goroutines), the tmpfs mounts and the
//     cgroup are opened concurrently; nothing here changes anything.
//  3. cgroup: the device rules are added (v1 devices.allow, or a rebuilt
//     v2 device program that keeps the existing rules).
//  4. enter: on a new OS thread, locked and never unlocked so the Go
//     runtime discards it, Apply unshares the filesystem context, joins
//     the container's mount namespace and opens the rootfs. No other
//     goroutine ever runs in that namespace. In CUDA compat mount mode,
//     the image's compat libraries (Mount.ImagePath) are opened here,
//     through the rootfs with in-root resolution, checked to be regular
//     files and cloned (open_tree on the descriptor): never by a host
//     path an image symlink could redirect. The thread is started, and
//     joins the namespace, while step 2 runs; it waits there, changing
//     nothing, until step 3 is done (and leaves if Apply fails before).
//  5. tmpfs: each tmpfs is mounted, then the mounts inside it (the selected
//     GPUs' /proc/driver/nvidia/gpus/<bus id>) are attached through its own
//     descriptor.
//  6. mount: each target is resolved inside the rootfs (openat2
//     RESOLVE_IN_ROOT, or filepath-securejoin's pathrs-lite before Linux
//     5.6); missing parents and an empty placeholder of the source's type
//     are created with *at calls relative to verified directory
//     descriptors, owned by Owner; then the source is moved onto the
//     placeholder's descriptor (move_mount). A target directory is
//     resolved once and its descriptor reused for the later targets in it
//     (all the libraries go into one or two directories), until a
//     directory or tmpfs is mounted, which may hide it. A symlink, FIFO,
//     socket or directory where a file should be is an error
//     (ErrWrongType), never followed. An existing device node with the
//     right number is mounted over as is.
//  7. symlink: each link is created with symlinkat; an existing link with
//     the same target is kept. A SONAME link (Symlink.Replace) replaces a
//     symlink the image has there (a stale libcuda.so.1 from a committed
//     GPU container), atomically and never following it, as ldconfig
//     would re-point it; a file or directory there is an error. An extra
//     link (libcuda.so, libGLX_indirect.so.0, …) keeps whatever the image
//     has there (Mesa's libGLX_indirect.so.0), as libnvidia-container
//     does; the plan cannot know, so this is not reported.
//  8. ldcache: the rootfs's ld.so.cache is rebuilt in Go (package ldcache)
//     with the plan's FirstDirs, then Dirs, before the rootfs's own
//     configuration, and swapped in by rename in /etc, owned by Owner; a
//     symlink at the cache path is replaced, never followed. The scanned
//     directories are only read: no SONAME link is made in them (the plan's
//     symlinks are; an image's CUDA compat dir ships its own, as NVIDIA's
//     cuda-compat packages do). On a musl rootfs the path file
//     /etc/ld-musl-<arch>.path is updated instead (atomically, and last,
//     so never taken back). Nothing from the container is executed.
//  9. commit: a last look at ctx; from here the changes are kept.
//
// Apply creates nothing in the runtime's volumes (host directories
// mounted into the rootfs) and mounts nothing on a mount with shared
// propagation: see ErrVolume and ErrSharedMount for the rules.
//
// While it runs, Apply holds about one file descriptor per mount (its
// detached mount, which becomes the attached one, kept to take it back;
// with LegacyMounts also the source file until it is attached) and one per
// directory it creates or fills; many concurrent calls on large plans need
// RLIMIT_NOFILE to match.
//
// Apply needs root: CAP_SYS_ADMIN and CAP_SYS_CHROOT to join the namespace
// and mount, CAP_DAC_OVERRIDE and CAP_CHOWN to create files for another
// owner, and, for cgroup v2 rules, bpf(2). It needs Linux 5.12 for the new
// mount API; before that it binds by path inside the namespace and
// remounts (the LegacyMounts method), which works only before pivot_root.
// Targets are resolved with openat2 (Linux 5.6) or pathrs-lite. The library
// does not log; Apply returns nil or an *ApplyError.
func (p *Plan) Apply(ctx context.Context, ctr Container, opts *ApplyOptions) error {
	if err := checkPlan(p, ctr); err != nil {
		return err
	}
	a := newApplier(ctx, p, ctr, opts)
	defer a.close()
	return a.run()
}

// run does steps 2 to 9; host-side changes are taken back unless all of
// them succeed (also when something panics). The confined thread is
// started, and joins the container's namespace, while the host side
// opens; it changes nothing before its turn.
func (a *applier) run() (err error) {
	kept := false
	defer func() {
		if !kept {
			err = withUndo(err, a.host.Undo())
		}
	}()
	a.spare = reserveFds()
	defer a.spare.release() // before the host undo, which needs some
	if err := a.openNamespace(); err != nil {
		return err
	}
	if err := a.findOwner(); err != nil {
		return err
	}
	if err := a.openProc(); err != nil {
		return err
	}
	th := startConfined(a.ns, a.vol.readMounts, a.inNamespace)
	defer th.stop()
	if err := a.open(); err != nil {
		return err
	}
	if err := a.allowDevices(); err != nil {
		return err
	}
	if err := th.run(); err != nil {
		return stepError(StepEnter, a.ctr.Rootfs, err)
	}
	kept = true
	a.host.Discard()
	return nil
}

// applier is one Apply call's state.
type applier struct {
	ctx    context.Context
	plan   *Plan
	ctr    Container
	opts   ApplyOptions
	method mount.Method
	owner  *rootfs.Owner

	proc    *process // nil in ModeRootfsOnly
	ns      *ns.Namespace
	cg      *cgroup.Cgroup
	tmpfs   []*tmpfsMount   // one per plan.Tmpfs
	sources []*mount.Source // one per plan.Mounts
	under   []underTmpfs    // one per plan.Mounts
	vol     *volumeGuard    // keeps Apply out of volumes (apply_volumes_linux.go)

	spare *fdReserve // descriptors kept for undo (EMFILE)
	host  undo.Stack // changes made from the host (cgroup rules)
	inner undo.Stack // changes made inside the namespace
}

func newApplier(ctx context.Context, p *Plan, ctr Container, opts *ApplyOptions) *applier {
	a := &applier{ctx: ctx, plan: p, ctr: ctr, method: mount.Auto}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.ProcRoot == "" {
		a.opts.ProcRoot = "/proc"
	}
	if a.opts.LegacyMounts {
		a.method = mount.Legacy
	}
	return a
}

// at is a point where Apply may stop: a done context, or a fault a test
// injects.
func (a *applier) at(step Step, path string) error {
	if a.opts.fault != nil {
		if err := a.opts.fault(step, path); err != nil {
			return &ApplyError{Step: step, Path: path, Err: err}
		}
	}
	if err := a.ctx.Err(); err != nil {
		return &ApplyError{Step: step, Path: path, Err: err}
	}
	return nil
}

// inNamespace runs on the confined thread: every change inside the
// container, taken back there unless all of them succeed.
func (a *applier) inNamespace() (err error) {
	kept := false
	defer func() {
		if !kept {
			err = withUndo(err, a.undoInner())
		}
	}()
	if err := a.at(StepEnter, a.ctr.Rootfs); err != nil {
		return err
	}
	root, err := a.openRoot()
	if err != nil {
		return err
	}
	defer root.Close()
	if err := a.lockRootfs(root); err != nil {
		return err
	}
	if err := a.openCompat(root); err != nil {
		return err
	}
	if err := a.changeRootfs(root); err != nil {
		return err
	}
	if err := a.at(StepCommit, ""); err != nil {
		return err
	}
	kept = true
	a.inner.Discard()
	return nil
}

func (a *applier) changeRootfs(root *rootfs.Root) error {
	if err := a.mountTmpfs(root); err != nil {
		return err
	}
	if err := a.mountAll(root); err != nil {
		return err
	}
	if err := a.symlinks(root); err != nil {
		return err
	}
	return a.updateLDCache(root)
}

// withUndo attaches the error of an undo to err (nil when err is nil, as
// after a panic).
func withUndo(err, uerr error) error {
	if err == nil || uerr == nil {
		return err
	}
	var ae *ApplyError
	if errors.As(err, &ae) {
		ae.UndoErr = errors.Join(ae.UndoErr, uerr)
		return ae
	}
	return &ApplyError{Step: StepEnter, Err: err, UndoErr: uerr}
}

func (a *applier) symlinks(root *rootfs.Root) error {
	for _, s := range a.plan.Symlinks {
		if err := a.at(StepSymlink, s.Path); err != nil {
			return err
		}
		if err := symlink(root, s); err != nil {
			return stepError(StepSymlink, s.Path, fmt.Errorf("to %q: %w", s.Target, err))
		}
	}
	return nil
}

// symlink makes one link of the plan with the rule the CDI hook's
// create-symlinks shares (package liblink): a SONAME link replaces a
// symlink the image has there and refuses anything else; an extra link
// is not made where the image has anything already.
func symlink(root *rootfs.Root, s Symlink) error {
	_, err := liblink.Place(root, s.Target, s.Path, s.Replace)
	return err
}

func (a *applier) close() {
	a.vol.close()
	for _, t := range a.tmpfs {
		t.close()
	}
	for _, s := range a.sources {
		if s != nil {
			s.Close()
		}
	}
	if a.cg != nil {
		a.cg.Close()
	}
	if a.ns != nil {
		a.ns.Close()
	}
	a.proc.close()
}

// stepError wraps err for step and path, classifying type errors.
func stepError(step Step, path string, err error) *ApplyError {
	var ae *ApplyError
	if errors.As(err, &ae) {
		return ae
	}
	e := &ApplyError{Step: step, Path: path, Err: err}
	if errors.Is(err, rootfs.ErrWrongType) || errors.Is(err, mount.ErrTargetType) || errors.Is(err, ErrWrongType) {
		e.kind = ErrWrongType
	}
	return e
}
