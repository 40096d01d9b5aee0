package mount

import (
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	defer m.Close()
	wantOptions(t, c.options(t, libTarget), "ro", "nosuid", "nodev")
	if info := c.MountAt(t, libTarget); assert.NotNil(t, info, "mountinfo has nothing at %s", libTarget) {
		assert.Equal(t, m.ID(), uint64(info.ID), "Mount.ID(), mountinfo has %+v", info)
	}
	data, err := os.ReadFile(c.Path(libTarget))
	if assert.NoError(t, err, "container reads") {
		assert.Equal(t, "host libcuda", string(data), "container reads")
	}
	_, err = os.OpenFile(c.Path(libTarget), os.O_WRONLY, 0)
	assert.ErrorIs(t, err, syscall.EROFS, "writing the bound file")
	assert.Equal(t, before, hostMounts(t), "host mount table changed")
	require.NoError(t, c.detach(t, m))
	assert.Nil(t, c.MountAt(t, libTarget), "still mounted after Detach")
	require.NoError(t, c.undo.Undo())
	_, err = os.Lstat(c.Path("usr/lib/x86_64-linux-gnu"))
	assert.ErrorIs(t, err, os.ErrNotExist, "undo left the placeholder's directory")
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
	_, err := c.attach(t, dirSrc, gpu)
	require.NoError(t, err)
	wantOptions(t, c.options(t, gpu), "ro", "nosuid", "nodev", "noexec")
	data, _ := os.ReadFile(c.Path(gpu + "/information"))
	assert.Equal(t, "Model: Test GPU\n", string(data), "bound dir holds")
	devSrc := openSource(t, "/dev/null", ReadOnly|NoSuid|NoExec, method)
	_, err = c.attach(t, devSrc, "dev/nvidiactl")
	require.NoError(t, err)
	wantOptions(t, c.options(t, "dev/nvidiactl"), "ro", "nosuid", "noexec")
	var st syscall.Stat_t
	if assert.NoError(t, syscall.Stat(c.Path("dev/nvidiactl"), &st), "dev/nvidiactl") {
		assert.Equal(t, uint64(0x103), uint64(st.Rdev), "dev/nvidiactl rdev, want /dev/null's 1:3")
	}
}

func TestLegacyRefusesOtherFile(t *testing.T) {
	host := hostTree(t)
	// In a pivoted container the host path means nothing, or whatever the
	// image put there.
	for _, tc := range []struct{ name, spec string }{
		{"nothing at the host path", "dir usr/lib"},
		{"image file at the host path", "file " + host + "/" + libTarget + " \"image file\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCtr(t, &container.Options{PivotRoot: true, Spec: tc.spec})
			src := openSource(t, host+"/"+libTarget, ReadOnly, Legacy)
			_, err := c.attach(t, src, libTarget)
			assert.ErrorIs(t, err, ErrSourceMismatch, "spec %q: Attach", tc.spec)
			assert.Nil(t, c.MountAt(t, libTarget), "spec %q: something got mounted", tc.spec)
		})
	}
}

func TestAttachAndDetachNeedConfinedThread(t *testing.T) {
	host := hostTree(t)
	for _, method := range methods {
		t.Run(method.String(), func(t *testing.T) {
			src := openSource(t, host+"/"+libTarget, ReadOnly, method)
			dir, err := os.Open(t.TempDir())
			require.NoError(t, err)
			defer dir.Close()
			_, err = src.Attach(dir, "x")
			assert.ErrorIs(t, err, ErrNotConfined, "%v: Attach outside Run", method)
			_, err = ConfinedThread()
			assert.ErrorIs(t, err, ErrNotConfined, "ConfinedThread outside Run")
			m := &Mount{fd: int(dir.Fd()), file: dir}
			assert.ErrorIs(t, m.Detach(), ErrNotConfined, "Detach outside Run")
		})
	}
}

func TestDetachWhenAlreadyGone(t *testing.T) {
	host := hostTree(t)
	for _, method := range methods {
		t.Run(method.String(), func(t *testing.T) {
			c := startCtr(t, nil)
			m, err := c.attach(t, openSource(t, host+"/"+libTarget, ReadOnly, method), libTarget)
			require.NoError(t, err)
			out, err := c.Exec(t, "umount", "-l", c.Rootfs+"/"+libTarget)
			require.NoError(t, err, "umount in container: %s", out)
			assert.ErrorIs(t, c.detach(t, m), ErrNotMounted, "%v: Detach of an unmounted mount", method)
		})
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
		kind := map[*Source]string{file: "file", dir: "dir"}[tc.src]
		t.Run(kind+"/"+tc.name, func(t *testing.T) {
			err := c.run(t, func(r *rootfs.Root) error {
				_, err := tc.src.Attach(r.File(), tc.name)
				return err
			})
			assert.ErrorIs(t, err, ErrTargetType, "attaching %s onto %s", tc.src.Path(), tc.name)
			err = c.run(t, func(r *rootfs.Root) error {
				e, err := r.Lookup(tc.name)
				if err != nil {
					return err
				}
				defer e.Close()
				_, err = tc.src.AttachEntry(e)
				return err
			})
			assert.ErrorIs(t, err, ErrTargetType, "attaching %s onto the entry %s", tc.src.Path(), tc.name)
		})
	}
	require.NoError(t, os.Symlink(host+"/"+libTarget, host+"/link"))
	_, err := OpenSource(host+"/link", 0, nil)
	assert.ErrorIs(t, err, ErrTargetType, "OpenSource(symlink)")
}

func TestAttachTwice(t *testing.T) {
	host := hostTree(t)
	c := startCtr(t, nil)
	src := openSource(t, host+"/"+libTarget, ReadOnly, NewAPI)
	_, err := c.attach(t, src, libTarget)
	require.NoError(t, err)
	_, err = c.attach(t, src, "usr/lib/other")
	assert.ErrorIs(t, err, ErrAttached, "second Attach")
	c.via = (*Source).AttachEntry
	_, err = c.attach(t, src, "usr/lib/other")
	assert.ErrorIs(t, err, ErrAttached, "second AttachEntry")
}

// TestUndoStack is Apply's rollback: placeholders and mounts recorded on
// one stack, undone in reverse from the host after the namespace work.
func TestUndoStack(t *testing.T) {
	host := hostTree(t)
	for _, method := range methods {
		t.Run(method.String(), func(t *testing.T) {
			c := startCtr(t, &container.Options{Spec: "dir usr/lib"})
			before := c.MountInfo(t)
			for _, p := range []string{libTarget, "usr/lib64/libcuda.so.1"} {
				m, err := c.attach(t, openSource(t, host+"/"+libTarget, ReadOnly, method), p)
				require.NoError(t, err)
				m.AddUndo(&c.undo, c.ns)
			}
			require.NotNil(t, c.MountAt(t, "usr/lib64/libcuda.so.1"), "not mounted")
			require.NoError(t, c.undo.Undo(), "%v", method)
			assert.Len(t, c.MountInfo(t), len(before), "%v: mounts after undo vs. before", method)
			for _, p := range []string{"usr/lib64", "usr/lib/x86_64-linux-gnu"} {
				_, err := os.Lstat(c.Path(p))
				assert.ErrorIs(t, err, os.ErrNotExist, "%v: undo left %s", method, p)
			}
		})
	}
}

// TestCloseTouchesOnlyItsOwn: closing a source of every kind, twice,
// closes nothing it does not own (a zero descriptor number taken for "none"
// would close stdin, then whatever reused 0).
func TestCloseTouchesOnlyItsOwn(t *testing.T) {
	host := hostTree(t)
	for _, method := range methods {
		t.Run(method.String(), func(t *testing.T) {
			file := openSource(t, host+"/"+libTarget, ReadOnly, method)
			tmpfs, err := NewTmpfs(&TmpfsOptions{Method: method}, func(*os.File) error { return nil })
			require.NoError(t, err)
			for _, s := range []*Source{file, tmpfs, file, tmpfs} {
				s.Close()
			}
			for fd := range 3 {
				_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
				assert.NoError(t, err, "%v: descriptor %d closed", method, fd)
			}
		})
	}
}

// TestOpenDir: OpenDir walks below the mount's root without ".." and
// hands back a close-on-exec descriptor, also for the root itself (a
// duplicate of the Mount's own).
func TestOpenDir(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(root+"/gpus/0", 0o755))
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	m := newMount(fd, "tmpfs", "/proc/driver/nvidia")
	defer m.Close()
	for _, name := range []string{"", ".", "gpus", "gpus/0"} {
		t.Run(strconv.Quote(name), func(t *testing.T) {
			d, err := m.OpenDir(name)
			require.NoError(t, err, "OpenDir(%q)", name)
			defer d.Close()
			flags, err := unix.FcntlInt(d.Fd(), unix.F_GETFD, 0)
			require.NoError(t, err, "OpenDir(%q): F_GETFD", name)
			assert.NotZero(t, flags&unix.FD_CLOEXEC, "OpenDir(%q): F_GETFD %#x, want FD_CLOEXEC", name, flags)
		})
	}
	d, err := m.OpenDir("gpus/../..")
	if !assert.ErrorIs(t, err, unix.EXDEV, "OpenDir(\"gpus/../..\")") && d != nil {
		d.Close()
	}
}
