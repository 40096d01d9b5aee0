package rootfs

import (
	"io"
	"io/fs"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/internal/undo"
)

// hostileCase is an image layout and one operation on it. want names
// where the result must land inside the rootfs ({{HOST}} expanded), or
// wantErr what the error must match.
type hostileCase struct {
	name    string
	spec    string
	op      func(r *Root, unsafePath string) error
	path    string
	want    string
	wantErr error
}

func createFile(r *Root, p string) error { return closeEntry(r.CreateFile(p, 0o644)) }

func mkdirAll(r *Root, p string) error { return closeEntry(r.MkdirAll(p, 0o755)) }

func mknod(r *Root, p string) error { return closeEntry(r.Mknod(p, 0o666, 195, 255)) }

func writeFile(r *Root, p string) error {
	return r.WriteFile(p, []byte("container cache"), 0o644)
}

func symlinkTo(target string) func(*Root, string) error {
	return func(r *Root, p string) error { return closeEntry(r.Symlink(target, p)) }
}

func closeEntry(e *Entry, err error) error {
	if e != nil {
		e.Close()
	}
	return err
}

// Symlinks to host paths either lead to the same path inside the rootfs
// (when the layout makes it) or dangle there (an error): both are safe.
var hostileCases = []hostileCase{
	{name: "lib dir absolute symlink to host",
		spec: "dir {{HOST}}/lib\nsymlink usr/lib/x86_64-linux-gnu {{HOST}}/lib",
		op:   createFile, path: "usr/lib/x86_64-linux-gnu/libc.so.6", want: "{{HOST}}/lib/libc.so.6"},
	{name: "lib dir absolute symlink to host, dangling in rootfs",
		spec: "symlink usr/lib/x86_64-linux-gnu {{HOST}}/lib",
		op:   createFile, path: "usr/lib/x86_64-linux-gnu/libc.so.6", wantErr: ErrWrongType},
	{name: "lib dir dot-dot symlink to host",
		spec: "dir {{HOST}}/lib\nsymlink usr/lib64 {{UP}}{{HOST}}/lib",
		op:   createFile, path: "usr/lib64/libcuda.so.1", want: "{{HOST}}/lib/libcuda.so.1"},
	{name: "lib dir dot-dot symlink to host, dangling in rootfs",
		spec: "symlink usr/lib64 {{UP}}{{HOST}}/lib",
		op:   createFile, path: "usr/lib64/libcuda.so.1", wantErr: ErrWrongType},
	{name: "usr/bin symlink to /",
		spec: "symlink usr/bin /",
		op:   createFile, path: "usr/bin/nvidia-smi", want: "nvidia-smi"},
	{name: "usr/bin dot-dot symlink to host usr/bin",
		spec: "dir {{HOST}}/usr/bin\nsymlink usr/bin ../{{UP}}{{HOST}}/usr/bin",
		op:   createFile, path: "usr/bin/nvidia-smi", want: "{{HOST}}/usr/bin/nvidia-smi"},
	{name: "etc symlink to host etc, write cache",
		spec: "dir {{HOST}}/etc\nsymlink etc {{HOST}}/etc",
		op:   writeFile, path: "etc/ld.so.cache", want: "{{HOST}}/etc/ld.so.cache"},
	{name: "dev symlink to host dev",
		spec: "dir {{HOST}}/dev\nsymlink dev {{UP}}{{HOST}}/dev",
		op:   mknod, path: "dev/nvidiactl", want: "{{HOST}}/dev/nvidiactl"},
	{name: "proc symlink to host proc",
		spec: "dir {{HOST}}/proc\nsymlink proc {{HOST}}/proc",
		op:   mkdirAll, path: "proc/driver/nvidia/gpus/0000:01:00.0", want: "{{HOST}}/proc/driver/nvidia/gpus/0000:01:00.0"},
	{name: "proc symlink to /proc",
		spec: "symlink proc /proc",
		op:   mkdirAll, path: "proc/driver/nvidia", wantErr: unix.ELOOP},
	{name: "chained symlinks",
		spec: "dir real\nsymlink real/c {{UP}}\nsymlink b real\nsymlink a b",
		op:   createFile, path: "a/c/etc/passwd", want: "etc/passwd"},
	{name: "deep dot-dot chain",
		spec: "dir x/y",
		op:   createFile, path: "x/y/../../../../../../../../../{{HOST}}/etc/shadow", want: "{{HOST}}/etc/shadow"},
	{name: "dot-dot below a created dir",
		spec: "dir x",
		op:   createFile, path: "x/new/../../etc/passwd", wantErr: ErrInvalidPath},
	{name: "target is absolute symlink to host file",
		spec: "dir usr/lib\nsymlink usr/lib/libcuda.so.1 {{HOST}}/lib/libc.so.6",
		op:   createFile, path: "usr/lib/libcuda.so.1", wantErr: ErrWrongType},
	{name: "target is dangling symlink",
		spec: "dir usr/lib\nsymlink usr/lib/libcuda.so.1 {{HOST}}/lib/new.so",
		op:   createFile, path: "usr/lib/libcuda.so.1", wantErr: ErrWrongType},
	{name: "target is FIFO",
		spec: "fifo usr/lib/libcuda.so.1",
		op:   createFile, path: "usr/lib/libcuda.so.1", wantErr: ErrWrongType},
	{name: "target is socket",
		spec: "socket s",
		op:   createFile, path: "s", wantErr: ErrWrongType},
	{name: "target is directory",
		spec: "dir usr/lib/libcuda.so.1",
		op:   createFile, path: "usr/lib/libcuda.so.1", wantErr: ErrWrongType},
	{name: "dir target is symlink to host dir",
		spec: "dir proc/driver\nsymlink proc/driver/nvidia {{HOST}}/proc",
		op:   mkdirAll, path: "proc/driver/nvidia", wantErr: ErrWrongType},
	{name: "node target is symlink to host",
		spec: "symlink dev/nvidiactl {{HOST}}/dev/nvidiactl",
		op:   mknod, path: "dev/nvidiactl", wantErr: ErrWrongType},
	{name: "node target is other device",
		spec: "char dev/nvidiactl 1 3",
		op:   mknod, path: "dev/nvidiactl", wantErr: fs.ErrExist},
	{name: "symlink target exists with other target",
		spec: "symlink usr/lib/libcuda.so {{HOST}}/lib/libc.so.6",
		op:   symlinkTo("libcuda.so.1"), path: "usr/lib/libcuda.so", wantErr: fs.ErrExist},
	{name: "symlink target is a file",
		spec: "file usr/lib/libcuda.so",
		op:   symlinkTo("libcuda.so.1"), path: "usr/lib/libcuda.so", wantErr: ErrWrongType},
	{name: "write over a symlink replaces it",
		spec: "symlink etc/ld.so.cache {{HOST}}/etc/ld.so.cache",
		op:   writeFile, path: "etc/ld.so.cache", want: "etc/ld.so.cache"},
	{name: "write over a directory",
		spec: "dir etc/ld.so.cache",
		op:   writeFile, path: "etc/ld.so.cache", wantErr: ErrWrongType},
	{name: "parent component is a file",
		spec: "file usr/lib",
		op:   createFile, path: "usr/lib/libcuda.so.1", wantErr: ErrWrongType},
}

func TestHostileLayouts(t *testing.T) {
	testutil.RequireRoot(t)
	for _, res := range resolvers {
		for _, tc := range hostileCases {
			t.Run(res.name+"/"+tc.name, func(t *testing.T) {
				runHostile(t, &Options{Resolver: res.r}, tc)
			})
			t.Run(res.name+"/kept dirs/"+tc.name, func(t *testing.T) {
				runHostile(t, &Options{Resolver: res.r, KeepDirs: true}, tc)
			})
		}
	}
}

func runHostile(t *testing.T, opts *Options, tc hostileCase) {
	host := newSentinel(t)
	rootfs := testutil.Tree(t, host.expand(tc.spec))
	var u undo.Stack
	opts.Undo = &u
	r := openRoot(t, rootfs, opts)
	err := tc.op(r, host.expand(tc.path))
	if tc.wantErr != nil {
		require.ErrorIs(t, err, tc.wantErr)
	} else {
		require.NoError(t, err)
		want := in(rootfs, host.expand(tc.want))
		assert.True(t, exists(want), "result not at %s", want)
	}
	mustUndo(t, &u)
	if tc.wantErr == nil && tc.name != "write over a symlink replaces it" {
		assert.False(t, exists(in(rootfs, host.expand(tc.want))), "undo left %s", host.expand(tc.want))
	}
}

func TestRootfsIsSymlink(t *testing.T) {
	host := newSentinel(t)
	parent := t.TempDir()
	link := in(parent, "rootfs")
	require.NoError(t, os.Symlink(host.dir, link))
	r, err := Open(link, nil)
	require.ErrorIs(t, err, ErrWrongType, "Open(symlink rootfs) = %v", r)
}

func TestOpenFileStaysInRoot(t *testing.T) {
	host := newSentinel(t)
	rootfs := testutil.Tree(t, host.expand(`
symlink etc/passwd {{HOST}}/etc/passwd
symlink etc/group {{UP}}{{HOST}}/etc/passwd
file    {{HOST}}/etc/passwd "container passwd"
fifo    etc/fifo
`))
	r := openRoot(t, rootfs, nil)
	for _, p := range []string{"etc/passwd", "etc/group"} {
		t.Run(p, func(t *testing.T) {
			f, err := r.OpenFile(p)
			require.NoError(t, err)
			data, _ := io.ReadAll(f)
			f.Close()
			assert.Equal(t, "container passwd", string(data), "OpenFile(%q), want the rootfs copy", p)
		})
	}
	_, err := r.OpenFile("etc/fifo")
	assert.ErrorIs(t, err, ErrWrongType, "OpenFile(FIFO)")
}

func TestLookupDoesNotFollowLast(t *testing.T) {
	host := newSentinel(t)
	rootfs := testutil.Tree(t, host.expand("dir {{HOST}}/lib\nsymlink {{HOST}}/lib/libc.so.6 {{HOST}}/lib/libc.so.6\nsymlink lib {{HOST}}/lib"))
	r := openRoot(t, rootfs, nil)
	e, err := r.Lookup("lib/libc.so.6")
	require.NoError(t, err)
	defer e.Close()
	assert.NotZero(t, e.Mode()&fs.ModeSymlink, "Lookup followed the last symlink: mode %v", e.Mode())
	assert.Zero(t, e.Rdev(), "Rdev of a symlink")
	_, err = r.Lookup("missing/x")
	assert.ErrorIs(t, err, fs.ErrNotExist, "Lookup(missing)")
}

// TestSentinelCatchesNaiveWrite shows the host-tree check can fail: a
// write that joins paths as strings goes through the planted symlink.
func TestSentinelCatchesNaiveWrite(t *testing.T) {
	hostDir := testutil.Tree(t, hostSpec)
	before := container.SnapshotTree(t, hostDir)
	rootfs := testutil.Tree(t, "symlink etc "+hostDir+"/etc")
	require.NoError(t, os.WriteFile(in(rootfs, "etc/ld.so.cache"), []byte("naive"), 0o644))
	assert.NotEmpty(t, container.DiffSnapshots(before, container.SnapshotTree(t, hostDir)), "a write through a planted symlink went unnoticed")
}

// TestWithoutOpenat2 runs on a simulated kernel without openat2 (< 5.6):
// ResolveAuto falls back to pathrs-lite's own resolver, which must keep
// the hostile layouts inside the rootfs too; ResolveOpenat2 fails closed.
func TestWithoutOpenat2(t *testing.T) {
	testutil.RequireRoot(t)
	if !container.InChild(t) {
		return
	}
	require.NoError(t, container.DenySyscalls(unix.SYS_OPENAT2))
	_, err := Open(t.TempDir(), &Options{Resolver: ResolveOpenat2})
	assert.ErrorIs(t, err, ErrNotSupported, "Open with ResolveOpenat2")
	assert.Equal(t, ResolvePathrsLite, openRoot(t, t.TempDir(), nil).Resolver(), "ResolveAuto chose")
	for _, tc := range hostileCases {
		t.Run(tc.name, func(t *testing.T) { runHostile(t, &Options{Resolver: ResolveAuto, KeepDirs: true}, tc) })
	}
}

// TestOpenRegularStaysInRoot: OpenRegular resolves symlinks inside the
// rootfs (a link to a host file dangles there) and refuses anything but
// a regular file.
func TestOpenRegularStaysInRoot(t *testing.T) {
	host := newSentinel(t)
	rootfs := testutil.Tree(t, host.expand(`
file    opt/lib/libcuda.so.560 "image"
symlink usr/local/cuda/compat /opt/lib
symlink usr/local/cuda/host {{HOST}}/lib
symlink usr/local/cuda/up {{UP}}{{HOST}}/lib
fifo    opt/lib/fifo
dir     opt/lib/dir
`))
	r := openRoot(t, rootfs, nil)
	f, err := r.OpenRegular("usr/local/cuda/compat/libcuda.so.560")
	require.NoError(t, err)
	fi, err := f.Stat()
	if assert.NoError(t, err, "OpenRegular opened %v, want the image's file", fi) {
		assert.Equal(t, int64(len("image")), fi.Size(), "OpenRegular opened %v, want the image's file", fi)
	}
	f.Close()
	for p, want := range map[string]error{
		"usr/local/cuda/host/libc.so.6": fs.ErrNotExist, "usr/local/cuda/up/libc.so.6": fs.ErrNotExist,
		"opt/lib/fifo": ErrWrongType, "opt/lib/dir": ErrWrongType,
	} {
		t.Run(p, func(t *testing.T) {
			f, err := r.OpenRegular(p)
			assert.ErrorIs(t, err, want, "OpenRegular(%q) = %v", p, f)
		})
	}
}
