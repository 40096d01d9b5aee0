package cgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestFind reads fixture files through the I/O half: the proc root and the
// mountinfo file are both parameters.
func TestFind(t *testing.T) {
	root := testutil.Tree(t, `
file proc/42/cgroup "12:devices:/kubepods/pod1/ctr\n0::/kubepods/pod1/ctr\n"
file proc/43/cgroup "0::/sys tem.slice/ctr\n"
file proc/44/cgroup "1:cpu:/\n"
file mountinfo "30 22 0:27 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n35 30 0:32 /kubepods /sys/fs/cgroup/dev\\040ices rw - cgroup cgroup rw,devices\n40 30 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
`)
	opts := &Options{ProcRoot: filepath.Join(root, "proc"), MountInfo: filepath.Join(root, "mountinfo")}
	for _, tc := range []struct {
		pid     int
		want    Location
		wantErr error
	}{
		{42, Location{V1, "/sys/fs/cgroup/dev ices/pod1/ctr", "/sys/fs/cgroup/dev ices", "/kubepods", "/kubepods/pod1/ctr"}, nil},
		{43, Location{V2, "/sys/fs/cgroup/unified/sys tem.slice/ctr", "/sys/fs/cgroup/unified", "/", "/sys tem.slice/ctr"}, nil},
		{44, Location{}, ErrNotFound},
		{45, Location{}, ErrNotFound},
	} {
		t.Run(strconv.Itoa(tc.pid), func(t *testing.T) {
			got, err := Find(tc.pid, opts)
			if tc.wantErr == nil {
				assert.NoError(t, err, "Find(%d)", tc.pid)
			} else {
				assert.ErrorIs(t, err, tc.wantErr, "Find(%d)", tc.pid)
				assert.ErrorContains(t, err, "pid "+strconv.Itoa(tc.pid), "Find(%d) error does not name the pid", tc.pid)
			}
			assert.Equal(t, tc.want, got, "Find(%d)", tc.pid)
		})
	}
	_, err := Find(42, &Options{ProcRoot: opts.ProcRoot})
	assert.Error(t, err, "Find without a mountinfo under the fixture proc root succeeded")
}

// TestOpenV2ByPid: Open follows a v2-only cgroup file (a devices-less host)
// to the real cgroup2 directory of a process and grants through it.
func TestOpenV2ByPid(t *testing.T) {
	dir, o, _ := v2Cgroup(t)
	real, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(o.pid()), "cgroup"))
	require.NoError(t, err)
	var v2Line string
	for l := range strings.Lines(string(real)) {
		if strings.HasPrefix(l, "0::") {
			v2Line = l
		}
	}
	proc := testutil.Tree(t, "file "+strconv.Itoa(o.pid())+"/cgroup "+strconv.Quote(v2Line))
	c, err := Open(o.pid(), &Options{ProcRoot: proc, MountInfo: "/proc/thread-self/mountinfo"})
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, V2, c.Version(), "Open: version")
	require.Equal(t, dir, c.Path(), "Open: path")
	nodes := deviceNodes(t)
	undo := mustAllow(t, c, Rule{Major: 195, Minor: 255})
	o.expectOpen(t, "after Allow", nodes, map[string]string{"nvidia0": "ENXIO", "random": "EPERM"})
	mustUndo(t, undo)
	o.expectOpen(t, "after undo", nodes, map[string]string{"nvidia0": "EPERM"})
}

// TestOpenVersionMismatch: a cgroup file that names v1 for a directory that
// is really cgroup2 is refused.
func TestOpenVersionMismatch(t *testing.T) {
	dir := newCgroup(t, v2Mount(t))
	root := testutil.Tree(t, "file proc/7/cgroup \"5:devices:/"+filepath.Base(dir)+"\\n\"\n"+
		"file mountinfo \"40 30 0:37 / "+filepath.Dir(dir)+" rw - cgroup cgroup rw,devices\\n\"")
	_, err := Open(7, &Options{ProcRoot: filepath.Join(root, "proc"), MountInfo: filepath.Join(root, "mountinfo")})
	assert.ErrorIs(t, err, ErrInvalid, "Open with a v1 cgroup file for a cgroup2 directory")
}
