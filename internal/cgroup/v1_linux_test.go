package cgroup

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
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
	if err != nil {
		t.Fatal(err)
	}
	if c.Version() != V1 || c.Path() != dir {
		t.Fatalf("Open(%d) = %s %s, want v1 %s", o.pid(), c.Version(), c.Path(), dir)
	}
	undo, err := c.Allow([]Rule{{Major: 195, Minor: 255}})
	if err != nil {
		t.Fatal(err)
	}
	o.expectOpen(t, "after Allow", nodes, map[string]string{"null": "ok", "random": "EPERM", "nvidia0": "ENXIO"})
	if list := readControl(t, dir, "devices.list"); !strings.Contains(list, "c 195:255 rw\n") {
		t.Errorf("devices.list after Allow lacks c 195:255 rw:\n%s", list)
	}
	if err := c.Close(); err != nil { // undo must not depend on c
		t.Fatal(err)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if err := undo(); err != nil {
		t.Errorf("a second undo: %v, want the first one's nil", err)
	}
	o.expectOpen(t, "after undo", nodes, before)
	if list := readControl(t, dir, "devices.list"); list != "c 1:3 rwm\n" {
		t.Errorf("devices.list after undo = %q, want only c 1:3 rwm", list)
	}
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
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			undo, err := c.Allow([]Rule{tc.rule})
			if err != nil {
				t.Fatal(err)
			}
			if got := readControl(t, dir, "devices.list"); got != tc.during {
				t.Errorf("devices.list after Allow = %q, want %q", got, tc.during)
			}
			if err := undo(); err != nil {
				t.Fatal(err)
			}
			if got := readControl(t, dir, "devices.list"); got != tc.after {
				t.Errorf("devices.list after undo = %q, want %q", got, tc.after)
			}
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
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Allow([]Rule{{Major: 195, Minor: 0}, {Major: 195, Minor: 255}})
	if err == nil {
		t.Fatal("Allow beyond the parent's rules succeeded")
	}
	for _, want := range []string{child, "c 195:255 rw", "devices.allow"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if got := readControl(t, child, "devices.list"); got != "" {
		t.Errorf("devices.list after the failed Allow = %q, want empty (rolled back)", got)
	}
}

// TestAllowV1DefaultAllow: a default-allow cgroup (privileged container) is
// left alone.
func TestAllowV1DefaultAllow(t *testing.T) {
	dir := newCgroup(t, v1DevicesMount(t))
	c, err := OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	undo, err := c.Allow([]Rule{{Major: 195, Minor: 255}})
	if err != nil {
		t.Fatal(err)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if got := readControl(t, dir, "devices.list"); got != "a *:* rwm\n" {
		t.Errorf("devices.list = %q, want a *:* rwm", got)
	}
}

func TestOpenPathRejects(t *testing.T) {
	mnt := v1DevicesMount(t)
	cpu := filepath.Join(filepath.Dir(mnt), "cpu")
	for _, tc := range []struct{ path string }{{t.TempDir()}, {filepath.Join(t.TempDir(), "none")}, {cpu}} {
		if _, err := OpenPath(tc.path); !errors.Is(err, ErrNotFound) {
			t.Errorf("OpenPath(%s) error = %v, want ErrNotFound", tc.path, err)
		}
	}
}
