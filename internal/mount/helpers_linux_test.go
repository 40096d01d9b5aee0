package mount

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/internal/undo"
)

// hostSpec stands for the host's driver files and procfs.
const hostSpec = `
file usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15 "host libcuda"
file proc/driver/nvidia/gpus/0000:01:00.0/information "Model: Test GPU\n"
`

var methods = []Method{NewAPI, Legacy}

// attachers are the ways onto a rootfs entry: by its directory and name
// (Attach), or through its own descriptor (AttachEntry), each also through
// a Thread checked once.
var attachers = []struct {
	name string
	fn   func(*Source, *rootfs.Entry) (*Mount, error)
}{
	{"by name", func(s *Source, e *rootfs.Entry) (*Mount, error) { return s.Attach(e.Dir(), e.Name()) }},
	{"by entry", (*Source).AttachEntry},
	{"by name, thread checked once", func(s *Source, e *rootfs.Entry) (*Mount, error) {
		th, err := ConfinedThread()
		if err != nil {
			return nil, err
		}
		return th.Attach(s, e.Dir(), e.Name())
	}},
	{"by entry, thread checked once", func(s *Source, e *rootfs.Entry) (*Mount, error) {
		th, err := ConfinedThread()
		if err != nil {
			return nil, err
		}
		return th.AttachEntry(s, e)
	}},
}

// ctr is a running test container and a way into it.
type ctr struct {
	*container.Container
	ns   *ns.Namespace
	undo undo.Stack
	via  func(*Source, *rootfs.Entry) (*Mount, error) // nil: by name
}

func startCtr(t testing.TB, opts *container.Options) *ctr {
	t.Helper()
	c := &ctr{Container: container.Start(t, opts)}
	var err error
	c.ns, err = ns.OpenPID("", c.PID)
	require.NoError(t, err)
	t.Cleanup(func() { c.ns.Close() })
	return c
}

// run calls fn in the container's namespace with its rootfs open.
func (c *ctr) run(t testing.TB, fn func(r *rootfs.Root) error) error {
	t.Helper()
	return c.ns.Run(func() error {
		r, err := rootfs.Open(c.Rootfs, &rootfs.Options{Undo: &c.undo})
		if err != nil {
			return err
		}
		defer r.Close()
		return fn(r)
	})
}

// attach creates a placeholder fitting src at unsafePath and attaches src.
func (c *ctr) attach(t testing.TB, src *Source, unsafePath string) (*Mount, error) {
	t.Helper()
	var m *Mount
	err := c.run(t, func(r *rootfs.Root) error {
		var e *rootfs.Entry
		var err error
		if src.IsDir() {
			e, err = r.MkdirAll(unsafePath, 0o755)
		} else {
			e, err = r.CreateFile(unsafePath, 0o644)
		}
		if err != nil {
			return err
		}
		defer e.Close()
		via := c.via
		if via == nil {
			via = attachers[0].fn
		}
		m, err = via(src, e)
		return err
	})
	return m, err
}

func (c *ctr) detach(t testing.TB, m *Mount) error {
	t.Helper()
	return c.ns.Run(m.Detach)
}

// options is the per-mount option list of what the container has
// mounted at p, or nil.
func (c *ctr) options(t testing.TB, p string) []string {
	t.Helper()
	m := c.MountAt(t, p)
	if m == nil {
		return nil
	}
	return strings.Split(m.Options, ",")
}

func wantOptions(t testing.TB, got []string, want ...string) {
	t.Helper()
	if !assert.NotNil(t, got, "nothing mounted") {
		return
	}
	for _, w := range want {
		assert.Contains(t, got, w, "mount options %q", got)
	}
}

func hostMounts(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	return string(data)
}

func hostTree(t testing.TB) string {
	t.Helper()
	testutil.RequireRoot(t)
	return testutil.Tree(t, hostSpec)
}

func openSource(t testing.TB, path string, attr Attr, m Method) *Source {
	t.Helper()
	s, err := OpenSource(path, attr, &Options{Method: m})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}
