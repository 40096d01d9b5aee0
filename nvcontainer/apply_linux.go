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
// Everything Apply creates is created as the owner (ApplyOptions.Owner),
// and a caller in a user namespace (a rootless runtime's hook) leaves
// the device cgroup rules to the runtime (Plan.DeviceRulesLeftToRuntime
// tells so beforehand): see the package doc, "User namespaces and
// rootless runtimes".
//
// Apply needs root (see the package doc, "What it needs") and Linux 5.12
// for the new mount API, with a fallback before that; the package doc's
// "How Apply works" walks through its steps. The library does not log;
// Apply returns nil or an *ApplyError.
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
	th := startConfined(a.ns, a.owner, a.vol.readMounts, a.inNamespace)
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
	thread  *mount.Thread   // the confined thread, checked once (inNamespace)

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
	th, err := mount.ConfinedThread() // once, for every mount
	if err != nil {
		return stepError(StepEnter, a.ctr.Rootfs, err)
	}
	a.thread = th
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
	before := a.snapshotLDCache()
	if err := a.mountTmpfs(root); err != nil {
		return err
	}
	if err := a.mountAll(root); err != nil {
		return err
	}
	if err := a.symlinks(root); err != nil {
		return err
	}
	return a.updateLDCache(root, before)
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
