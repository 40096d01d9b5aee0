package nvcontainer

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// attrOf turns a plan's mount options into mount attributes (checkPlan
// has refused unknown ones).
func attrOf(options []string) mount.Attr {
	var a mount.Attr
	for _, o := range options {
		switch o {
		case "ro":
			a |= mount.ReadOnly
		case "nosuid":
			a |= mount.NoSuid
		case "nodev":
			a |= mount.NoDev
		case "noexec":
			a |= mount.NoExec
		}
	}
	return a
}

// openSource opens m's host source in the caller's namespace and checks
// that it is what the plan says.
func (a *applier) openSource(m Mount) (*mount.Source, error) {
	src, err := mount.OpenSource(m.Source, attrOf(m.Options), &mount.Options{Method: a.method})
	if err == nil {
		err = checkSource(m, src)
		if err != nil {
			src.Close()
		}
	}
	if err != nil {
		return nil, stepError(StepOpen, m.Source, err)
	}
	return src, nil
}

// checkSource refuses a source whose type the plan does not expect.
func checkSource(m Mount, src *mount.Source) error {
	mode := src.Mode()
	switch {
	case m.Device != nil:
		return checkDevice(m, src)
	case m.Dir != mode.IsDir():
		return fmt.Errorf("source is %s, the plan says dir=%v: %w", typeName(mode), m.Dir, ErrWrongType)
	case fileKinds[m.Kind] && !mode.IsRegular():
		return fmt.Errorf("%s source is %s, want a regular file: %w", m.Kind, typeName(mode), ErrWrongType)
	}
	return nil
}

// fileKinds are the mount kinds whose sources must be regular files.
var fileKinds = map[MountKind]bool{
	MountLibrary: true, MountLibrary32: true, MountBinary: true,
	MountFirmware: true, MountConfig: true, MountCompat: true,
}

func typeName(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return fmt.Sprintf("of type %v", m.Type())
}

// mountAll attaches the bind mounts in plan order.
func (a *applier) mountAll(root *rootfs.Root) error {
	for i, m := range a.plan.Mounts {
		if err := a.at(StepMount, m.Target); err != nil {
			return err
		}
		var err error
		if u := a.under[i]; u.t != nil {
			err = a.attachInTmpfs(u.t, u.rel, a.sources[i])
		} else {
			err = a.attach(root, m, a.sources[i])
		}
		if err != nil {
			return stepError(StepMount, m.Target, err)
		}
		closeSource(&a.sources[i])
	}
	return nil
}

// closeSource releases an attached source at once (its mount lives on in
// the container), so that a large plan does not hold two descriptors per
// mount until the end.
func closeSource(slot **mount.Source) {
	(*slot).Close()
	*slot = nil
}

// attach creates m's target in the rootfs and mounts src on it, through
// the descriptor the target was created or found with. A directory mount
// hides what was below it: the rootfs's kept directories are dropped, so
// that later targets are resolved through it.
func (a *applier) attach(root *rootfs.Root, m Mount, src *mount.Source) error {
	e, err := a.placeholder(root, m, src)
	if err != nil {
		if coveredAt(root, m.Target, src) { // a socket an earlier Apply mounted
			return nil
		}
		return err
	}
	defer e.Close()
	if covered(e, src) { // mounted by an earlier, interrupted Apply
		return nil
	}
	if err := a.vol.mayMountOn(e, m.Target); err != nil {
		return err
	}
	mnt, err := a.thread.AttachEntry(src, e)
	if err != nil {
		return err
	}
	a.recordMount(mnt)
	if src.IsDir() {
		root.ForgetDirs()
	}
	return nil
}

// placeholder finds or creates the entry to mount src on: a directory for
// a directory, an existing node of the right number for a device, an empty
// regular file otherwise.
func (a *applier) placeholder(root *rootfs.Root, m Mount, src *mount.Source) (*rootfs.Entry, error) {
	perm := src.Mode().Perm()
	switch {
	case src.IsDir():
		return root.MkdirAll(m.Target, perm)
	case m.Device != nil:
		return deviceTarget(root, m.Target, src.Rdev(), perm)
	}
	return root.CreateFile(m.Target, perm)
}

// recordMount registers how to detach mnt; the undo runs on the confined
// thread (inNamespace), where Detach works.
func (a *applier) recordMount(mnt *mount.Mount) { mnt.AddUndo(&a.inner, nil) }

// relPath splits rel (a path below a mount's root) into the directory to
// open and the name in it.
func relPath(rel string) (dir, name string) {
	dir, name = path.Split(rel)
	return strings.TrimSuffix(dir, "/"), name
}
