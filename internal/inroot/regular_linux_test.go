package inroot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestReadRegularRefusesNodes: a FIFO, a character device, a socket or a
// directory where a file is read is refused with ErrNotRegular, an error
// naming the path, without blocking (a FIFO opened for reading would
// wait for a writer) and without being opened (the FIFO's write end
// cannot be opened non-blocking, so no reader ever had it open).
func TestReadRegularRefusesNodes(t *testing.T) {
	root := testutil.RootTree(t, `
fifo etc/fifo
char etc/null 1 3
socket etc/sock
dir etc/dir
symlink etc/link /etc/fifo
file etc/ok "hello\n"
`)
	dir, err := os.Open(root)
	require.NoError(t, err)
	defer dir.Close()
	for _, name := range []string{"/etc/fifo", "/etc/null", "/etc/sock", "/etc/dir", "/etc/link"} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadRegular(dir, name, 0, 1<<20)
			assert.ErrorIs(t, err, ErrNotRegular, "ReadRegular(%s)", name)
			assert.ErrorContains(t, err, name, "ReadRegular(%s): error does not name it", name)
		})
	}
	_, err = unix.Open(filepath.Join(root, "etc/fifo"), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	assert.Equal(t, unix.ENXIO, err, "opening the FIFO's write end, want ENXIO (no reader)")
	_, err = ReadRegular(dir, "/etc/link", unix.O_NOFOLLOW, 1<<20)
	assert.ErrorIs(t, err, ErrNotRegular, "ReadRegular(/etc/link, O_NOFOLLOW)")
	assert.ErrorContains(t, err, "symlink", "ReadRegular(/etc/link, O_NOFOLLOW)")
	b, err := ReadRegular(dir, "/etc/ok", 0, 1<<20)
	if assert.NoError(t, err, "ReadRegular(/etc/ok)") {
		assert.Equal(t, "hello\n", string(b), "ReadRegular(/etc/ok)")
	}
	_, err = ReadRegular(dir, "/etc/ok", 0, 3)
	assert.Error(t, err, "ReadRegular of 6 bytes with max 3 succeeded")
}

// TestReadRegularFileProcfs: a procfs file says size 0 and is read to its
// end; a host FIFO is refused.
func TestReadRegularFileProcfs(t *testing.T) {
	b, err := ReadRegularFile("/proc/self/status", 1<<20)
	require.NoError(t, err, "ReadRegularFile(/proc/self/status)")
	require.Contains(t, string(b), "Name:", "ReadRegularFile(/proc/self/status)")
	_, err = ReadRegularFile("/proc/self/status", 16)
	assert.Error(t, err, "ReadRegularFile past max succeeded")
	p := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, unix.Mkfifo(p, 0o600))
	_, err = ReadRegularFile(p, 1<<20)
	assert.ErrorIs(t, err, ErrNotRegular, "ReadRegularFile(FIFO)")
}

// TestReopenerOpenRegularAt: the descriptor read is the file's own inode;
// a symlink (not followed), a FIFO and a missing name are refused; with
// the package's own procfs and with pathrs-lite's (mount IDs checked).
func TestReopenerOpenRegularAt(t *testing.T) {
	if privateProc() < 0 {
		t.Log("no private procfs on this kernel: only pathrs-lite's is tried")
	}
	for name, private := range map[string]int{"private": privateProc(), "pathrs": -1} {
		t.Run(name, func(t *testing.T) { testOpenRegularAt(t, private) })
	}
}

func testOpenRegularAt(t *testing.T, private int) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		require.NoError(t, err)
	}
	must(os.WriteFile(filepath.Join(root, "lib"), []byte("ELF"), 0o644))
	must(os.Symlink("lib", filepath.Join(root, "link")))
	must(unix.Mkfifo(filepath.Join(root, "fifo"), 0o600))
	d, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(err)
	defer unix.Close(d)
	r, err := newReopener(private)
	must(err)
	if private < 0 {
		assert.NotNil(t, r.own, "pathrs-lite's procfs not used")
	}
	defer r.Close()
	fd, st, err := r.OpenRegularAt(d, "lib")
	must(err)
	var got unix.Stat_t
	must(unix.Fstat(fd, &got))
	assert.Equal(t, [2]uint64{uint64(st.Dev), st.Ino}, [2]uint64{uint64(got.Dev), got.Ino}, "reopened inode (dev, ino) vs. the checked one")
	assert.Equal(t, int64(3), st.Size, "checked size")
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if assert.NoError(t, err, "reopened descriptor F_GETFD") {
		assert.NotZero(t, flags&unix.FD_CLOEXEC, "reopened descriptor lacks FD_CLOEXEC (%#x)", flags)
	}
	unix.Close(fd)
	for _, name := range []string{"link", "fifo"} {
		_, _, err := r.OpenRegularAt(d, name)
		assert.ErrorIs(t, err, ErrNotRegular, "OpenRegularAt(%s)", name)
	}
	_, _, err = r.OpenRegularAt(d, "missing")
	assert.ErrorIs(t, err, os.ErrNotExist, "OpenRegularAt(missing)")
}

// TestReadToEnd: a file is read to its end whatever fstat said of its
// size (grown, shrunk) and refused past its bound.
func TestReadToEnd(t *testing.T) {
	data := []byte(strings.Repeat("0123456789", 1000))
	for _, tc := range []struct {
		name      string
		size, max int64
		err       bool
	}{
		{"as fstat said", 10000, 1 << 20, false},
		{"grown since fstat", 10, 1 << 20, false},
		{"shrunk since fstat", 20000, 1 << 20, false},
		{"empty by fstat", 0, 1 << 20, false},
		{"past its bound", 10, 9999, true},
		{"at its bound", 10, 10000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ReadToEnd(bytes.NewReader(data), tc.size, tc.max)
			if tc.err {
				require.ErrorIs(t, err, ErrTooLarge)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, data, b)
		})
	}
}
