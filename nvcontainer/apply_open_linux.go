package nvcontainer

import (
	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// open is step 2: everything Apply acts through, opened in the caller's
// namespace before entering the container's.
func (a *applier) open() error {
	if err := a.findOwner(); err != nil {
		return err
	}
	if err := a.openNamespace(); err != nil {
		return err
	}
	if err := a.openTmpfsMounts(); err != nil {
		return err
	}
	if err := a.openSources(); err != nil {
		return err
	}
	if err := a.buildTmpfs(); err != nil {
		return err
	}
	return a.openCgroup()
}

// findOwner settles who owns what Apply creates: ApplyOptions.Owner,
// else the owner of /proc/PID, else (no process) the caller.
func (a *applier) findOwner() error {
	switch {
	case a.opts.Owner != nil:
		a.owner = &rootfs.Owner{UID: a.opts.Owner.UID, GID: a.opts.Owner.GID}
	case a.ctr.PID != 0:
		o, err := rootfs.ProcessOwner(a.opts.ProcRoot, a.ctr.PID)
		if err != nil {
			return stepError(StepOpen, "", err)
		}
		a.owner = &o
	}
	return nil
}

func (a *applier) openNamespace() error {
	if a.ctr.PID == 0 {
		a.ns = ns.Current()
		return nil
	}
	n, err := ns.OpenPID(a.opts.ProcRoot, a.ctr.PID)
	if err != nil {
		return stepError(StepOpen, "", err)
	}
	a.ns = n
	return nil
}
