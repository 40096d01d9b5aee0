package cgroup

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// v1Cgroup makes a default-deny devices cgroup that allows c 1:3 (as a
// runtime would), with an opener process in it.
func v1Cgroup(t *testing.T) (string, *opener) {
	t.Helper()
	dir := newCgroup(t, v1DevicesMount(t))
	writeControl(t, dir, "devices.deny", "a")
	writeControl(t, dir, "devices.allow", "c 1:3 rwm")
	o := startOpener(t)
	join(t, dir, o.pid())
	return dir, o
}

func TestAllowV1(t *testing.T) {
	dir, o := v1Cgroup(t)
	nodes := deviceNodes(t)
	before := map[string]string{"null": "ok", "random": "EPERM", "nvidia0": "EPERM"}
	o.expectOpen(t, "before", nodes, before)

	c, err := Open(o.pid(), nil)
	require.NoError(t, err)
	require.Equal(t, V1, c.Version(), "Open(%d): version", o.pid())
	require.Equal(t, dir, c.Path(), "Open(%d): path", o.pid())
	undo, err := c.Allow([]Rule{{Major: 195, Minor: 255}})
	require.NoError(t, err)
	o.expectOpen(t, "after Allow", nodes, map[string]string{"null": "ok", "random": "EPERM", "nvidia0": "ENXIO"})
	assert.Contains(t, readControl(t, dir, "devices.list"), "c 195:255 rw\n", "devices.list after Allow")
	require.NoError(t, c.Close()) // undo must not depend on c
	require.NoError(t, undo())
	assert.NoError(t, undo(), "a second undo, want the first one's nil")
	o.expectOpen(t, "after undo", nodes, before)
	assert.Equal(t, "c 1:3 rwm\n", readControl(t, dir, "devices.list"), "devices.list after undo, want only c 1:3 rwm")
}

// TestAllowV1KeepsExisting: what was allowed before Allow stays allowed after
// undo, whether it covered the rule (wildcard) or only part of it.
func TestAllowV1KeepsExisting(t *testing.T) {
	for _, tc := range []struct {
		name, existing string
		rule           Rule
		during, after  string // devices.list
	}{
		{"covered by wildcard", "c 195:* rwm", Rule{Major: 195, Minor: 255},
			"c 1:3 rwm\nc 195:* rwm\n", "c 1:3 rwm\nc 195:* rwm\n"},
		{"partly allowed", "c 195:255 r", Rule{Major: 195, Minor: 255},
			"c 1:3 rwm\nc 195:255 rw\n", "c 1:3 rwm\nc 195:255 r\n"},
		{"wildcard lacks write", "c 195:* r", Rule{Major: 195, Minor: 255, Access: "wr"},
			"c 1:3 rwm\nc 195:* r\nc 195:255 rw\n", "c 1:3 rwm\nc 195:* r\n"},
		{"already allowed", "c 1:3 rwm", Rule{Major: 1, Minor: 3, Access: "m"},
			"c 1:3 rwm\n", "c 1:3 rwm\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := v1Cgroup(t)
			writeControl(t, dir, "devices.allow", tc.existing)
			c, err := OpenPath(dir)
			require.NoError(t, err)
			defer c.Close()
			undo, err := c.Allow([]Rule{tc.rule})
			require.NoError(t, err)
			assert.Equal(t, tc.during, readControl(t, dir, "devices.list"), "devices.list after Allow")
			require.NoError(t, undo())
			assert.Equal(t, tc.after, readControl(t, dir, "devices.list"), "devices.list after undo")
		})
	}
}

// TestAllowV1ParentDenies: the kernel refuses more than the parent has; the
// error names the path and the rule, and the rules written before the
// failing one are taken back.
func TestAllowV1ParentDenies(t *testing.T) {
	parent, _ := v1Cgroup(t)
	writeControl(t, parent, "devices.allow", "c 195:0 rw")
	child := newCgroup(t, parent)
	writeControl(t, child, "devices.deny", "a")
	c, err := OpenPath(child)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Allow([]Rule{{Major: 195, Minor: 0}, {Major: 195, Minor: 255}})
	require.Error(t, err, "Allow beyond the parent's rules succeeded")
	for _, want := range []string{child, "c 195:255 rw", "devices.allow"} {
		assert.ErrorContains(t, err, want, "error does not name %q", want)
	}
	assert.Empty(t, readControl(t, child, "devices.list"), "devices.list after the failed Allow, want empty (rolled back)")
}

// TestAllowV1DefaultAllow: a default-allow cgroup (privileged container) is
// left alone.
func TestAllowV1DefaultAllow(t *testing.T) {
	dir := newCgroup(t, v1DevicesMount(t))
	c, err := OpenPath(dir)
	require.NoError(t, err)
	defer c.Close()
	undo, err := c.Allow([]Rule{{Major: 195, Minor: 255}})
	require.NoError(t, err)
	require.NoError(t, undo())
	assert.Equal(t, "a *:* rwm\n", readControl(t, dir, "devices.list"), "devices.list")
}

func TestOpenPathRejects(t *testing.T) {
	mnt := v1DevicesMount(t)
	cpu := filepath.Join(filepath.Dir(mnt), "cpu")
	for _, tc := range []struct{ name, path string }{{"plain dir", t.TempDir()}, {"missing", filepath.Join(t.TempDir(), "none")}, {"cpu hierarchy", cpu}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenPath(tc.path)
			assert.ErrorIs(t, err, ErrNotFound, "OpenPath(%s)", tc.path)
		})
	}
}
