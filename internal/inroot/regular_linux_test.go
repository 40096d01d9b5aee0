package inroot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for _, name := range []string{"/etc/fifo", "/etc/null", "/etc/sock", "/etc/dir", "/etc/link"} {
		_, err := ReadRegular(dir, name, 0, 1<<20)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), name) {
			t.Errorf("ReadRegular(%s): %v, want ErrNotRegular naming it", name, err)
		}
	}
	if _, err := unix.Open(filepath.Join(root, "etc/fifo"), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err != unix.ENXIO {
		t.Errorf("opening the FIFO's write end: %v, want ENXIO (no reader)", err)
	}
	_, err = ReadRegular(dir, "/etc/link", unix.O_NOFOLLOW, 1<<20)
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("ReadRegular(/etc/link, O_NOFOLLOW): %v, want ErrNotRegular (symlink)", err)
	}
	if b, err := ReadRegular(dir, "/etc/ok", 0, 1<<20); err != nil || string(b) != "hello\n" {
		t.Errorf("ReadRegular(/etc/ok) = %q, %v", b, err)
	}
	if _, err := ReadRegular(dir, "/etc/ok", 0, 3); err == nil {
		t.Error("ReadRegular of 6 bytes with max 3 succeeded")
	}
}

// TestReadRegularFileProcfs: a procfs file says size 0 and is read to its
// end; a host FIFO is refused.
func TestReadRegularFileProcfs(t *testing.T) {
	b, err := ReadRegularFile("/proc/self/status", 1<<20)
	if err != nil || !strings.Contains(string(b), "Name:") {
		t.Fatalf("ReadRegularFile(/proc/self/status) = %q, %v", b, err)
	}
	if _, err := ReadRegularFile("/proc/self/status", 16); err == nil {
		t.Error("ReadRegularFile past max succeeded")
	}
	p := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRegularFile(p, 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadRegularFile(FIFO): %v, want ErrNotRegular", err)
	}
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
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "lib"), []byte("ELF"), 0o644))
	must(os.Symlink("lib", filepath.Join(root, "link")))
	must(unix.Mkfifo(filepath.Join(root, "fifo"), 0o600))
	d, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(err)
	defer unix.Close(d)
	r, err := newReopener(private)
	must(err)
	if private < 0 && r.own == nil {
		t.Error("pathrs-lite's procfs not used")
	}
	defer r.Close()
	fd, st, err := r.OpenRegularAt(d, "lib")
	must(err)
	var got unix.Stat_t
	must(unix.Fstat(fd, &got))
	if got.Ino != st.Ino || got.Dev != st.Dev || st.Size != 3 {
		t.Errorf("reopened inode %d:%d, checked %d:%d (size %d)", got.Dev, got.Ino, st.Dev, st.Ino, st.Size)
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("reopened descriptor lacks FD_CLOEXEC (%#x, %v)", flags, err)
	}
	unix.Close(fd)
	for _, name := range []string{"link", "fifo"} {
		if _, _, err := r.OpenRegularAt(d, name); !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenRegularAt(%s): %v, want ErrNotRegular", name, err)
		}
	}
	if _, _, err := r.OpenRegularAt(d, "missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenRegularAt(missing): %v, want ErrNotExist", err)
	}
}
