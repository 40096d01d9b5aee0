package nvcontainer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil/container"
)

// checkApplied checks, through /proc/PID/root and the container's
// mountinfo, that every change of p is in c. It returns what is wrong, so
// that it can run on many goroutines.
func checkApplied(c *container.Container, p *Plan) []string {
	mounts, err := mountinfo.PidMountInfo(c.PID)
	if err != nil {
		return []string{err.Error()}
	}
	v := &verifier{c: c, mounts: map[string]*mountinfo.Info{}}
	for _, m := range mounts {
		v.mounts[m.Mountpoint] = m // the last one is the topmost
	}
	for _, t := range p.Tmpfs {
		v.tmpfs(t)
	}
	for _, m := range p.Mounts {
		v.mount(m)
	}
	for _, s := range p.Symlinks {
		if got, err := os.Readlink(c.Path(s.Path)); got != s.Target {
			v.errorf("symlink %s -> %q (%v), want %q", s.Path, got, err, s.Target)
		}
	}
	return v.errs
}

type verifier struct {
	c      *container.Container
	mounts map[string]*mountinfo.Info
	errs   []string
}

func (v *verifier) errorf(format string, args ...any) {
	v.errs = append(v.errs, fmt.Sprintf(format, args...))
}

// mountAt checks that something is mounted at target with options.
func (v *verifier) mountAt(target string, options []string) *mountinfo.Info {
	m := v.mounts[filepath.Join(v.c.Rootfs, target)]
	if m == nil {
		v.errorf("nothing mounted at %s", target)
		return nil
	}
	have := strings.Split(m.Options, ",")
	for _, o := range options {
		if !slices.Contains(have, o) {
			v.errorf("%s mounted %q, lacks %q", target, m.Options, o)
		}
	}
	return m
}

func (v *verifier) mount(m Mount) {
	if v.mountAt(m.Target, m.Options) == nil {
		return
	}
	inside := v.c.Path(m.Target)
	switch {
	case m.Device != nil:
		v.device(m, inside)
	case m.Dir:
		v.sameDir(m.Source, inside)
	default:
		v.sameFile(m, inside)
	}
}

func (v *verifier) device(m Mount, inside string) {
	var st unix.Stat_t
	if err := unix.Stat(inside, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR ||
		st.Rdev != unix.Mkdev(m.Device.Major, m.Device.Minor) {
		v.errorf("%s: mode %#o rdev %d:%d (%v), want char %d:%d", m.Target, st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev), err, m.Device.Major, m.Device.Minor)
	}
}

func (v *verifier) sameFile(m Mount, inside string) {
	want, _ := os.Lstat(m.Source)
	if want.Mode().IsRegular() {
		a, err1 := os.ReadFile(m.Source)
		b, err2 := os.ReadFile(inside)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			v.errorf("%s: content differs from %s (%v, %v)", m.Target, m.Source, err1, err2)
		}
	}
	if slices.Contains(m.Options, "ro") {
		if err := unix.Access(inside, unix.W_OK); !errors.Is(err, syscall.EROFS) {
			v.errorf("%s: write access %v, want EROFS", m.Target, err)
		}
	}
}

func (v *verifier) sameDir(src, inside string) {
	a, err1 := os.ReadDir(src)
	b, err2 := os.ReadDir(inside)
	if err1 != nil || err2 != nil || len(a) != len(b) {
		v.errorf("%s: %d entries (%v), host %s has %d (%v)", inside, len(b), err2, src, len(a), err1)
	}
}

// tmpfs checks the mask: a tmpfs with the plan's files, and below gpus/
// exactly the planned GPU directories.
func (v *verifier) tmpfs(t Tmpfs) {
	if m := v.mountAt(t.Target, t.Options); m != nil && m.FSType != "tmpfs" {
		v.errorf("%s is %s, want tmpfs", t.Target, m.FSType)
	}
	for _, f := range t.Files {
		if b, err := os.ReadFile(v.c.Path(path.Join(t.Target, f.Name))); string(b) != f.Content {
			v.errorf("%s/%s holds %q (%v)", t.Target, f.Name, b, err)
		}
	}
	var want []string
	for _, m := range t.Mounts {
		v.mount(m)
		if dir, name := path.Split(m.Target); path.Base(dir) == "gpus" {
			want = append(want, name)
		}
	}
	entries, _ := os.ReadDir(v.c.Path(path.Join(t.Target, "gpus")))
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		v.errorf("%s/gpus lists %q, want %q", t.Target, got, want)
	}
}

// hostState is what must not change on the host: the test process's mount
// table, a tree outside the rootfs, and its threads' mount namespaces.
type hostState struct {
	ns     string // the test process's mount namespace
	mounts string
	trees  map[string]container.Snapshot
}

func recordHost(tb testing.TB, dirs ...string) *hostState {
	tb.Helper()
	s := &hostState{mounts: readFile(tb, "/proc/self/mountinfo"), trees: map[string]container.Snapshot{}}
	var err error
	s.ns, err = os.Readlink("/proc/self/ns/mnt")
	require.NoError(tb, err)
	for _, d := range dirs {
		s.trees[d] = container.SnapshotTree(tb, d)
	}
	return s
}

// check fails tb where the host changed.
func (s *hostState) check(tb testing.TB) {
	tb.Helper()
	assert.Empty(tb, mountDiff(s.mounts, readFile(tb, "/proc/self/mountinfo")), "the host's mount table changed")
	for d, before := range s.trees {
		assert.Empty(tb, container.DiffSnapshots(before, container.SnapshotTree(tb, d)), "%s changed", d)
	}
	checkThreads(tb, s.ns)
}

// checkThreads fails tb if a thread of this process stays in another
// mount namespace than want. A thread confined by ns.Run exits just after
// Run returns, so one seen there is given a moment to go.
func checkThreads(tb testing.TB, want string) {
	tb.Helper()
	var foreign []string
	for range 200 {
		if foreign = foreignThreads(tb, want); len(foreign) == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	assert.Empty(tb, foreign, "threads in another mount namespace than the host's %s", want)
}

func foreignThreads(tb testing.TB, want string) []string {
	tb.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	require.NoError(tb, err)
	var out []string
	for _, task := range tasks {
		got, err := os.Readlink("/proc/self/task/" + task.Name() + "/ns/mnt")
		if err == nil && got != want {
			out = append(out, task.Name()+" in "+got)
		}
	}
	return out
}

func readFile(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(name)
	require.NoError(tb, err)
	return string(b)
}

// mountDiff lists the mounts added to the mountinfo text before, and those
// gone although their mountpoint is still there. The kernel drops a mount
// from every namespace when another process deletes its mountpoint, which
// other tests on the machine do with their own mounts.
func mountDiff(before, after string) string {
	var out []string
	for _, l := range strings.Split(lineDiff(before, after), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		if _, err := os.Lstat(f[5]); f[0] == "+" || err == nil {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// lineDiff lists the lines only in a ("-") or only in b ("+").
func lineDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range la {
		if !slices.Contains(lb, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range lb {
		if !slices.Contains(la, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// newMounts lists the container's mounts that are not in before, by
// mountpoint.
func newMounts(before, after []*mountinfo.Info) []string {
	seen := map[int]bool{}
	for _, m := range before {
		seen[m.ID] = true
	}
	var out []string
	for _, m := range after {
		if !seen[m.ID] {
			out = append(out, m.Mountpoint)
		}
	}
	return out
}

// inPrivateNS re-runs the calling top-level test in a private copy of the
// mount namespace (container.InPrivateMountNS) and reports whether the
// caller is that child: its mount table then changes only through the
// child itself, so "the host's mount table is unchanged" is exact.
func inPrivateNS(t *testing.T) bool { return container.InPrivateMountNS(t) }
