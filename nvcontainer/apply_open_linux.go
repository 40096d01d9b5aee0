package nvcontainer

import (
	"path"
	"runtime"
	"strings"
	"sync"

	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// open is the rest of step 2 (the owner and the namespace come first,
// see run): every source, the tmpfs mounts and the cgroup, opened in the
// caller's namespace before entering the container's. The points come
// first, in order; then the three are opened concurrently, as none of
// them changes anything, and the first error in that order is returned.
func (a *applier) open() error {
	a.prepare()
	if err := a.openPoints(); err != nil {
		return err
	}
	var tmpfsErr, cgErr error
	var wg sync.WaitGroup
	wg.Go(func() { tmpfsErr = a.buildTmpfs() })
	wg.Go(func() { cgErr = a.openCgroup() })
	srcErr := a.openAll()
	wg.Wait()
	for _, err := range []error{srcErr, tmpfsErr, cgErr} {
		if err != nil {
			return err
		}
	}
	return nil
}

// prepare lays out what open fills: a tmpfsMount per tmpfs, a source slot
// per mount, and where each bind mount lies (in a tmpfs or not).
func (a *applier) prepare() {
	for _, t := range a.plan.Tmpfs {
		prefix := strings.TrimSuffix(path.Clean("/"+t.Target), "/") + "/"
		a.tmpfs = append(a.tmpfs, &tmpfsMount{t: t, prefix: prefix, inner: make([]*mount.Source, len(t.Mounts))})
	}
	a.sources = make([]*mount.Source, len(a.plan.Mounts))
	a.under = make([]underTmpfs, len(a.plan.Mounts))
	for i, m := range a.plan.Mounts {
		a.under[i] = a.findTmpfs(m.Target)
	}
}

// openPoints passes open's points in their order: the sources of the
// mounts inside each tmpfs, those of the bind mounts, each tmpfs, the
// cgroup.
func (a *applier) openPoints() error {
	for _, t := range a.plan.Tmpfs {
		for _, m := range t.Mounts {
			if err := a.at(StepOpen, m.Source); err != nil {
				return err
			}
		}
	}
	for _, m := range a.plan.Mounts {
		if m.Kind == MountCompat {
			continue // opened inside the namespace: openCompat
		}
		if err := a.at(StepOpen, m.Source); err != nil {
			return err
		}
	}
	for _, t := range a.plan.Tmpfs {
		if err := a.at(StepOpen, t.Target); err != nil {
			return err
		}
	}
	if len(a.plan.CgroupRules) > 0 {
		return a.at(StepOpen, "cgroup")
	}
	return nil
}

// sourceJob is one source to open into its slot; m points into the
// plan (a Mount copied per job cost more than opening some sources).
type sourceJob struct {
	m    *Mount
	slot **mount.Source
}

// openAll opens every host source (those inside the tmpfs mounts, then
// the bind mounts' but the image's compat libraries) on up to GOMAXPROCS
// goroutines: cloning a mount tree
// costs more than the rest of opening. The error is that of the first
// source, in that order, that failed.
func (a *applier) openAll() error {
	jobs := make([]sourceJob, 0, len(a.plan.Mounts))
	for _, tm := range a.tmpfs {
		for i := range tm.t.Mounts {
			jobs = append(jobs, sourceJob{&tm.t.Mounts[i], &tm.inner[i]})
		}
	}
	for i := range a.plan.Mounts {
		if a.plan.Mounts[i].Kind != MountCompat {
			jobs = append(jobs, sourceJob{&a.plan.Mounts[i], &a.sources[i]})
		}
	}
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				*jobs[i].slot, errs[i] = a.openSource(*jobs[i].m)
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// findOwner settles who owns what Apply creates: ApplyOptions.Owner,
// else the owner of the pinned process's /proc/PID, else (ModeRootfsOnly)
// the caller.
func (a *applier) findOwner() error {
	switch {
	case a.opts.Owner != nil:
		a.owner = &rootfs.Owner{UID: a.opts.Owner.UID, GID: a.opts.Owner.GID}
	case a.proc != nil:
		o, err := a.proc.owner()
		if err != nil {
			return err
		}
		a.owner = &o
	}
	return nil
}

// openNamespace pins the container's process and its mount namespace
// (see pinProcess); in ModeRootfsOnly the namespace is the caller's.
func (a *applier) openNamespace() error {
	if a.ctr.Mode == ModeRootfsOnly {
		a.ns = ns.Current()
		return nil
	}
	p, n, err := pinProcess(a.opts.ProcRoot, a.ctr)
	if err != nil {
		return err
	}
	a.proc, a.ns = p, n
	return nil
}
