package devices_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

// nodeSpec is what a created node must be: major, minor, permission bits,
// group.
type nodeSpec struct{ major, minor, mode, gid uint32 }

// checkNodes fails t unless every node of want is a real character device
// with that number, mode and owner 0:gid under dev.
func checkNodes(t *testing.T, dev string, want map[string]nodeSpec) {
	t.Helper()
	for p, w := range want {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dev, p), &st); err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		got := nodeSpec{unix.Major(st.Rdev), unix.Minor(st.Rdev), st.Mode & 0o7777, st.Gid}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR || got != w || st.Uid != 0 {
			t.Errorf("%s: mode %o rdev %d:%d uid %d gid %d; want char %+v", p, st.Mode, got.major, got.minor, st.Uid, st.Gid, w)
		}
	}
}

func paths(nodes []devices.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Path)
	}
	sort.Strings(out)
	return out
}

// allNodes is what CreateNodes must make for a DGX A100 with GPU 1 holding
// GI 1 (3g) and GI 11 (1g) and IMEX channels 0 and 7 asked for.
func allNodes() map[string]nodeSpec {
	want := map[string]nodeSpec{
		"nvidiactl": {195, 255, 0o666, 0}, "nvidia-modeset": {195, 254, 0o666, 0},
		"nvidia-uvm": {510, 0, 0o666, 0}, "nvidia-uvm-tools": {510, 1, 0o666, 0},
		"nvidia-caps-imex-channels/channel0": {234, 0, 0o666, 0}, "nvidia-caps-imex-channels/channel7": {234, 7, 0o666, 0},
		"nvidia-caps/nvidia-cap1": {511, 1, 0o400, 0}, "nvidia-caps/nvidia-cap2": {511, 2, 0o444, 0},
		"nvidia-caps/nvidia-cap147": {511, 147, 0o444, 0}, "nvidia-caps/nvidia-cap148": {511, 148, 0o444, 0},
		"nvidia-caps/nvidia-cap237": {511, 237, 0o444, 0}, "nvidia-caps/nvidia-cap238": {511, 238, 0o444, 0},
	}
	for i := range uint32(8) {
		want["nvidia"+uitoa(i)] = nodeSpec{195, i, 0o666, 0}
	}
	return want
}

func uitoa(i uint32) string { return string(rune('0' + i)) }

func migHost(t *testing.T) *fakehost.Host {
	return genHost(t, &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}}})
}

func TestCreateNodes(t *testing.T) {
	testutil.RequireRoot(t)
	h := migHost(t)
	dev := t.TempDir()
	opts := &devices.NodeOptions{ProcRoot: h.ProcRoot, DevRoot: dev, IMEXChannels: []uint32{0, 7}}
	r, err := devices.CreateNodes(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := allNodes()
	checkNodes(t, dev, want)
	if len(r.Created) != len(want) || len(r.Fixed) != 0 || r.Skipped != "" || len(r.Warnings) != 0 {
		t.Errorf("report: %d created (want %d), fixed %v, skipped %q, warnings %v", len(r.Created), len(want), r.Fixed, r.Skipped, r.Warnings)
	}
	// Idempotent: a second run changes nothing.
	if r, err = devices.CreateNodes(t.Context(), opts); err != nil || len(r.Created)+len(r.Fixed) != 0 {
		t.Errorf("second run: %v, created %v fixed %v", err, r.Created, r.Fixed)
	}
	// Wrong mode is fixed; a file, a wrong number or a symlink in a node's
	// place is replaced (the symlink's target is left alone).
	must(t, os.Chmod(filepath.Join(dev, "nvidia0"), 0o600))
	must(t, os.Remove(filepath.Join(dev, "nvidia3")))
	must(t, os.WriteFile(filepath.Join(dev, "nvidia3"), nil, 0o644))
	must(t, os.Remove(filepath.Join(dev, "nvidia-uvm")))
	must(t, unix.Mknod(filepath.Join(dev, "nvidia-uvm"), unix.S_IFCHR|0o666, int(unix.Mkdev(510, 9))))
	target := filepath.Join(t.TempDir(), "target")
	must(t, os.WriteFile(target, []byte("keep"), 0o644))
	must(t, os.Remove(filepath.Join(dev, "nvidia5")))
	must(t, os.Symlink(target, filepath.Join(dev, "nvidia5")))
	r, err = devices.CreateNodes(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	checkNodes(t, dev, want)
	if got := paths(r.Created); !reflect.DeepEqual(got, []string{"/dev/nvidia-uvm", "/dev/nvidia3", "/dev/nvidia5"}) {
		t.Errorf("recreated %v", got)
	}
	if got := paths(r.Fixed); !reflect.DeepEqual(got, []string{"/dev/nvidia0"}) {
		t.Errorf("fixed %v", got)
	}
	if data, _ := os.ReadFile(target); string(data) != "keep" {
		t.Errorf("symlink target changed: %q", data)
	}
}

// TestCreateNodesParams checks that /proc/driver/nvidia/params sets mode and
// group of the nvidia nodes (not of nvidia-uvm, which nvidia-modprobe makes
// with defaults, nor of capabilities, which have their own files), and that
// ModifyDeviceFiles 0 and DeviceFileModify 0 leave nodes alone.
func TestCreateNodesParams(t *testing.T) {
	testutil.RequireRoot(t)
	h := migHost(t)
	params := h.ProcRoot + "/driver/nvidia/params"
	editFile(t, params, "DeviceFileGID: 0\n", "DeviceFileGID: 44\n")
	editFile(t, params, "DeviceFileMode: 438\n", "DeviceFileMode: 432\n")
	dev := t.TempDir()
	opts := &devices.NodeOptions{ProcRoot: h.ProcRoot, DevRoot: dev, IMEXChannels: []uint32{1}}
	if _, err := devices.CreateNodes(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	checkNodes(t, dev, map[string]nodeSpec{
		"nvidiactl": {195, 255, 0o660, 44}, "nvidia2": {195, 2, 0o660, 44}, "nvidia-modeset": {195, 254, 0o660, 44},
		"nvidia-caps-imex-channels/channel1": {234, 1, 0o660, 44},
		"nvidia-uvm":                         {510, 0, 0o666, 0}, "nvidia-caps/nvidia-cap147": {511, 147, 0o444, 0},
	})

	editFile(t, params, "ModifyDeviceFiles: 1\n", "ModifyDeviceFiles: 0\n")
	editFile(t, h.ProcRoot+"/driver/nvidia/capabilities/gpu1/mig/gi11/access", "DeviceFileModify: 1", "DeviceFileModify: 0")
	dev = t.TempDir()
	opts.DevRoot = dev
	r, err := devices.CreateNodes(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/dev/nvidia-caps/nvidia-cap1", "/dev/nvidia-caps/nvidia-cap147", "/dev/nvidia-caps/nvidia-cap148",
		"/dev/nvidia-caps/nvidia-cap2", "/dev/nvidia-caps/nvidia-cap238", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}
	if got := paths(r.Created); !reflect.DeepEqual(got, want) {
		t.Errorf("with ModifyDeviceFiles 0 created %v, want %v", got, want)
	}
}

// TestCreatedNodesOpen has the kernel resolve nodes CreateNodes made: with
// /proc/devices claiming IMEX channels live on major 1 (mem), channel 3 is
// /dev/null and channel 5 /dev/zero, and they behave so.
func TestCreatedNodesOpen(t *testing.T) {
	testutil.RequireRoot(t)
	h := migHost(t)
	editFile(t, h.ProcRoot+"/devices", "234 nvidia-caps-imex-channels\n", "  1 nvidia-caps-imex-channels\n")
	dev := t.TempDir()
	if _, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{ProcRoot: h.ProcRoot, DevRoot: dev, IMEXChannels: []uint32{3, 5}}); err != nil {
		t.Fatal(err)
	}
	null, err := os.OpenFile(filepath.Join(dev, "nvidia-caps-imex-channels/channel3"), os.O_RDWR, 0)
	must(t, err)
	defer null.Close()
	if n, err := null.Write([]byte("discarded")); n != 9 || err != nil {
		t.Errorf("write to null: %d, %v", n, err)
	}
	f, err := os.Open(filepath.Join(dev, "nvidia-caps-imex-channels/channel5"))
	must(t, err)
	defer f.Close()
	buf := []byte{1, 2, 3, 4}
	if _, err := f.Read(buf); err != nil || !bytes.Equal(buf, make([]byte, 4)) {
		t.Errorf("read from zero: %v %v", buf, err)
	}
}

// TestCreateNodesModprobe runs a stand-in modprobe that "loads" a module by
// adding it to the fake /proc/modules, and checks the missing-modprobe and
// failing-modprobe cases are warnings.
func TestCreateNodesModprobe(t *testing.T) {
	testutil.RequireRoot(t)
	h := migHost(t)
	modules := h.ProcRoot + "/modules"
	must(t, os.Remove(modules))
	script := filepath.Join(t.TempDir(), "modprobe")
	must(t, os.WriteFile(script, []byte("#!/bin/sh\n[ \"$1\" = nvidia_modeset ] && [ -e \"$0.fail\" ] && { echo \"FATAL: Module $1 not found\"; exit 1; }\necho \"$1 1 0 - Live 0x0 (PO)\" >> "+modules+"\n"), 0o755))

	// Missing modprobe: nodes for what is there, no modeset, a warning.
	opts := &devices.NodeOptions{ProcRoot: h.ProcRoot, DevRoot: t.TempDir(), LoadModules: true, Modprobe: script + ".missing"}
	r, err := devices.CreateNodes(t.Context(), opts)
	if err != nil || len(r.Loaded) != 0 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "modprobe unavailable") {
		t.Errorf("missing modprobe: %v, %+v", err, r)
	}
	if _, err := os.Lstat(filepath.Join(opts.DevRoot, "nvidia-modeset")); !os.IsNotExist(err) {
		t.Errorf("nvidia-modeset made without its module: %v", err)
	}

	// A failing modprobe for nvidia_modeset, found through sys/kernel/modprobe.
	must(t, os.WriteFile(script+".fail", nil, 0o644))
	must(t, os.MkdirAll(h.ProcRoot+"/sys/kernel", 0o755))
	must(t, os.WriteFile(h.ProcRoot+"/sys/kernel/modprobe", []byte(script+"\n"), 0o644))
	opts.Modprobe = ""
	r, err = devices.CreateNodes(t.Context(), opts)
	if err != nil || !reflect.DeepEqual(r.Loaded, []string{"nvidia", "nvidia_uvm"}) || len(r.Warnings) != 1 ||
		!strings.Contains(r.Warnings[0], "FATAL: Module nvidia_modeset not found") {
		t.Errorf("failing modprobe: %v, %+v", err, r)
	}

	must(t, os.Remove(script+".fail"))
	opts.DevRoot = t.TempDir()
	r, err = devices.CreateNodes(t.Context(), opts)
	if err != nil || !reflect.DeepEqual(r.Loaded, []string{"nvidia_modeset"}) || len(r.Warnings) != 0 {
		t.Errorf("working modprobe: %v, %+v", err, r)
	}
	checkNodes(t, opts.DevRoot, map[string]nodeSpec{"nvidia-modeset": {195, 254, 0o666, 0}})
}

// TestCreateNodesUserNamespace needs no privilege: in a user namespace
// nothing is attempted.
func TestCreateNodesUserNamespace(t *testing.T) {
	for file, content := range map[string]string{"uid_map": "         0     100000      65536\n", "gid_map": "0 0 1\n", "setgroups": "deny\n"} {
		h := migHost(t)
		must(t, os.MkdirAll(h.ProcRoot+"/self", 0o755))
		must(t, os.WriteFile(h.ProcRoot+"/self/uid_map", []byte("0 0 4294967295\n"), 0o644))
		must(t, os.WriteFile(h.ProcRoot+"/self/"+file, []byte(content), 0o644))
		dev := t.TempDir()
		r, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{ProcRoot: h.ProcRoot, DevRoot: dev})
		ents, _ := os.ReadDir(dev)
		if err != nil || !strings.Contains(r.Skipped, "user namespace") || len(ents) != 0 {
			t.Errorf("%s %q: %v, %+v, %d entries", file, content, err, r, len(ents))
		}
	}
}

// TestCreateNodesDriverRoot checks --load-kmods under a driver root: modprobe
// (a busybox script that exists only inside the root) runs chrooted into it
// and "loads" each module by adding it to the root's proc/modules, and with
// DevRoot empty the nodes are made in the root's dev directory.
func TestCreateNodesDriverRoot(t *testing.T) {
	testutil.RequireRoot(t)
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		testutil.Unavailable(t, "needs a static busybox at /bin/busybox: %v", err)
	}
	h := migHost(t)
	must(t, os.Remove(h.ProcRoot+"/modules"))
	must(t, os.MkdirAll(h.Root+"/bin", 0o755))
	must(t, os.WriteFile(h.Root+"/bin/busybox", bb, 0o755))
	must(t, os.MkdirAll(h.Root+"/nvc-test", 0o755))
	script := "#!/bin/busybox sh\necho \"$1 1 0 - Live 0x0 (PO)\" >> /proc/modules\necho \"$1\" >> /nvc-test/ran\n"
	must(t, os.WriteFile(h.Root+"/nvc-test/modprobe", []byte(script), 0o755))

	opts := &devices.NodeOptions{DriverRoot: h.Root, ProcRoot: h.ProcRoot, LoadModules: true, Modprobe: "/nvc-test/modprobe"}
	r, err := devices.CreateNodes(t.Context(), opts)
	if err != nil || !reflect.DeepEqual(r.Loaded, []string{"nvidia", "nvidia_uvm", "nvidia_modeset"}) || len(r.Warnings) != 0 {
		t.Fatalf("CreateNodes: %v, %+v", err, r)
	}
	if ran, _ := os.ReadFile(h.Root + "/nvc-test/ran"); string(ran) != "nvidia\nnvidia_uvm\nnvidia_modeset\n" {
		t.Errorf("modprobe inside the root ran for %q", ran)
	}
	checkNodes(t, h.Root+"/dev", map[string]nodeSpec{
		"nvidiactl": {195, 255, 0o666, 0}, "nvidia3": {195, 3, 0o666, 0}, "nvidia-modeset": {195, 254, 0o666, 0},
	})
}

// TestCreateNodesIMEXLimit checks that IMEX channels at or above the
// driver's channel count (ImexChannelCount in params), or more channels
// than it, are refused before any node is made.
func TestCreateNodesIMEXLimit(t *testing.T) {
	testutil.RequireRoot(t)
	h := migHost(t)
	many := make([]uint32, 2049)
	for i := range many {
		many[i] = uint32(i % 2048)
	}
	for _, ids := range [][]uint32{{2048}, {0, 1 << 19}, many} {
		dev := t.TempDir()
		_, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{ProcRoot: h.ProcRoot, DevRoot: dev, IMEXChannels: ids})
		if ents, _ := os.ReadDir(dev); !errors.Is(err, devices.ErrInvalid) || len(ents) != 0 {
			t.Errorf("%d channels up to %d: %v, %d entries made", len(ids), slices.Max(ids), err, len(ents))
		}
	}
	editFile(t, h.ProcRoot+"/driver/nvidia/params", "ImexChannelCount: 2048\n", "ImexChannelCount: 4\n")
	dev := t.TempDir()
	if _, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{ProcRoot: h.ProcRoot, DevRoot: dev, IMEXChannels: []uint32{4}}); !errors.Is(err, devices.ErrInvalid) {
		t.Errorf("channel 4 of 4: %v", err)
	}
	if _, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{ProcRoot: h.ProcRoot, DevRoot: dev, IMEXChannels: []uint32{3}}); err != nil {
		t.Fatal(err)
	}
	checkNodes(t, dev, map[string]nodeSpec{"nvidia-caps-imex-channels/channel3": {234, 3, 0o666, 0}})
}

// TestCreateNodesParamsNotRegular: a params file that is a FIFO or a
// character device is refused with an error naming it, before any node
// is made, and is never opened: a reader of the FIFO would block for
// ever (the old os.ReadFile did), and no reader ever had it open (its
// write end cannot be opened non-blocking).
func TestCreateNodesParamsNotRegular(t *testing.T) {
	testutil.RequireRoot(t)
	for _, kind := range []string{"fifo", "char"} {
		t.Run(kind, func(t *testing.T) {
			h := migHost(t)
			params := h.ProcRoot + "/driver/nvidia/params"
			if err := os.Remove(params); err != nil {
				t.Fatal(err)
			}
			spec := "fifo driver/nvidia/params"
			if kind == "char" {
				spec = "char driver/nvidia/params 1 3"
			}
			testutil.BuildTree(t, h.ProcRoot, spec)
			dev := t.TempDir()
			done := make(chan error, 1)
			go func() {
				_, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{ProcRoot: h.ProcRoot, DevRoot: dev})
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				if kind == "fifo" { // unblock the reader
					if fd, err := unix.Open(params, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
						unix.Close(fd)
					}
				}
				t.Fatalf("CreateNodes blocked on the %s params", kind)
			}
			if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), params) {
				t.Errorf("CreateNodes: %v, want a not-a-regular-file error naming %s", err, params)
			}
			if ents, _ := os.ReadDir(dev); len(ents) != 0 {
				t.Errorf("%d entries made", len(ents))
			}
			if kind == "fifo" {
				if _, err := unix.Open(params, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err != unix.ENXIO {
					t.Errorf("opening the FIFO's write end: %v, want ENXIO (no reader)", err)
				}
			}
		})
	}
}

// TestCreateNodesModprobeBounded: a modprobe that hangs is killed after
// ModprobeTimeout (a warning, as a failing one), and a done context ends
// CreateNodes with its error.
func TestCreateNodesModprobeBounded(t *testing.T) {
	testutil.RequireRoot(t)
	h := migHost(t)
	must(t, os.Remove(h.ProcRoot+"/modules"))
	script := filepath.Join(t.TempDir(), "modprobe")
	must(t, os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755))
	opts := &devices.NodeOptions{ProcRoot: h.ProcRoot, DevRoot: t.TempDir(), LoadModules: true, Modprobe: script,
		ModprobeTimeout: 100 * time.Millisecond}
	start := time.Now()
	r, err := devices.CreateNodes(t.Context(), opts)
	if took := time.Since(start); err != nil || len(r.Warnings) != 3 || took > 20*time.Second ||
		!strings.Contains(r.Warnings[0], "deadline exceeded") {
		t.Errorf("hanging modprobe: %v after %v, %+v", err, took, r)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	opts.ModprobeTimeout = 0
	start = time.Now()
	if _, err := devices.CreateNodes(ctx, opts); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 20*time.Second {
		t.Errorf("hanging modprobe, context done: %v after %v", err, time.Since(start))
	}
}
