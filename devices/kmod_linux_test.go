package devices_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

// unloadModules makes h's modules unloaded: no /proc/modules, no
// /sys/module/<name>/initstate.
func unloadModules(t *testing.T, h *fakehost.Host) {
	t.Helper()
	require.NoError(t, os.Remove(h.ProcRoot+"/modules"))
	require.NoError(t, os.RemoveAll(h.SysRoot+"/module"))
}

// fakeModprobe writes a modprobe stand-in that logs its argument to ran
// and "loads" the module by adding it to h's /proc/modules.
func fakeModprobe(t *testing.T, h *fakehost.Host) (prog, ran string) {
	t.Helper()
	dir := t.TempDir()
	prog, ran = filepath.Join(dir, "modprobe"), filepath.Join(dir, "ran")
	script := "#!/bin/sh\necho \"$1\" >> " + ran + "\necho \"$1 1 0 - Live 0x0 (PO)\" >> " + h.ProcRoot + "/modules\n"
	require.NoError(t, os.WriteFile(prog, []byte(script), 0o755))
	return prog, ran
}

// gpuPCIDirs are the sysfs directories of h's NVIDIA display controllers.
func gpuPCIDirs(t *testing.T, h *fakehost.Host) []string {
	t.Helper()
	var dirs []string
	all, err := filepath.Glob(h.SysRoot + "/bus/pci/devices/*")
	require.NoError(t, err)
	for _, d := range all {
		class, err := os.ReadFile(d + "/class")
		require.NoError(t, err)
		vendor, err := os.ReadFile(d + "/vendor")
		require.NoError(t, err)
		if string(vendor) == "0x10de\n" && strings.HasPrefix(string(class), "0x03") {
			dirs = append(dirs, d)
		}
	}
	require.NotEmpty(t, dirs, "the fake host has no NVIDIA display controller")
	return dirs
}

// TestLoadModulesPCIRules checks nvidia-modprobe's rules for loading the
// modules over a fake sysfs: modprobe runs only when an NVIDIA display
// controller (10de, class 0x03xxxx) is listed or sysfs cannot be read,
// nvidia_modeset alone on Tegra, and never for a module sysfs's
// module/<name>/initstate already says is loaded. ModifyDeviceFiles 0 and
// /proc/devices without the nvidia-uvm and nvidia-caps majors keep
// CreateNodes from making nodes, so this needs no privilege.
func TestLoadModulesPCIRules(t *testing.T) {
	all := "nvidia\nnvidia_uvm\nnvidia_modeset\n"
	for _, tc := range []struct {
		name    string
		edit    func(t *testing.T, h *fakehost.Host)
		ran     string
		warning string
	}{
		{"3D controller", func(*testing.T, *fakehost.Host) {}, all, ""},
		{"VGA controller", func(t *testing.T, h *fakehost.Host) {
			for _, d := range gpuPCIDirs(t, h) {
				require.NoError(t, os.WriteFile(d+"/class", []byte("0x030000\n"), 0o444))
			}
		}, all, ""},
		{"only decoys", removeGPUs, "", "no NVIDIA PCI display controller"},
		{"NVIDIA bridge only", func(t *testing.T, h *fakehost.Host) {
			for _, d := range gpuPCIDirs(t, h) {
				require.NoError(t, os.WriteFile(d+"/class", []byte("0x068000\n"), 0o444))
			}
		}, "", "no NVIDIA PCI display controller"},
		{"no sysfs", func(t *testing.T, h *fakehost.Host) {
			require.NoError(t, os.RemoveAll(h.SysRoot+"/bus"))
		}, all, "loading the modules anyway"},
		{"Tegra without PCI GPU", func(t *testing.T, h *fakehost.Host) {
			removeGPUs(t, h)
			require.NoError(t, os.MkdirAll(h.SysRoot+"/devices/soc0", 0o755))
			require.NoError(t, os.WriteFile(h.SysRoot+"/devices/soc0/family", []byte("Tegra\n"), 0o444))
		}, "nvidia_modeset\n", "no NVIDIA PCI display controller"},
		{"loaded per sysfs", func(t *testing.T, h *fakehost.Host) {
			require.NoError(t, os.MkdirAll(h.SysRoot+"/module/nvidia_uvm", 0o755))
			require.NoError(t, os.WriteFile(h.SysRoot+"/module/nvidia_uvm/initstate", []byte("live\n"), 0o444))
		}, "nvidia\nnvidia_modeset\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := genHost(t, nil)
			unloadModules(t, h)
			editFile(t, h.ProcRoot+"/driver/nvidia/params", "ModifyDeviceFiles: 1\n", "ModifyDeviceFiles: 0\n")
			editFile(t, h.ProcRoot+"/devices", "510 nvidia-uvm\n511 nvidia-caps\n", "")
			tc.edit(t, h)
			prog, ran := fakeModprobe(t, h)
			dev := t.TempDir()
			r, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{
				Roots: driver.Roots{Proc: h.ProcRoot, Sys: h.SysRoot, Dev: dev}, LoadModules: true, Modprobe: prog})
			require.NoError(t, err)
			got, _ := os.ReadFile(ran)
			assert.Equal(t, tc.ran, string(got), "modprobe ran for")
			var warnings []string
			for _, w := range r.Warnings {
				if !strings.Contains(w, "no nvidia-uvm major") {
					warnings = append(warnings, w)
				}
			}
			if tc.warning == "" {
				assert.Empty(t, warnings, "warnings")
			} else if assert.Len(t, warnings, 1, "warnings") {
				assert.Contains(t, warnings[0], tc.warning, "warning")
			}
			ents, err := os.ReadDir(dev)
			require.NoError(t, err)
			assert.Empty(t, ents, "nodes made with ModifyDeviceFiles 0")
		})
	}
}

func removeGPUs(t *testing.T, h *fakehost.Host) {
	for _, d := range gpuPCIDirs(t, h) {
		require.NoError(t, os.RemoveAll(d))
	}
}

// TestCreateNodesAfterModprobe is --load-kmods end to end with mknod in a
// temp dev root: without an NVIDIA display controller nothing is loaded
// and no node is made; with one, the three modules are loaded and the
// nodes made with the params file's uid, gid and mode (nvidia-uvm with the
// driver's defaults and the major of /proc/devices), each checked with
// lstat.
func TestCreateNodesAfterModprobe(t *testing.T) {
	testutil.RequireRoot(t)
	t.Run("no display controller", func(t *testing.T) {
		h := genHost(t, nil)
		unloadModules(t, h)
		removeGPUs(t, h)
		prog, ran := fakeModprobe(t, h)
		dev := t.TempDir()
		r, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{
			Roots: driver.Roots{Proc: h.ProcRoot, Sys: h.SysRoot, Dev: dev}, LoadModules: true, Modprobe: prog})
		require.NoError(t, err)
		assert.Empty(t, r.Loaded, "loaded")
		assert.Empty(t, r.Created, "created")
		assert.NoFileExists(t, ran, "modprobe ran")
		ents, err := os.ReadDir(dev)
		require.NoError(t, err)
		assert.Empty(t, ents, "dev root")
	})
	t.Run("3D controller", func(t *testing.T) {
		h := genHost(t, nil)
		unloadModules(t, h)
		params := h.ProcRoot + "/driver/nvidia/params"
		editFile(t, params, "DeviceFileUID: 0\n", "DeviceFileUID: 1000\n")
		editFile(t, params, "DeviceFileGID: 0\n", "DeviceFileGID: 44\n")
		editFile(t, params, "DeviceFileMode: 438\n", "DeviceFileMode: 432\n")
		prog, _ := fakeModprobe(t, h)
		dev := t.TempDir()
		r, err := devices.CreateNodes(t.Context(), &devices.NodeOptions{
			Roots: driver.Roots{Proc: h.ProcRoot, Sys: h.SysRoot, Dev: dev}, LoadModules: true, Modprobe: prog})
		require.NoError(t, err)
		assert.Equal(t, []string{"nvidia", "nvidia_uvm", "nvidia_modeset"}, r.Loaded, "loaded")
		assert.Empty(t, r.Warnings, "warnings")
		type node struct{ major, minor, mode, uid, gid uint32 }
		for p, w := range map[string]node{
			"nvidiactl": {195, 255, 0o660, 1000, 44}, "nvidia0": {195, 0, 0o660, 1000, 44}, "nvidia7": {195, 7, 0o660, 1000, 44},
			"nvidia-modeset": {195, 254, 0o660, 1000, 44},
			"nvidia-uvm":     {fakehost.MajorUVM, 0, 0o666, 0, 0}, "nvidia-uvm-tools": {fakehost.MajorUVM, 1, 0o666, 0, 0},
		} {
			var st unix.Stat_t
			if !assert.NoError(t, unix.Lstat(filepath.Join(dev, p), &st), p) {
				continue
			}
			assert.Equal(t, uint32(unix.S_IFCHR), st.Mode&unix.S_IFMT, "%s: a char device", p)
			assert.Equal(t, w, node{unix.Major(st.Rdev), unix.Minor(st.Rdev), st.Mode & 0o7777, st.Uid, st.Gid}, "%s: major, minor, mode, uid, gid", p)
		}
	})
}
