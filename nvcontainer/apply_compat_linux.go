package nvcontainer

import (
	"path"

	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// openCompat opens the image's CUDA compat libraries (mount mode) on the
// confined thread, through the rootfs: resolved inside it (openat2
// RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS, or pathrs-lite), in the
// container's mount namespace, where the plan saw them through
// /proc/PID/root. They are never opened by a host path: the image could
// swap a directory on that path for a symlink out of the rootfs between
// NewPlan and Apply (CVE-2024-0132, CVE-2025-23359).
func (a *applier) openCompat(root *rootfs.Root) error {
	for i, m := range a.plan.Mounts {
		if m.Kind != MountCompat {
			continue
		}
		p, _ := a.plan.imagePath(m) // checkPlan has refused a missing one
		if err := a.at(StepEnter, p); err != nil {
			return err
		}
		src, err := a.openImageSource(root, m, p)
		if err != nil {
			return stepError(StepEnter, p, err)
		}
		a.sources[i] = src
	}
	return nil
}

// openImageSource opens the regular file at p in the rootfs and clones
// it (open_tree on its descriptor) or, with LegacyMounts, keeps it to bind.
func (a *applier) openImageSource(root *rootfs.Root, m Mount, p string) (*mount.Source, error) {
	f, err := root.OpenRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := mount.OpenSourceFd(int(f.Fd()), path.Join(a.ctr.Rootfs, p), attrOf(m.Options), &mount.Options{Method: a.method})
	if err != nil {
		return nil, err
	}
	if err := checkSource(m, src); err != nil {
		src.Close()
		return nil, err
	}
	return src, nil
}
