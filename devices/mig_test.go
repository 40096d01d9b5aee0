package devices_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/fakenvml"
)

// mixedHost is a DGX A100 with GPU 1 in MIG mode (a 3g and a 1g
// instance), GPU 3 in MIG mode with a 1c.3g instance, the rest not.
func mixedHost(t *testing.T) *fakehost.Host {
	return genHost(t, &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb", "1g.5gb"}, 3: {"1c.3g.20gb"}}})
}

func capOf(minor uint32, proc string) devices.Cap {
	return devices.Cap{Proc: proc, Node: &devices.Node{Path: "/dev/nvidia-caps/nvidia-cap" + strconv.FormatUint(uint64(minor), 10), Major: 511, Minor: minor}}
}

// TestMIGDiscoveryNVML checks the MIG devices, their capabilities and the
// nodes of a mixed host against the nv-caps minor layout: gpuN/giG/access is
// 3 + 135N + 9G, its ciC 1 + C further on.
func TestMIGDiscoveryNVML(t *testing.T) {
	h := mixedHost(t)
	d := discover(t, h, devices.NVML)
	const caps = "/proc/driver/nvidia/capabilities/gpu1/mig"
	want := []devices.MIGDevice{
		{Index: 0, Parent: 1, GI: 1, CI: 0, UUID: fakenvml.MIGUUID("dgxa100", 1, 1, 0), Profile: "3g.20gb",
			GIAccess: capOf(147, caps+"/gi1/access"), CIAccess: capOf(148, caps+"/gi1/ci0/access")},
		{Index: 1, Parent: 1, GI: 11, CI: 0, UUID: fakenvml.MIGUUID("dgxa100", 1, 11, 0), Profile: "1g.5gb",
			GIAccess: capOf(237, caps+"/gi11/access"), CIAccess: capOf(238, caps+"/gi11/ci0/access")},
	}
	g1 := d.GPUs[1]
	assert.True(t, g1.MIGCapable, "GPU 1: capable")
	assert.True(t, g1.MIGEnabled, "GPU 1: enabled")
	assert.Equal(t, want, g1.MIGDevices, "GPU 1: MIG devices")
	assert.Equal(t, caps, g1.MIGCapsDir, "GPU 1 caps dir")
	if assert.Len(t, g1.MIGMinors, 135, "GPU 1 minors") {
		assert.EqualValues(t, 138, g1.MIGMinors[0], "GPU 1 first minor")
		assert.EqualValues(t, 272, g1.MIGMinors[134], "GPU 1 last minor")
	}
	g0 := d.GPUs[0]
	assert.True(t, g0.MIGCapable, "GPU 0: capable")
	assert.False(t, g0.MIGEnabled, "GPU 0: enabled")
	assert.Empty(t, g0.MIGDevices, "GPU 0: devices")
	m := d.GPUs[3].MIGDevices
	if assert.Len(t, m, 1, "GPU 3 MIG devices %+v", m) {
		assert.Equal(t, "1c.3g.20gb", m[0].Profile, "GPU 3 MIG device profile")
		assert.EqualValues(t, 1, m[0].GI, "GPU 3 MIG device GI")
	}
	// Every capability reported exists on the host, as proc file and node.
	for _, m := range append(g1.MIGDevices, d.GPUs[3].MIGDevices...) {
		for _, c := range []devices.Cap{m.GIAccess, m.CIAccess} {
			for _, p := range []string{c.Proc, c.Node.Path} {
				_, err := os.Stat(d.HostPath(p))
				assert.NoError(t, err, "MIG %d:%d", m.Parent, m.Index)
			}
		}
	}
}

// TestMIGDiscoveryProcfs checks that procfs finds the same MIG devices
// from the capabilities tree and takes their nodes from mig-minors, falling
// back to the capability file's DeviceFileMinor for a name mig-minors lacks.
func TestMIGDiscoveryProcfs(t *testing.T) {
	h := mixedHost(t)
	// Renumber one entry and drop another: discovery must follow the file.
	mm := h.ProcRoot + "/driver/nvidia-caps/mig-minors"
	editFile(t, mm, "gpu1/gi1/access 147\n", "gpu1/gi1/access 4000\n")
	editFile(t, mm, "gpu1/gi11/ci0/access 238\n", "")
	d := discover(t, h, devices.Procfs)
	m := d.GPUs[1].MIGDevices
	require.Len(t, m, 2, "MIG devices %+v", m)
	require.EqualValues(t, 1, m[0].GI, "MIG devices %+v", m)
	require.EqualValues(t, 11, m[1].GI, "MIG devices %+v", m)
	require.Empty(t, m[0].UUID, "MIG devices %+v", m)
	require.Empty(t, m[0].Profile, "MIG devices %+v", m)
	assert.Equal(t, [3]uint32{4000, 148, 238}, [3]uint32{m[0].GIAccess.Node.Minor, m[0].CIAccess.Node.Minor, m[1].CIAccess.Node.Minor},
		"minors; want 4000 (mig-minors) 148 238 (DeviceFileMinor)")
	assert.True(t, d.GPUs[1].MIGEnabled, "MIG flags: GPU 1 enabled")
	assert.False(t, d.GPUs[0].MIGEnabled, "MIG flags: GPU 0 enabled")
	assert.True(t, d.GPUs[0].MIGCapable, "MIG flags: GPU 0 capable")
}

// TestNVCapsStyles checks the three styles of nvc_nvcaps_style and that
// capabilities lose their nodes without an nvidia-caps major.
func TestNVCapsStyles(t *testing.T) {
	h := mixedHost(t)
	editFile(t, h.ProcRoot+"/devices", "511 nvidia-caps\n", "")
	d := discover(t, h, devices.NVML)
	assert.Equal(t, devices.NVCapsProc, d.NVCapsStyle, "proc style")
	assert.Zero(t, d.CapsMajor, "proc style: major")
	assert.Nil(t, d.GPUs[1].MIGDevices[0].GIAccess.Node, "proc style: node")
	assert.Nil(t, d.MIGConfig.Node, "proc style: MIG config node")
	require.NoError(t, os.RemoveAll(h.ProcRoot+"/driver/nvidia/capabilities"))
	d = discover(t, h, devices.NVML)
	assert.Equal(t, devices.NVCapsNone, d.NVCapsStyle, "no caps: style")
	assert.Nil(t, d.MIGConfig, "no caps: MIG config")
}
