package fstree_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/fstree"
	"github.com/go-nvc/nvc/internal/testutil"
)

func TestBuildCharNode(t *testing.T) {
	testutil.RequireRoot(t)
	root := t.TempDir()
	if err := fstree.Create(root, "char dev/nvidiactl 195 255 0666", nil); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(root, "dev/nvidiactl"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR || unix.Major(st.Rdev) != 195 || unix.Minor(st.Rdev) != 255 || st.Mode&0o777 != 0o666 {
		t.Errorf("node mode %o rdev %d:%d", st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev))
	}
}
