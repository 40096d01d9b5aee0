package mount

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

const libTarget = "usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15"

func TestBindFile(t *testing.T) {
	if !container.InPrivateMountNS(t) {
		return // the child compares mount tables in a namespace of its own
	}
	host := hostTree(t)
	for _, method := range methods {
		for _, pivot := range []bool{false, true} {
			if method == Legacy && pivot {
				continue // Legacy needs host paths: TestLegacyRefusesOtherFile
			}
			for _, a := range attachers {
				t.Run(method.String()+map[bool]string{true: "/pivoted"}[pivot]+"/"+a.name, func(t *testing.T) {
					testBindFile(t, host, method, pivot, a.fn)
				})
			}
		}
	}
}

func testBindFile(t *testing.T, host string, method Method, pivot bool, via func(*Source, *rootfs.Entry) (*Mount, error)) {
	before := hostMounts(t)
	c := startCtr(t, &container.Options{PivotRoot: pivot, Spec: "dir usr/lib"})
	c.via = via
	src := openSource(t, host+"/"+libTarget, ReadOnly|NoSuid|NoDev, method)
	m, err := c.attach(t, src, libTarget)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	wantOptions(t, c.options(t, libTarget), "ro", "nosuid", "nodev")
	if info := c.MountAt(t, libTarget); info == nil || uint64(info.ID) != m.ID() {
		t.Errorf("Mount.ID() = %d, mountinfo has %+v", m.ID(), info)
	}
	if data, err := os.ReadFile(c.Path(libTarget)); string(data) != "host libcuda" {
		t.Errorf("container reads %q, %v", data, err)
	}
	if _, err := os.OpenFile(c.Path(libTarget), os.O_WRONLY, 0); !errors.Is(err, syscall.EROFS) {
		t.Errorf("writing the bound file: %v, want EROFS", err)
	}
	if after := hostMounts(t); after != before {
		t.Errorf("host mount table changed:\n%s\n---\n%s", before, after)
	}
	if err := c.detach(t, m); err != nil {
		t.Fatal(err)
	}
	if c.MountAt(t, libTarget) != nil {
		t.Error("still mounted after Detach")
	}
	if err := c.undo.Undo(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(c.Path("usr/lib/x86_64-linux-gnu")); !os.IsNotExist(err) {
		t.Errorf("undo left the placeholder's directory: %v", err)
	}
}

func TestBindDirAndDevice(t *testing.T) {
	host := hostTree(t)
	for _, method := range methods {
		for _, a := range attachers {
			t.Run(method.String()+"/"+a.name, func(t *testing.T) {
				testBindDirAndDevice(t, host, method, a.fn)
			})
		}
	}
}

func testBindDirAndDevice(t *testing.T, host string, method Method, via func(*Source, *rootfs.Entry) (*Mount, error)) {
	c := startCtr(t, nil)
	c.via = via
	gpu := "proc/driver/nvidia/gpus/0000:01:00.0"
	dirSrc := openSource(t, host+"/"+gpu, ReadOnly|NoSuid|NoDev|NoExec, method)
	if _, err := c.attach(t, dirSrc, gpu); err != nil {
		t.Fatal(err)
	}
	wantOptions(t, c.options(t, gpu), "ro", "nosuid", "nodev", "noexec")
	if data, _ := os.ReadFile(c.Path(gpu + "/information")); string(data) != "Model: Test GPU\n" {
		t.Errorf("bound dir holds %q", data)
	}
	devSrc := openSource(t, "/dev/null", ReadOnly|NoSuid|NoExec, method)
	if _, err := c.attach(t, devSrc, "dev/nvidiactl"); err != nil {
		t.Fatal(err)
	}
	wantOptions(t, c.options(t, "dev/nvidiactl"), "ro", "nosuid", "noexec")
	var st syscall.Stat_t
	if err := syscall.Stat(c.Path("dev/nvidiactl"), &st); err != nil || st.Rdev != 0x103 {
		t.Errorf("dev/nvidiactl is %#x (%v), want /dev/null's 1:3", st.Rdev, err)
	}
}

func TestLegacyRefusesOtherFile(t *testing.T) {
	host := hostTree(t)
	// In a pivoted container the host path means nothing, or whatever the
	// image put there.
	for _, spec := range []string{"dir usr/lib", "file " + host + "/" + libTarget + " \"image file\""} {
		c := startCtr(t, &container.Options{PivotRoot: true, Spec: spec})
		src := openSource(t, host+"/"+libTarget, ReadOnly, Legacy)
		_, err := c.attach(t, src, libTarget)
		if !errors.Is(err, ErrSourceMismatch) {
			t.Errorf("spec %q: Attach = %v, want ErrSourceMismatch", spec, err)
		}
		if c.MountAt(t, libTarget) != nil {
			t.Errorf("spec %q: something got mounted", spec)
		}
	}
}

func TestAttachAndDetachNeedConfinedThread(t *testing.T) {
	host := hostTree(t)
	for _, method := range methods {
		src := openSource(t, host+"/"+libTarget, ReadOnly, method)
		dir, err := os.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer dir.Close()
		if _, err := src.Attach(dir, "x"); !errors.Is(err, ErrNotConfined) {
			t.Errorf("%v: Attach outside Run = %v, want ErrNotConfined", method, err)
		}
		m := &Mount{fd: int(dir.Fd()), file: dir}
		if err := m.Detach(); !errors.Is(err, ErrNotConfined) {
			t.Errorf("Detach outside Run = %v, want ErrNotConfined", err)
		}
	}
}

func TestDetachWhenAlreadyGone(t *testing.T) {
	host := hostTree(t)
	for _, method := range methods {
		c := startCtr(t, nil)
		m, err := c.attach(t, openSource(t, host+"/"+libTarget, ReadOnly, method), libTarget)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := c.Exec(t, "umount", "-l", c.Rootfs+"/"+libTarget); err != nil {
			t.Fatalf("umount in container: %v: %s", err, out)
		}
		if err := c.detach(t, m); !errors.Is(err, ErrNotMounted) {
			t.Errorf("%v: Detach of an unmounted mount = %v, want ErrNotMounted", method, err)
		}
	}
}

func TestTargetMustFit(t *testing.T) {
	host := hostTree(t)
	c := startCtr(t, &container.Options{Spec: "dir adir\nfile afile\nsymlink alink afile\nfifo afifo"})
	file := openSource(t, host+"/"+libTarget, ReadOnly, NewAPI)
	dir := openSource(t, host+"/proc/driver/nvidia", ReadOnly, NewAPI)
	for _, tc := range []struct {
		src  *Source
		name string
	}{{file, "adir"}, {file, "alink"}, {file, "afifo"}, {dir, "afile"}, {dir, "alink"}} {
		err := c.run(t, func(r *rootfs.Root) error {
			_, err := tc.src.Attach(r.File(), tc.name)
			return err
		})
		if !errors.Is(err, ErrTargetType) {
			t.Errorf("attaching %s onto %s: %v, want ErrTargetType", tc.src.Path(), tc.name, err)
		}
		err = c.run(t, func(r *rootfs.Root) error {
			e, err := r.Lookup(tc.name)
			if err != nil {
				return err
			}
			defer e.Close()
			_, err = tc.src.AttachEntry(e)
			return err
		})
		if !errors.Is(err, ErrTargetType) {
			t.Errorf("attaching %s onto the entry %s: %v, want ErrTargetType", tc.src.Path(), tc.name, err)
		}
	}
	if err := os.Symlink(host+"/"+libTarget, host+"/link"); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSource(host+"/link", 0, nil); !errors.Is(err, ErrTargetType) {
		t.Errorf("OpenSource(symlink) = %v, want ErrTargetType", err)
	}
}

func TestAttachTwice(t *testing.T) {
	host := hostTree(t)
	c := startCtr(t, nil)
	src := openSource(t, host+"/"+libTarget, ReadOnly, NewAPI)
	if _, err := c.attach(t, src, libTarget); err != nil {
		t.Fatal(err)
	}
	if _, err := c.attach(t, src, "usr/lib/other"); !errors.Is(err, ErrAttached) {
		t.Errorf("second Attach = %v, want ErrAttached", err)
	}
	c.via = (*Source).AttachEntry
	if _, err := c.attach(t, src, "usr/lib/other"); !errors.Is(err, ErrAttached) {
		t.Errorf("second AttachEntry = %v, want ErrAttached", err)
	}
}

// TestUndoStack is Apply's rollback: placeholders and mounts recorded on
// one stack, undone in reverse from the host after the namespace work.
func TestUndoStack(t *testing.T) {
	host := hostTree(t)
	for _, method := range methods {
		c := startCtr(t, &container.Options{Spec: "dir usr/lib"})
		before := c.MountInfo(t)
		for _, p := range []string{libTarget, "usr/lib64/libcuda.so.1"} {
			m, err := c.attach(t, openSource(t, host+"/"+libTarget, ReadOnly, method), p)
			if err != nil {
				t.Fatal(err)
			}
			m.AddUndo(&c.undo, c.ns)
		}
		if c.MountAt(t, "usr/lib64/libcuda.so.1") == nil {
			t.Fatal("not mounted")
		}
		if err := c.undo.Undo(); err != nil {
			t.Fatalf("%v: %v", method, err)
		}
		if after := c.MountInfo(t); len(after) != len(before) {
			t.Errorf("%v: %d mounts after undo, %d before", method, len(after), len(before))
		}
		for _, p := range []string{"usr/lib64", "usr/lib/x86_64-linux-gnu"} {
			if _, err := os.Lstat(c.Path(p)); !os.IsNotExist(err) {
				t.Errorf("%v: undo left %s (%v)", method, p, err)
			}
		}
	}
}

// TestCloseTouchesOnlyItsOwn: closing a source of every kind, twice,
// closes nothing it does not own (a zero descriptor number taken for "none"
// would close stdin, then whatever reused 0).
func TestCloseTouchesOnlyItsOwn(t *testing.T) {
	host := hostTree(t)
	for _, method := range methods {
		file := openSource(t, host+"/"+libTarget, ReadOnly, method)
		tmpfs, err := NewTmpfs(&TmpfsOptions{Method: method}, func(*os.File) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []*Source{file, tmpfs, file, tmpfs} {
			s.Close()
		}
		for fd := range 3 {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
				t.Errorf("%v: descriptor %d closed: %v", method, fd, err)
			}
		}
	}
}

// TestOpenDir: OpenDir walks below the mount's root without ".." and
// hands back a close-on-exec descriptor, also for the root itself (a
// duplicate of the Mount's own).
func TestOpenDir(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(root+"/gpus/0", 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := newMount(fd, "tmpfs", "/proc/driver/nvidia")
	defer m.Close()
	for _, name := range []string{"", ".", "gpus", "gpus/0"} {
		d, err := m.OpenDir(name)
		if err != nil {
			t.Errorf("OpenDir(%q): %v", name, err)
			continue
		}
		flags, err := unix.FcntlInt(d.Fd(), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("OpenDir(%q): F_GETFD %#x, %v; want FD_CLOEXEC", name, flags, err)
		}
		d.Close()
	}
	if d, err := m.OpenDir("gpus/../.."); !errors.Is(err, unix.EXDEV) {
		if d != nil {
			d.Close()
		}
		t.Errorf("OpenDir(\"gpus/../..\") = %v, want EXDEV", err)
	}
}
