package devices_test

import (
	"os"
	"reflect"
	"strconv"
	"testing"

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
	if !g1.MIGCapable || !g1.MIGEnabled || !reflect.DeepEqual(g1.MIGDevices, want) {
		t.Errorf("GPU 1: capable %v enabled %v\n got %+v\nwant %+v", g1.MIGCapable, g1.MIGEnabled, g1.MIGDevices, want)
	}
	if g1.MIGCapsDir != caps || len(g1.MIGMinors) != 135 || g1.MIGMinors[0] != 138 || g1.MIGMinors[134] != 272 {
		t.Errorf("GPU 1 caps dir %s, %d minors %v…", g1.MIGCapsDir, len(g1.MIGMinors), g1.MIGMinors[:1])
	}
	g0 := d.GPUs[0]
	if !g0.MIGCapable || g0.MIGEnabled || len(g0.MIGDevices) != 0 {
		t.Errorf("GPU 0: capable %v enabled %v devices %v", g0.MIGCapable, g0.MIGEnabled, g0.MIGDevices)
	}
	if m := d.GPUs[3].MIGDevices; len(m) != 1 || m[0].Profile != "1c.3g.20gb" || m[0].GI != 1 {
		t.Errorf("GPU 3 MIG devices %+v", m)
	}
	// Every capability reported exists on the host, as proc file and node.
	for _, m := range append(g1.MIGDevices, d.GPUs[3].MIGDevices...) {
		for _, c := range []devices.Cap{m.GIAccess, m.CIAccess} {
			for _, p := range []string{c.Proc, c.Node.Path} {
				if _, err := os.Stat(d.HostPath(p)); err != nil {
					t.Errorf("MIG %d:%d: %v", m.Parent, m.Index, err)
				}
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
	if len(m) != 2 || m[0].GI != 1 || m[1].GI != 11 || m[0].UUID != "" || m[0].Profile != "" {
		t.Fatalf("MIG devices %+v", m)
	}
	if m[0].GIAccess.Node.Minor != 4000 || m[0].CIAccess.Node.Minor != 148 || m[1].CIAccess.Node.Minor != 238 {
		t.Errorf("minors %d %d %d; want 4000 (mig-minors) 148 238 (DeviceFileMinor)",
			m[0].GIAccess.Node.Minor, m[0].CIAccess.Node.Minor, m[1].CIAccess.Node.Minor)
	}
	if !d.GPUs[1].MIGEnabled || d.GPUs[0].MIGEnabled || !d.GPUs[0].MIGCapable {
		t.Errorf("MIG flags: GPU 1 enabled %v, GPU 0 enabled %v capable %v", d.GPUs[1].MIGEnabled, d.GPUs[0].MIGEnabled, d.GPUs[0].MIGCapable)
	}
}

// TestNVCapsStyles checks the three styles of nvc_nvcaps_style and that
// capabilities lose their nodes without an nvidia-caps major.
func TestNVCapsStyles(t *testing.T) {
	h := mixedHost(t)
	editFile(t, h.ProcRoot+"/devices", "511 nvidia-caps\n", "")
	d := discover(t, h, devices.NVML)
	if d.NVCapsStyle != devices.NVCapsProc || d.CapsMajor != 0 || d.GPUs[1].MIGDevices[0].GIAccess.Node != nil || d.MIGConfig.Node != nil {
		t.Errorf("proc style: %s major %d node %+v", d.NVCapsStyle, d.CapsMajor, d.GPUs[1].MIGDevices[0].GIAccess.Node)
	}
	if err := os.RemoveAll(h.ProcRoot + "/driver/nvidia/capabilities"); err != nil {
		t.Fatal(err)
	}
	if d = discover(t, h, devices.NVML); d.NVCapsStyle != devices.NVCapsNone || d.MIGConfig != nil {
		t.Errorf("no caps: style %s config %+v", d.NVCapsStyle, d.MIGConfig)
	}
}
