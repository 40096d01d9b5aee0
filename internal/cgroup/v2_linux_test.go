package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/opencontainers/cgroups"
	_ "github.com/opencontainers/cgroups/devices" // sets cgroups.DevicesSetV2
	devconfig "github.com/opencontainers/cgroups/devices/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
)

// runcRules is what an "existing container" allows: c 1:3 and c 1:5 rwm,
// every other device denied.
var runcRules = []*devconfig.Rule{
	{Type: 'c', Major: 1, Minor: 3, Permissions: "rwm", Allow: true},
	{Type: 'c', Major: 1, Minor: 5, Permissions: "rwm", Allow: true},
}

// attachRunc attaches the device program opencontainers/cgroups (runc's
// library) generates for rules, as runc does for a container, and returns
// the IDs attached to dir afterwards.
func attachRunc(t testing.TB, dir string, rules []*devconfig.Rule) []uint32 {
	t.Helper()
	if err := cgroups.DevicesSetV2(dir, &cgroups.Resources{Devices: rules}); err != nil {
		testutil.RequireKernel(t, "BPF_CGROUP_DEVICE programs (opencontainers/cgroups DevicesSetV2)", err)
	}
	return attachedIDs(t, dir)
}

func attachedIDs(t testing.TB, dir string) []uint32 {
	t.Helper()
	f, err := os.Open(dir)
	require.NoError(t, err)
	defer f.Close()
	_, ids, err := attachedDevicePrograms(int(f.Fd()))
	require.NoError(t, err)
	return ids
}

// v2Cgroup makes a cgroup2 child with runc's program for runcRules attached
// and an opener process in it.
func v2Cgroup(t *testing.T) (string, *opener, []uint32) {
	t.Helper()
	dir := newCgroup(t, v2Mount(t))
	ids := attachRunc(t, dir, runcRules)
	o := startOpener(t)
	join(t, dir, o.pid())
	return dir, o, ids
}

func openV2(t *testing.T, dir string) *Cgroup {
	t.Helper()
	c, err := OpenPath(dir)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.Equal(t, V2, c.Version(), "OpenPath(%s).Version()", dir)
	return c
}

func mustAllow(t *testing.T, c *Cgroup, rules ...Rule) func() error {
	t.Helper()
	undo, err := c.Allow(rules)
	require.NoError(t, err)
	return undo
}

func mustUndo(t *testing.T, undo func() error) {
	t.Helper()
	require.NoError(t, undo())
}

func TestAllowV2(t *testing.T) {
	dir, o, orig := v2Cgroup(t)
	nodes := deviceNodes(t)
	before := map[string]string{"null": "ok", "zero": "ok", "random": "EPERM", "nvidia0": "EPERM"}
	o.expectOpen(t, "before", nodes, before)

	c := openV2(t, dir)
	undo1 := mustAllow(t, c, Rule{Major: 195, Minor: 255})
	o.expectOpen(t, "after Allow(c 195:255)", nodes, map[string]string{"null": "ok", "zero": "ok", "random": "EPERM", "nvidia0": "ENXIO"})
	got := attachedIDs(t, dir)
	assert.Len(t, got, 1, "programs after Allow")
	assert.NotEqual(t, orig, got, "programs after Allow, want one other than the original")

	undo2 := mustAllow(t, c, Rule{Major: 1, Minor: 8})
	o.expectOpen(t, "after a second Allow(c 1:8)", nodes, map[string]string{"null": "ok", "zero": "ok", "random": "ok", "nvidia0": "ENXIO"})

	c.Close() // the undo functions must not depend on c
	mustUndo(t, undo2)
	o.expectOpen(t, "after the second undo", nodes, map[string]string{"null": "ok", "zero": "ok", "random": "EPERM", "nvidia0": "ENXIO"})
	mustUndo(t, undo1)
	o.expectOpen(t, "after the first undo", nodes, before)
	assert.Equal(t, orig, attachedIDs(t, dir), "programs after undo, want the original")
}

// programByID opens an attached program for the test to move around.
func programByID(t *testing.T, id uint32) *program {
	t.Helper()
	p, err := openProgram(id)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

func rawAttach(t *testing.T, dir string, p *program, flags uint32) {
	t.Helper()
	f, err := os.Open(dir)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, attachDevice(int(f.Fd()), p, flags, nil), "attaching with flags %#x", flags)
}

func rawDetach(t *testing.T, dir string, p *program) {
	t.Helper()
	f, err := os.Open(dir)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, detachDevice(int(f.Fd()), p))
}

// linkAttach attaches p to dir through a BPF link (BPF_LINK_CREATE, as
// systemd does where it can) and returns the link's descriptor.
func linkAttach(t *testing.T, dir string, p *program) int {
	t.Helper()
	f, err := os.Open(dir)
	require.NoError(t, err)
	defer f.Close()
	attr := struct{ progFd, targetFd, attachType, flags uint32 }{uint32(p.fd), uint32(f.Fd()), unix.BPF_CGROUP_DEVICE, 0}
	fd, err := bpf(unix.BPF_LINK_CREATE, &attr)
	if err != nil {
		testutil.RequireKernel(t, "BPF links for cgroup programs (Linux 5.7)", err)
	}
	return fd
}

// TestAllowV2Exclusive: a program attached without BPF_F_ALLOW_MULTI (the
// cgroup holds only it) is replaced by re-attaching with the same flags.
func TestAllowV2Exclusive(t *testing.T) {
	for _, flags := range []uint32{0, unix.BPF_F_ALLOW_OVERRIDE} {
		t.Run(strconv.Itoa(int(flags)), func(t *testing.T) {
			dir, o, orig := v2Cgroup(t)
			p := programByID(t, orig[0])
			rawDetach(t, dir, p)
			rawAttach(t, dir, p, flags)
			nodes := deviceNodes(t)
			before := map[string]string{"null": "ok", "random": "EPERM", "nvidia0": "EPERM"}
			o.expectOpen(t, "before", nodes, before)

			undo := mustAllow(t, openV2(t, dir), Rule{Major: 195, Minor: 255})
			o.expectOpen(t, "after Allow", nodes, map[string]string{"null": "ok", "random": "EPERM", "nvidia0": "ENXIO"})
			mustUndo(t, undo)
			o.expectOpen(t, "after undo", nodes, before)
			assert.Equal(t, orig, attachedIDs(t, dir), "programs after undo")
		})
	}
}

// TestAllowV2TwoPrograms: with two programs attached (access needs both),
// each is rebuilt and each is restored.
func TestAllowV2TwoPrograms(t *testing.T) {
	dir, o, first := v2Cgroup(t)
	a := programByID(t, first[0])
	attachRunc(t, dir, append(slices.Clone(runcRules), &devconfig.Rule{Type: 'c', Major: 1, Minor: 8, Permissions: "rwm", Allow: true}))
	rawAttach(t, dir, a, unix.BPF_F_ALLOW_MULTI)
	orig := attachedIDs(t, dir)
	require.Len(t, orig, 2, "setting up two programs: attached")
	nodes := deviceNodes(t)
	before := map[string]string{"null": "ok", "random": "EPERM", "nvidia0": "EPERM"}
	o.expectOpen(t, "before", nodes, before)

	undo := mustAllow(t, openV2(t, dir), Rule{Major: 195, Minor: 255}, Rule{Major: 1, Minor: 8, Access: "r"})
	assert.Equal(t, "ENXIO", o.open(t, nodes+"/nvidia0"), "after Allow: opening nvidia0")
	assert.Equal(t, "EPERM", o.open(t, nodes+"/random"), "after Allow of c 1:8 r: opening random read-write (write not granted)")
	assert.Equal(t, "ok", o.open(t, "r "+nodes+"/random"), "after Allow of c 1:8 r: opening random read-only")
	mustUndo(t, undo)
	o.expectOpen(t, "after undo", nodes, before)
	assert.Equal(t, orig, attachedIDs(t, dir), "programs after undo")
}

// TestAllowV2NoProgram: without device programs every device is allowed and
// Allow attaches nothing.
func TestAllowV2NoProgram(t *testing.T) {
	dir := newCgroup(t, v2Mount(t))
	o := startOpener(t)
	join(t, dir, o.pid())
	nodes := deviceNodes(t)
	undo := mustAllow(t, openV2(t, dir), Rule{Major: 195, Minor: 255})
	assert.Empty(t, attachedIDs(t, dir), "programs after Allow")
	o.expectOpen(t, "after Allow", nodes, map[string]string{"random": "ok", "nvidia0": "ENXIO"})
	mustUndo(t, undo)
}

// TestAllowV2Invalid: a bad rule changes nothing.
func TestAllowV2Invalid(t *testing.T) {
	dir, _, orig := v2Cgroup(t)
	_, err := openV2(t, dir).Allow([]Rule{{Major: 195, Minor: 255}, {Type: 'x', Major: 1, Minor: 1}})
	assert.ErrorIs(t, err, ErrInvalid, "Allow with type 'x'")
	assert.Equal(t, orig, attachedIDs(t, dir), "programs after a failed Allow")
}

// setSysctl writes value to /proc/sys/name and restores the old value when t
// ends.
func setSysctl(t *testing.T, name, value string) {
	t.Helper()
	p := filepath.Join("/proc/sys", name)
	old, err := os.ReadFile(p)
	if err != nil {
		testutil.RequireKernel(t, "sysctl "+name, err)
	}
	if err := os.WriteFile(p, []byte(value), 0); err != nil {
		testutil.RequireKernel(t, "writable sysctl "+name, err)
	}
	t.Cleanup(func() {
		assert.NoError(t, os.WriteFile(p, old, 0), "restoring sysctl %s", name)
	})
}

// TestAllowV2Hardened: with net.core.bpf_jit_harden=2 the kernel blinds the
// constants of runc's program (or, with kernel.kptr_restrict=2 as well,
// withholds its instructions). Rebuilding from that stream is what broke
// nvidia-container-cli ("last insn is not an exit or jmp",
// NVIDIA/libnvidia-container#176); Allow must refuse with ErrNotSupported
// and leave the program in place.
func TestAllowV2Hardened(t *testing.T) {
	for _, tc := range []struct {
		name, kptrRestrict, want string
	}{
		{"blinded", "0", "beyond R10"},
		{"withheld", "2", "restricted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testutil.RequireRoot(t)
			setSysctl(t, "net/core/bpf_jit_enable", "1")
			setSysctl(t, "net/core/bpf_jit_harden", "2")
			setSysctl(t, "kernel/kptr_restrict", tc.kptrRestrict)
			dir, o, orig := v2Cgroup(t)
			_, err := openV2(t, dir).Allow([]Rule{{Major: 195, Minor: 255}})
			assert.ErrorIs(t, err, ErrNotSupported, "Allow on a hardened kernel")
			assert.ErrorContains(t, err, tc.want, "Allow on a hardened kernel")
			assert.ErrorContains(t, err, dir, "Allow on a hardened kernel")
			assert.Equal(t, orig, attachedIDs(t, dir), "programs after the refused Allow")
			o.expectOpen(t, "after the refused Allow", deviceNodes(t), map[string]string{"null": "ok", "nvidia0": "EPERM"})
		})
	}
}

// TestAllowV2Link: a program attached through a BPF link cannot be replaced
// with BPF_PROG_ATTACH; Allow fails and leaves it in place.
func TestAllowV2Link(t *testing.T) {
	dir, _, orig := v2Cgroup(t)
	p := programByID(t, orig[0])
	rawDetach(t, dir, p)
	l := linkAttach(t, dir, p)
	defer unix.Close(l)
	_, err := openV2(t, dir).Allow([]Rule{{Major: 195, Minor: 255}})
	assert.ErrorIs(t, err, ErrNotSupported, "Allow with a linked program")
	assert.ErrorContains(t, err, "BPF link", "Allow with a linked program")
	assert.Equal(t, orig, attachedIDs(t, dir), "programs after Allow")
}

// TestAllowV2Again: Allow with rules an earlier Allow added and never took
// back (a configure killed part-way, then run again) keeps the program as
// it is instead of stacking the rules once more, and its undo leaves them.
func TestAllowV2Again(t *testing.T) {
	dir, o, _ := v2Cgroup(t)
	nodes := deviceNodes(t)
	c := openV2(t, dir)
	defer c.Close()
	undo1 := mustAllow(t, c, Rule{Major: 195, Minor: 255})
	after1 := attachedIDs(t, dir)
	undo2 := mustAllow(t, c, Rule{Major: 195, Minor: 255})
	assert.Equal(t, after1, attachedIDs(t, dir), "programs after the same Allow again, want unchanged")
	mustUndo(t, undo2)
	o.expectOpen(t, "after the second undo", nodes, map[string]string{"null": "ok", "zero": "ok", "random": "EPERM", "nvidia0": "ENXIO"})
	mustUndo(t, undo1)
	// Other rules are still added.
	undo3 := mustAllow(t, c, Rule{Major: 1, Minor: 8})
	mustUndo(t, undo3)
}
