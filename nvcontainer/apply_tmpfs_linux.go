package nvcontainer

import (
	"io/fs"
	"os"
	"path"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/mount"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// tmpfsMount is one of the plan's tmpfs mounts on its way in.
type tmpfsMount struct {
	t      Tmpfs
	prefix string              // t.Target cleaned, with a slash: "/dev/"
	src    *mount.Source       // the tmpfs, built and filled
	inner  []*mount.Source     // one per t.Mounts
	mnt    *mount.Mount        // once attached
	dirs   map[string]*os.File // opened below mnt, by path
}

// underTmpfs places a bind mount inside a tmpfs: rel is its target below
// the tmpfs's root. t is nil for a mount elsewhere.
type underTmpfs struct {
	t   *tmpfsMount
	rel string
}

// findTmpfs is where target lies: in the first tmpfs it is inside (as
// inside and relBelow tell, with the tmpfs's cleaned prefix made once),
// or in none.
func (a *applier) findTmpfs(target string) underTmpfs {
	p := path.Clean("/" + target)
	for _, t := range a.tmpfs {
		if strings.HasPrefix(p, t.prefix) {
			return underTmpfs{t: t, rel: p[len(t.prefix):]}
		}
	}
	return underTmpfs{}
}

func relBelow(dir, p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), path.Clean("/"+dir)+"/")
}

// buildTmpfs creates each tmpfs, detached, holding its files and a
// placeholder for every mount that goes inside it.
//
// It runs while the sources are being opened, so a placeholder's type is
// the plan's (a directory for Dir, a file otherwise); the source is
// checked against the same field, and Attach against the placeholder.
func (a *applier) buildTmpfs() error {
	for _, tm := range a.tmpfs {
		fill := &tmpfsFill{tm: tm, made: map[string]bool{}, owner: a.owner}
		for _, m := range tm.t.Mounts {
			fill.add(relBelow(tm.t.Target, m.Target), m)
		}
		for i, u := range a.under {
			if u.t == tm {
				fill.add(u.rel, a.plan.Mounts[i])
			}
		}
		opts := &mount.TmpfsOptions{Mode: fs.FileMode(tm.t.Mode), Attr: attrOf(tm.t.Options), Method: a.method}
		src, err := mount.NewTmpfs(opts, fill.populate)
		if err != nil {
			return stepError(StepOpen, tm.t.Target, err)
		}
		tm.src = src
	}
	return nil
}

// tmpfsFill populates a tmpfs through its root descriptor. The tmpfs is
// made on the host side, by the caller: each entry, its root included,
// is then given to owner (nil: left to the caller), so that in a user
// namespace the container's root owns them, not the host's.
type tmpfsFill struct {
	tm    *tmpfsMount
	holes []placeholder
	made  map[string]bool // directories created
	owner *rootfs.Owner
	born  bool // entries are created with owner's ids: no chown (bornOwned)
}

type placeholder struct {
	rel string
	dir bool
}

func (f *tmpfsFill) add(rel string, m Mount) {
	f.holes = append(f.holes, placeholder{rel: rel, dir: m.Dir && m.Device == nil})
}

func (f *tmpfsFill) populate(root *os.File) error {
	if err := f.chown(root, ""); err != nil {
		return err
	}
	// Every entry below the root is created on this thread, with its
	// filesystem ids: where they are the owner's, chown has nothing to do.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f.born = bornOwned(f.owner)
	for _, file := range f.tm.t.Files {
		name := path.Clean(file.Name)
		mode := fs.FileMode(file.Mode).Perm()
		if mode == 0 {
			mode = 0o444
		}
		if err := f.parents(root, name); err != nil {
			return err
		}
		if err := mount.WriteFileAt(root, name, []byte(file.Content), mode); err != nil {
			return err
		}
		if err := f.chown(root, name); err != nil {
			return err
		}
	}
	return f.placeholders(root)
}

func (f *tmpfsFill) placeholders(root *os.File) error {
	for _, h := range f.holes {
		if err := f.parents(root, h.rel); err != nil {
			return err
		}
		var err error
		if h.dir {
			err = f.mkdir(root, h.rel)
		} else {
			err = mount.WriteFileAt(root, h.rel, nil, 0o444)
		}
		if err == nil {
			err = f.chown(root, h.rel)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parents creates the missing directories above rel.
func (f *tmpfsFill) parents(root *os.File, rel string) error {
	dir, _ := relPath(rel)
	if dir == "" || f.made[dir] {
		return nil
	}
	if err := f.parents(root, dir); err != nil {
		return err
	}
	return f.mkdir(root, dir)
}

func (f *tmpfsFill) mkdir(root *os.File, rel string) error {
	if f.made[rel] {
		return nil
	}
	f.made[rel] = true
	if err := mount.MkdirAt(root, rel, 0o555); err != nil {
		return err
	}
	return f.chown(root, rel)
}

// chown gives rel (the tmpfs's root when "") to the owner, never
// following a link; the tmpfs is still ours alone.
func (f *tmpfsFill) chown(root *os.File, rel string) error {
	if f.owner == nil || f.born {
		return nil
	}
	if err := unix.Fchownat(int(root.Fd()), rel, f.owner.UID, f.owner.GID, unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
		return &os.PathError{Op: "fchownat", Path: "/" + rel, Err: err}
	}
	return nil
}

// bornOwned reports whether what the calling thread creates in the tmpfs
// is born owned by o: its filesystem uid and gid (setfsuid(-1) and
// setfsgid(-1) read them) are o's. The gid holds below a set-group-ID
// directory too, whose group populate has made o's. Nil o: false. The
// caller keeps its goroutine on the thread.
func bornOwned(o *rootfs.Owner) bool {
	if o == nil {
		return false
	}
	uid, uerr := unix.SetfsuidRetUid(-1)
	gid, gerr := unix.SetfsgidRetGid(-1)
	return uerr == nil && gerr == nil && uid == o.UID && gid == o.GID
}

// mountTmpfs attaches each tmpfs, then the mounts that go inside it.
func (a *applier) mountTmpfs(root *rootfs.Root) error {
	for _, tm := range a.tmpfs {
		if err := a.attachTmpfs(root, tm); err != nil {
			return err
		}
		for i, m := range tm.t.Mounts {
			if err := a.at(StepTmpfs, m.Target); err != nil {
				return err
			}
			if err := a.attachInTmpfs(tm, relBelow(tm.t.Target, m.Target), tm.inner[i]); err != nil {
				return stepError(StepTmpfs, m.Target, err)
			}
			closeSource(&tm.inner[i])
		}
	}
	return nil
}

func (a *applier) attachTmpfs(root *rootfs.Root, tm *tmpfsMount) error {
	target := tm.t.Target
	if err := a.at(StepTmpfs, target); err != nil {
		return err
	}
	e, err := root.MkdirAll(target, 0o555)
	if err == nil {
		e, err = a.dropLeftTmpfs(root, e, tm)
	}
	if err != nil {
		return stepError(StepTmpfs, target, err)
	}
	defer e.Close()
	if err := a.vol.mayMountOn(e, target); err != nil {
		return stepError(StepTmpfs, target, err)
	}
	mnt, err := a.thread.AttachEntry(tm.src, e)
	if err != nil {
		return stepError(StepTmpfs, target, err)
	}
	a.recordMount(mnt)
	root.ForgetDirs()
	tm.mnt = mnt
	closeSource(&tm.src)
	return nil
}

// attachInTmpfs mounts src on its placeholder rel in the attached tmpfs,
// reached through the tmpfs's own descriptor (not through the rootfs).
func (a *applier) attachInTmpfs(tm *tmpfsMount, rel string, src *mount.Source) error {
	dirName, name := relPath(rel)
	dir, err := tm.openDir(dirName)
	if err != nil {
		return err
	}
	mnt, err := a.thread.Attach(src, dir, name)
	if err != nil {
		return err
	}
	a.recordMount(mnt)
	return nil
}

// openDir opens the directory rel below the attached tmpfs once, for
// all the mounts that go into it (the tmpfs is ours, filled while
// detached: nothing there moves).
func (tm *tmpfsMount) openDir(rel string) (*os.File, error) {
	if d := tm.dirs[rel]; d != nil {
		return d, nil
	}
	d, err := tm.mnt.OpenDir(rel)
	if err != nil {
		return nil, err
	}
	if tm.dirs == nil {
		tm.dirs = map[string]*os.File{}
	}
	tm.dirs[rel] = d
	return d, nil
}

func (tm *tmpfsMount) close() {
	for _, d := range tm.dirs {
		d.Close()
	}
	if tm.src != nil {
		tm.src.Close()
	}
	for _, s := range tm.inner {
		if s != nil {
			s.Close()
		}
	}
}
