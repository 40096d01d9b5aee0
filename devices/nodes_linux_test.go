package devices_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
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
		if !assert.NoError(t, unix.Lstat(filepath.Join(dev, p), &st), p) {
			continue
		}
		got := nodeSpec{unix.Major(st.Rdev), unix.Minor(st.Rdev), st.Mode & 0o7777, st.Gid}
		assert.Equal(t, uint32(unix.S_IFCHR), st.Mode&unix.S_IFMT, "%s: mode %o; want a char device", p, st.Mode)
		assert.Equal(t, w, got, "%s: rdev, mode, gid", p)
		assert.Zero(t, st.Uid, "%s: uid", p)
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
	opts := &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}, IMEXChannels: []uint32{0, 7}}
	r, err := devices.CreateNodes(t.Context(), opts)
	require.NoError(t, err)
	want := allNodes()
	checkNodes(t, dev, want)
	assert.Len(t, r.Created, len(want), "report: created")
	assert.Empty(t, r.Fixed, "report: fixed")
	assert.Empty(t, r.Skipped, "report: skipped")
	assert.Empty(t, r.Warnings, "report: warnings")
	// Idempotent: a second run changes nothing.
	r, err = devices.CreateNodes(t.Context(), opts)
	require.NoError(t, err, "second run")
	assert.Empty(t, r.Created, "second run: created")
	assert.Empty(t, r.Fixed, "second run: fixed")
	// Wrong mode is fixed; a file, a wrong number or a symlink in a node's
	// place is replaced (the symlink's target is left alone).
	require.NoError(t, os.Chmod(filepath.Join(dev, "nvidia0"), 0o600))
	require.NoError(t, os.Remove(filepath.Join(dev, "nvidia3")))
	require.NoError(t, os.WriteFile(filepath.Join(dev, "nvidia3"), nil, 0o644))
	require.NoError(t, os.Remove(filepath.Join(dev, "nvidia-uvm")))
	require.NoError(t, unix.Mknod(filepath.Join(dev, "nvidia-uvm"), unix.S_IFCHR|0o666, int(unix.Mkdev(510, 9))))
	target := filepath.Join(t.TempDir(), "target")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dev, "nvidia5")))
	require.NoError(t, os.Symlink(target, filepath.Join(dev, "nvidia5")))
	r, err = devices.CreateNodes(t.Context(), opts)
	require.NoError(t, err)
	checkNodes(t, dev, want)
	assert.Equal(t, []string{"/dev/nvidia-uvm", "/dev/nvidia3", "/dev/nvidia5"}, paths(r.Created), "recreated")
	assert.Equal(t, []string{"/dev/nvidia0"}, paths(r.Fixed), "fixed")
	data, _ := os.ReadFile(target)
	assert.Equal(t, "keep", string(data), "symlink target changed")
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
	opts := &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}, IMEXChannels: []uint32{1}}
	_, err := devices.CreateNodes(t.Context(), opts)
	require.NoError(t, err)
	checkNodes(t, dev, map[string]nodeSpec{
		"nvidiactl": {195, 255, 0o660, 44}, "nvidia2": {195, 2, 0o660, 44}, "nvidia-modeset": {195, 254, 0o660, 44},
		"nvidia-caps-imex-channels/channel1": {234, 1, 0o660, 44},
		"nvidia-uvm":                         {510, 0, 0o666, 0}, "nvidia-caps/nvidia-cap147": {511, 147, 0o444, 0},
	})

	editFile(t, params, "ModifyDeviceFiles: 1\n", "ModifyDeviceFiles: 0\n")
	editFile(t, h.ProcRoot+"/driver/nvidia/capabilities/gpu1/mig/gi11/access", "DeviceFileModify: 1", "DeviceFileModify: 0")
	dev = t.TempDir()
	opts.Roots.Dev = dev
	r, err := devices.CreateNodes(t.Context(), opts)
	require.NoError(t, err)
	want := []string{"/dev/nvidia-caps/nvidia-cap1", "/dev/nvidia-caps/nvidia-cap147", "/dev/nvidia-caps/nvidia-cap148",
		"/dev/nvidia-caps/nvidia-cap2", "/dev/nvidia-caps/nvidia-cap238", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}
	assert.Equal(t, want, paths(r.Created), "with ModifyDeviceFiles 0 created")
}

// TestCreatedNodesOpen has the kernel resolve nodes CreateNodes made: with
// /proc/devices claiming IMEX channels live on major 1 (mem), channel 3 is
// /dev/null and channel 5 /dev/zero, and they behave so.
func TestCreatedNodesOpen(t *testing.T) {
	testutil.RequireRoot(t)
	h := migHost(t)
	editFile(t, h.ProcRoot+"/devices", "234 nvidia-caps-imex-channels\n", "  1 nvidia-caps-imex-channels\n")
	dev := t.TempDir()
	_, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}, IMEXChannels: []uint32{3, 5}})
	require.NoError(t, err)
	null, err := os.OpenFile(filepath.Join(dev, "nvidia-caps-imex-channels/channel3"), os.O_RDWR, 0)
	require.NoError(t, err)
	defer null.Close()
	n, err := null.Write([]byte("discarded"))
	assert.NoError(t, err, "write to null")
	assert.Equal(t, 9, n, "write to null")
	f, err := os.Open(filepath.Join(dev, "nvidia-caps-imex-channels/channel5"))
	require.NoError(t, err)
	defer f.Close()
	buf := []byte{1, 2, 3, 4}
	_, err = f.Read(buf)
	assert.NoError(t, err, "read from zero")
	assert.Equal(t, make([]byte, 4), buf, "read from zero")
}

// TestCreateNodesModprobe runs a stand-in modprobe that "loads" a module by
// adding it to the fake /proc/modules, and checks the missing-modprobe and
// failing-modprobe cases are warnings.
func TestCreateNodesModprobe(t *testing.T) {
	testutil.RequireRoot(t)
	h := migHost(t)
	modules := h.ProcRoot + "/modules"
	unloadModules(t, h)
	script := filepath.Join(t.TempDir(), "modprobe")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n[ \"$1\" = nvidia_modeset ] && [ -e \"$0.fail\" ] && { echo \"FATAL: Module $1 not found\"; exit 1; }\necho \"$1 1 0 - Live 0x0 (PO)\" >> "+modules+"\n"), 0o755))

	// Missing modprobe: nodes for what is there, no modeset, a warning.
	opts := &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Sys: h.SysRoot, Dev: t.TempDir()}, LoadModules: true, Modprobe: script + ".missing"}
	r, err := devices.CreateNodes(t.Context(), opts)
	require.NoError(t, err, "missing modprobe")
	assert.Empty(t, r.Loaded, "missing modprobe: loaded")
	if assert.Len(t, r.Warnings, 1, "missing modprobe: warnings") {
		assert.Contains(t, r.Warnings[0], "modprobe unavailable", "missing modprobe: warning")
	}
	_, err = os.Lstat(filepath.Join(opts.Roots.Dev, "nvidia-modeset"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nvidia-modeset made without its module")

	// A failing modprobe for nvidia_modeset, found through sys/kernel/modprobe.
	require.NoError(t, os.WriteFile(script+".fail", nil, 0o644))
	require.NoError(t, os.MkdirAll(h.ProcRoot+"/sys/kernel", 0o755))
	require.NoError(t, os.WriteFile(h.ProcRoot+"/sys/kernel/modprobe", []byte(script+"\n"), 0o644))
	opts.Modprobe = ""
	r, err = devices.CreateNodes(t.Context(), opts)
	require.NoError(t, err, "failing modprobe")
	assert.Equal(t, []string{"nvidia", "nvidia_uvm"}, r.Loaded, "failing modprobe: loaded")
	if assert.Len(t, r.Warnings, 1, "failing modprobe: warnings") {
		assert.Contains(t, r.Warnings[0], "FATAL: Module nvidia_modeset not found", "failing modprobe: warning")
	}

	require.NoError(t, os.Remove(script+".fail"))
	opts.Roots.Dev = t.TempDir()
	r, err = devices.CreateNodes(t.Context(), opts)
	require.NoError(t, err, "working modprobe")
	assert.Equal(t, []string{"nvidia_modeset"}, r.Loaded, "working modprobe: loaded")
	assert.Empty(t, r.Warnings, "working modprobe: warnings")
	checkNodes(t, opts.Roots.Dev, map[string]nodeSpec{"nvidia-modeset": {195, 254, 0o666, 0}})
}

// TestCreateNodesUserNamespace needs no privilege: in a user namespace
// nothing is attempted.
func TestCreateNodesUserNamespace(t *testing.T) {
	for file, content := range map[string]string{"uid_map": "         0     100000      65536\n", "gid_map": "0 0 1\n", "setgroups": "deny\n"} {
		h := migHost(t)
		require.NoError(t, os.MkdirAll(h.ProcRoot+"/self", 0o755))
		require.NoError(t, os.WriteFile(h.ProcRoot+"/self/uid_map", []byte("0 0 4294967295\n"), 0o644))
		require.NoError(t, os.WriteFile(h.ProcRoot+"/self/"+file, []byte(content), 0o644))
		dev := t.TempDir()
		r, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}})
		ents, _ := os.ReadDir(dev)
		if assert.NoError(t, err, "%s %q", file, content) {
			assert.Contains(t, r.Skipped, "user namespace", "%s %q: skipped", file, content)
		}
		assert.Empty(t, ents, "%s %q: entries", file, content)
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
	unloadModules(t, h)
	require.NoError(t, os.MkdirAll(h.Root+"/bin", 0o755))
	require.NoError(t, os.WriteFile(h.Root+"/bin/busybox", bb, 0o755))
	require.NoError(t, os.MkdirAll(h.Root+"/nvc-test", 0o755))
	script := "#!/bin/busybox sh\necho \"$1 1 0 - Live 0x0 (PO)\" >> /proc/modules\necho \"$1\" >> /nvc-test/ran\n"
	require.NoError(t, os.WriteFile(h.Root+"/nvc-test/modprobe", []byte(script), 0o755))

	opts := &devices.NodeOptions{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Sys: h.SysRoot}, LoadModules: true, Modprobe: "/nvc-test/modprobe"}
	r, err := devices.CreateNodes(t.Context(), opts)
	require.NoError(t, err, "CreateNodes")
	require.Equal(t, []string{"nvidia", "nvidia_uvm", "nvidia_modeset"}, r.Loaded, "CreateNodes: loaded")
	require.Empty(t, r.Warnings, "CreateNodes: warnings")
	ran, _ := os.ReadFile(h.Root + "/nvc-test/ran")
	assert.Equal(t, "nvidia\nnvidia_uvm\nnvidia_modeset\n", string(ran), "modprobe inside the root ran for")
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
		_, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}, IMEXChannels: ids})
		ents, _ := os.ReadDir(dev)
		assert.ErrorIs(t, err, devices.ErrInvalid, "%d channels up to %d", len(ids), slices.Max(ids))
		assert.Empty(t, ents, "%d channels up to %d: entries made", len(ids), slices.Max(ids))
	}
	editFile(t, h.ProcRoot+"/driver/nvidia/params", "ImexChannelCount: 2048\n", "ImexChannelCount: 4\n")
	dev := t.TempDir()
	_, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}, IMEXChannels: []uint32{4}})
	assert.ErrorIs(t, err, devices.ErrInvalid, "channel 4 of 4")
	_, err = devices.CreateNodes(t.Context(), &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}, IMEXChannels: []uint32{3}})
	require.NoError(t, err)
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
			require.NoError(t, os.Remove(params))
			spec := "fifo driver/nvidia/params"
			if kind == "char" {
				spec = "char driver/nvidia/params 1 3"
			}
			testutil.BuildTree(t, h.ProcRoot, spec)
			dev := t.TempDir()
			done := make(chan error, 1)
			go func() {
				_, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Dev: dev}})
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
				require.FailNow(t, "CreateNodes blocked", "on the %s params", kind)
			}
			if assert.Error(t, err, "CreateNodes: want a not-a-regular-file error naming %s", params) {
				assert.ErrorContains(t, err, "not a regular file", "CreateNodes")
				assert.ErrorContains(t, err, params, "CreateNodes")
			}
			ents, _ := os.ReadDir(dev)
			assert.Empty(t, ents, "entries made")
			if kind == "fifo" {
				_, err := unix.Open(params, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
				assert.Equal(t, unix.ENXIO, err, "opening the FIFO's write end: want ENXIO (no reader)")
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
	unloadModules(t, h)
	script := filepath.Join(t.TempDir(), "modprobe")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755))
	opts := &devices.NodeOptions{Roots: driver.Roots{Proc: h.ProcRoot, Sys: h.SysRoot, Dev: t.TempDir()}, LoadModules: true, Modprobe: script,
		ModprobeTimeout: 100 * time.Millisecond}
	start := time.Now()
	r, err := devices.CreateNodes(t.Context(), opts)
	took := time.Since(start)
	assert.LessOrEqual(t, took, 20*time.Second, "hanging modprobe")
	require.NoError(t, err, "hanging modprobe after %v", took)
	if assert.Len(t, r.Warnings, 3, "hanging modprobe: warnings") {
		assert.Contains(t, r.Warnings[0], "deadline exceeded", "hanging modprobe: warning")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	opts.ModprobeTimeout = 0
	start = time.Now()
	_, err = devices.CreateNodes(ctx, opts)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "hanging modprobe, context done")
	assert.LessOrEqual(t, time.Since(start), 20*time.Second, "hanging modprobe, context done")
}
