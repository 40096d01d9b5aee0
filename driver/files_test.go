package driver_test

import (
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

// hostLib is a library of the generated host's inventory, written out here
// independently of the generator: its list name and whether the host has a
// 32-bit copy. vdpau is installed in <libdir>/vdpau, which ld.so.conf does
// not list, so the cache never holds it — on real hosts too.
type hostLib struct {
	name     string
	has32    bool
	notCache bool
}

var (
	wantUtility = []hostLib{{"libnvidia-ml.so", true, false}, {"libnvidia-cfg.so", false, false}, {"libnvidia-nscq.so", false, false}}
	wantCompute = []hostLib{
		{"libcuda.so", true, false}, {"libcudadebugger.so", false, false}, {"libnvidia-opencl.so", true, false},
		{"libnvidia-gpucomp.so", true, false}, {"libnvidia-ptxjitcompiler.so", true, false},
		{"libnvidia-fatbinaryloader.so", true, false}, {"libnvidia-allocator.so", true, false},
		{"libnvidia-compiler.so", true, false}, {"libnvidia-pkcs11.so", false, false},
		{"libnvidia-pkcs11-openssl3.so", false, false}, {"libnvidia-nvvm.so", false, false}, {"libnvidia-tileiras.so", false, false},
	}
	wantNGX   = []hostLib{{"libnvidia-ngx.so", false, false}}
	wantVideo = []hostLib{
		{"libvdpau_nvidia.so", true, true}, {"libnvidia-encode.so", true, false},
		{"libnvidia-opticalflow.so", true, false}, {"libnvcuvid.so", true, false},
	}
	wantGraphics = []hostLib{
		{"libnvidia-eglcore.so", true, false}, {"libnvidia-glcore.so", true, false}, {"libnvidia-tls.so", true, false},
		{"libnvidia-glsi.so", true, false}, {"libnvidia-fbc.so", true, false}, {"libnvidia-ifr.so", true, false},
		{"libnvidia-rtcore.so", false, false}, {"libnvoptix.so", false, false},
	}
	wantGLVND = []hostLib{
		{"libGLX_nvidia.so", true, false}, {"libEGL_nvidia.so", true, false}, {"libGLESv2_nvidia.so", true, false},
		{"libGLESv1_CM_nvidia.so", true, false}, {"libnvidia-glvkspirv.so", true, false}, {"libnvidia-cbl.so", false, false},
	}
	wantCompatGL = []hostLib{{"libGL.so", true, false}, {"libEGL.so", true, false}, {"libGLESv1_CM.so", true, false}, {"libGLESv2.so", true, false}}
	// wantEGLPlatform are the EGL platform libraries the generated host
	// has, with versions of their own; the toolkit's other three
	// (wayland2, xcb, xlib) are absent.
	wantEGLPlatform = []eglLib{
		{"libnvidia-egl-gbm.so", "libnvidia-egl-gbm.so.1.1.1", "egl/egl_external_platform.d/15_nvidia_gbm.json"},
		{"libnvidia-egl-wayland.so", "libnvidia-egl-wayland.so.1.1.13", "egl/egl_external_platform.d/10_nvidia_wayland.json"},
	}
)

// eglLib is an EGL platform library of the generated host: its list name,
// file name and platform file.
type eglLib struct{ name, file, config string }

// expected is what Files should return, class by class, as sorted lines.
type expected map[string][]string

func line(f driver.File) string {
	return fmt.Sprintf("%s %s path=%s host=%s ctr=%s", f.Kind, f.Name, f.Path, f.HostPath, f.ContainerPath)
}

func gotFiles(fs *driver.Files) expected {
	e := expected{}
	for class, files := range map[string][]driver.File{
		"binaries": fs.Binaries, "libraries": fs.Libraries, "libraries32": fs.Libraries32,
		"ipcs": fs.IPCs, "firmware": fs.Firmware, "configs": fs.Configs,
	} {
		for _, f := range files {
			e[class] = append(e[class], line(f))
		}
	}
	for _, w := range fs.Warnings {
		e["warnings"] = append(e["warnings"], w.String())
	}
	return e.sorted()
}

func (e expected) sorted() expected {
	for _, l := range e {
		slices.Sort(l)
	}
	return e
}

func (e expected) add(class string, k driver.Kind, name, p, host, ctr string) {
	e[class] = append(e[class], line(driver.File{Kind: k, Name: name, Path: p, HostPath: host, ContainerPath: ctr}))
}

// wantFiles computes the expected files for caps on h, from the inventory
// above and libnvidia-container's per-capability table.
func wantFiles(h *fakehost.Host, caps capabilities.Set, noGLVND bool) expected {
	e := expected{}
	exp := caps.Expand()
	var libs []hostLib
	for _, c := range []struct {
		cap  capabilities.Capability
		libs []hostLib
	}{{capabilities.Utility, wantUtility}, {capabilities.Compute, wantCompute}, {capabilities.NGX, wantNGX}, {capabilities.Video, wantVideo}} {
		if exp.Has(c.cap) {
			libs = append(libs, c.libs...)
		}
	}
	if exp.Has(capabilities.Graphics) {
		libs = append(libs, wantGraphics...)
		libs = append(libs, map[bool][]hostLib{false: wantGLVND, true: wantCompatGL}[noGLVND]...)
	}
	e.addLibs(h, libs, caps.Has(capabilities.Compat32))
	if exp.Has(capabilities.Graphics) {
		for _, l := range wantEGLPlatform {
			p := h.LibDir + "/" + l.file
			e.add("libraries", driver.Library, l.name, p, filepath.Join(h.Root, p), p)
		}
	}
	e.addBinaries(h, caps)
	e.addIPCs(h, exp)
	for _, fw := range []string{"gsp_ga10x.bin", "gsp_tu10x.bin"} {
		p := "/lib/firmware/nvidia/" + h.DriverVersion + "/" + fw
		e.add("firmware", driver.Firmware, fw, p, filepath.Join(h.Root, "usr", p), p)
	}
	e.addConfigs(h, exp)
	return e.sorted()
}

func (e expected) addLibs(h *fakehost.Host, libs []hostLib, compat32 bool) {
	for _, l := range libs {
		if l.notCache {
			e["warnings"] = append(e["warnings"], "missing library "+l.name)
		} else {
			p := h.LibDir + "/" + l.name + "." + h.DriverVersion
			e.add("libraries", driver.Library, l.name, p, filepath.Join(h.Root, p), p)
		}
		if !compat32 {
			continue
		}
		if !l.has32 || l.notCache {
			e["warnings"] = append(e["warnings"], "missing compat32 library "+l.name)
			continue
		}
		p := h.Lib32Dir + "/" + l.name + "." + h.DriverVersion
		e.add("libraries32", driver.Library32, l.name, p, filepath.Join(h.Root, p), p)
	}
}

func (e expected) addBinaries(h *fakehost.Host, caps capabilities.Set) {
	var bins []string
	if caps.Has(capabilities.Utility) {
		bins = append(bins, "nvidia-smi", "nvidia-debugdump", "nvidia-persistenced", "nv-fabricmanager")
	}
	if caps.Has(capabilities.Compute) {
		bins = append(bins, "nvidia-cuda-mps-control", "nvidia-cuda-mps-server")
	}
	for _, b := range bins {
		e.add("binaries", driver.Binary, b, "/usr/bin/"+b, filepath.Join(h.Root, "usr/bin", b), "/usr/bin/"+b)
	}
}

func (e expected) addIPCs(h *fakehost.Host, exp capabilities.Set) {
	if exp.Has(capabilities.Utility) {
		for _, d := range []string{"nvidia-persistenced", "nvidia-fabricmanager"} {
			p := "/run/" + d + "/socket"
			e.add("ipcs", driver.IPC, "/var"+p, p, filepath.Join(h.Root, p), p)
		}
	}
	if exp.Has(capabilities.Compute) {
		e.add("ipcs", driver.IPC, "/tmp/nvidia-mps", "/tmp/nvidia-mps", filepath.Join(h.Root, "tmp/nvidia-mps"), "/tmp/nvidia-mps")
	}
}

func (e expected) addConfigs(h *fakehost.Host, exp capabilities.Set) {
	cfg := func(k driver.Kind, name, p, ctr string) {
		e.add("configs", k, name, p, filepath.Join(h.Root, p), ctr)
	}
	if exp.Has(capabilities.Compute) {
		cfg(driver.Config, "OpenCL/vendors/nvidia.icd", "/etc/OpenCL/vendors/nvidia.icd", "/etc/OpenCL/vendors/nvidia.icd")
	}
	if exp.Has(capabilities.Graphics) {
		names := []string{"glvnd/egl_vendor.d/10_nvidia.json", "nvidia/nvoptix.bin"}
		for _, l := range wantEGLPlatform {
			names = append(names, l.config)
		}
		for _, n := range names {
			cfg(driver.Config, n, "/usr/share/"+n, "/usr/share/"+n)
		}
		for _, n := range []string{"vulkan/icd.d/nvidia_icd.json", "vulkan/implicit_layer.d/nvidia_layers.json"} {
			cfg(driver.Config, n, "/etc/"+n, "/etc/"+n)
		}
	}
	if exp.Has(capabilities.Display) {
		n := "X11/xorg.conf.d/nvidia-drm-outputclass.conf"
		cfg(driver.Config, n, "/usr/share/"+n, "/usr/share/"+n)
		xorg := "/usr/lib/xorg/modules"
		if h.Layout == fakehost.Fedora {
			xorg = "/usr/lib64/xorg/modules"
		}
		cfg(driver.XorgModule, "nvidia_drv.so", xorg+"/drivers/nvidia_drv.so", xorg+"/drivers/nvidia_drv.so")
		glx := "libglxserver_nvidia.so." + h.DriverVersion
		cfg(driver.XorgModule, glx, xorg+"/extensions/"+glx, xorg+"/extensions/"+glx)
	}
}

// compareFiles reports, class by class, each file missing from got and
// each file got has that it should not.
func compareFiles(t *testing.T, label string, got, want expected) {
	t.Helper()
	for _, class := range []string{"binaries", "libraries", "libraries32", "ipcs", "firmware", "configs", "warnings"} {
		for _, w := range want[class] {
			assert.Contains(t, got[class], w, "%s: %s lacks %s", label, class, w)
		}
		for _, g := range got[class] {
			assert.Contains(t, want[class], g, "%s: %s has unexpected %s", label, class, g)
		}
	}
}

// generate makes a host and opens its driver with NVML.
func generate(t testing.TB, o fakehost.Options, dopts driver.Options) (*fakehost.Host, *driver.Driver) {
	t.Helper()
	h, err := fakehost.Generate(t.TempDir(), &o)
	require.NoError(t, err)
	dopts.Roots.Driver, dopts.Roots.Proc, dopts.Roots.Dev, dopts.NVML = h.Root, h.ProcRoot, h.DevRoot, h.NVML
	d, err := driver.Open(&dopts)
	require.NoError(t, err)
	return h, d
}

// hosts are the two generated hosts of acceptance test 1: two driver
// versions, two layouts, each with leftovers of the other version.
var hosts = []fakehost.Options{
	{DriverVersion: "550.54.15"},
	{DriverVersion: "535.161.08", Layout: fakehost.Fedora},
}

func capSets() []capabilities.Set {
	sets := []capabilities.Set{capabilities.All, capabilities.Of(capabilities.Compat32),
		capabilities.Of(capabilities.Compute, capabilities.Compat32), capabilities.Of(capabilities.Graphics, capabilities.Compat32), 0}
	for _, c := range capabilities.All.List() {
		sets = append(sets, capabilities.Of(c))
	}
	return sets
}

// TestFilesPerCapability is acceptance test 1: for each capability, all,
// compat32 combinations and the empty set, Files returns exactly the
// expected files, class by class, file by file, on hosts with decoys.
func TestFilesPerCapability(t *testing.T) {
	for _, o := range hosts {
		for _, noGLVND := range []bool{false, true} {
			h, d := generate(t, o, driver.Options{NoGLVND: noGLVND})
			for _, caps := range capSets() {
				fs, err := d.Files(caps)
				require.NoError(t, err)
				label := fmt.Sprintf("%s %s noGLVND=%v caps=%q", o.DriverVersion, h.Layout, noGLVND, caps)
				compareFiles(t, label, gotFiles(fs), wantFiles(h, caps, noGLVND))
			}
		}
	}
}

// TestFilesRejectDecoys checks by name that no decoy of the generated host
// is ever selected: libraries of the other driver version, the legacy
// install's libcuda and classic-ABI libnvidia-tls, Mesa's libGL, the text
// file and directory behind stale cache entries, and the other version's
// firmware.
func TestFilesRejectDecoys(t *testing.T) {
	for _, o := range hosts {
		for _, noGLVND := range []bool{false, true} {
			h, d := generate(t, o, driver.Options{NoGLVND: noGLVND})
			fs, err := d.Files(capabilities.All)
			require.NoError(t, err)
			other := map[string]string{"550.54.15": "535.161.08", "535.161.08": "550.54.15"}[h.DriverVersion]
			for _, f := range fs.All() {
				for _, decoy := range []string{other, "/opt/", "/mesa/"} {
					assert.NotContains(t, f.Path, decoy, "%s: decoy selected: %+v", h.DriverVersion, f)
				}
				rule := "*." + h.DriverVersion
				if strings.HasPrefix(f.Name, "libnvidia-egl-") {
					rule = f.Name + ".*.*"
				}
				if f.Kind == driver.Library {
					ok, _ := path.Match(rule, path.Base(f.Path))
					assert.True(t, ok, "%s: %s does not match %q", h.DriverVersion, f.Path, rule)
				}
			}
		}
	}
}

func TestFilesSonames(t *testing.T) {
	h, d := generate(t, fakehost.Options{}, driver.Options{NoGLVND: true})
	fs, err := d.Files(capabilities.All)
	require.NoError(t, err)
	want := map[string]string{
		"libcuda.so": "libcuda.so.1", "libnvidia-glcore.so": "libnvidia-glcore.so." + h.DriverVersion,
		"libGL.so": "libGL.so.1", "libnvidia-nvvm.so": "libnvidia-nvvm.so.4",
	}
	for _, f := range slices.Concat(fs.Libraries, fs.Libraries32) {
		if s, ok := want[f.Name]; ok {
			assert.Equal(t, s, f.Soname, "%s %s: soname", f.Kind, f.Path)
		}
		assert.NotEmpty(t, f.Soname, "%s %s: no soname", f.Kind, f.Path)
	}
}

// TestFilesOrder checks All's order, which nvidia-container-cli list
// prints: binaries, libraries, 32-bit libraries, IPCs, firmware (configs,
// which list does not print, last); libraries in list order.
func TestFilesOrder(t *testing.T) {
	_, d := generate(t, fakehost.Options{}, driver.Options{})
	fs, err := d.Files(capabilities.All)
	require.NoError(t, err)
	rank := map[driver.Kind]int{driver.Binary: 0, driver.Library: 1, driver.Library32: 2, driver.IPC: 3, driver.Firmware: 4, driver.Config: 5, driver.XorgModule: 5}
	all := fs.All()
	assert.True(t, slices.IsSortedFunc(all, func(a, b driver.File) int { return rank[a.Kind] - rank[b.Kind] }), "All is not in list order")
	var names []string
	for _, f := range fs.Libraries[:4] {
		names = append(names, path.Base(f.Name))
	}
	assert.Equal(t, []string{"libnvidia-ml.so", "libnvidia-cfg.so", "libnvidia-nscq.so", "libcuda.so"}, names, "libraries start")
}

// TestFilesConcurrent calls Files from several goroutines (run with -race):
// every call returns the same files as a lone call.
func TestFilesConcurrent(t *testing.T) {
	_, d := generate(t, fakehost.Options{}, driver.Options{})
	first, err := d.Files(capabilities.All)
	require.NoError(t, err)
	want := gotFiles(first)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			fs, err := d.Files(capabilities.All)
			if err == nil && !reflect.DeepEqual(gotFiles(fs), want) {
				err = fmt.Errorf("concurrent Files differs:\n%v", gotFiles(fs))
			}
			errs <- err
		}()
	}
	for range 4 {
		assert.NoError(t, <-errs)
	}
}

// TestFilesOptions checks the options that mirror nvidia-container-cli's
// --no-persistenced, --no-fabricmanager, --no-gsp-firmware and the no-mps
// driver option, and the search paths.
func TestFilesOptions(t *testing.T) {
	h, err := fakehost.Generate(t.TempDir(), nil)
	require.NoError(t, err)
	ver := h.DriverVersion
	testutil.BuildTree(t, h.Root, `
file usr/lib/firmware/updates/6.1.0-test/nvidia/`+ver+`/gsp_ga10x.bin updated
file opt/fw/nvidia/`+ver+`/gsp_tu10x.bin custom
file opt/fw/nvidia/`+ver+`/gsp_ga10x.bin custom
file opt/fw/nvidia/`+ver+`/README not firmware
`)
	utilCompute := capabilities.Of(capabilities.Utility, capabilities.Compute)
	for _, tc := range []struct {
		name  string
		opts  driver.Options
		check func(fs *driver.Files) string
	}{
		{"no-persistenced", driver.Options{NoPersistenced: true}, ipcsAre("/run/nvidia-fabricmanager/socket", "/tmp/nvidia-mps")},
		{"no-fabricmanager", driver.Options{NoFabricManager: true}, ipcsAre("/run/nvidia-persistenced/socket", "/tmp/nvidia-mps")},
		{"no-mps", driver.Options{NoMPS: true}, func(fs *driver.Files) string {
			if len(fs.Binaries) != 4 || len(fs.IPCs) != 2 {
				return fmt.Sprintf("%d binaries, %d IPCs", len(fs.Binaries), len(fs.IPCs))
			}
			return ""
		}},
		{"no-gsp-firmware", driver.Options{NoGSPFirmware: true}, func(fs *driver.Files) string {
			if len(fs.Firmware) != 0 || len(fs.Warnings) != 0 {
				return fmt.Sprintf("firmware %v, warnings %v", fs.Firmware, fs.Warnings)
			}
			return ""
		}},
		{"mps dir", driver.Options{MPSPipeDir: "/var/mps"}, warns("missing ipc path /var/mps")},
		{"path", driver.Options{Path: "/nowhere:"}, warns("missing binary nvidia-smi", "missing binary nvidia-cuda-mps-server")},
		{"firmware order", driver.Options{KernelRelease: "6.1.0-test", FirmwarePath: "/opt/fw"}, firmwareIs(
			"/opt/fw/nvidia/"+ver+"/gsp_ga10x.bin", "/opt/fw/nvidia/"+ver+"/gsp_tu10x.bin")},
		{"firmware updates", driver.Options{KernelRelease: "6.1.0-test"}, firmwareIs(
			"/lib/firmware/updates/6.1.0-test/nvidia/"+ver+"/gsp_ga10x.bin", "/lib/firmware/nvidia/"+ver+"/gsp_tu10x.bin")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Roots.Driver, tc.opts.Roots.Proc, tc.opts.Roots.Dev = h.Root, h.ProcRoot, h.DevRoot
			d, err := driver.Open(&tc.opts)
			require.NoError(t, err)
			fs, err := d.Files(utilCompute)
			require.NoError(t, err)
			assert.Empty(t, tc.check(fs), tc.name)
		})
	}
}

func ipcsAre(want ...string) func(*driver.Files) string {
	return func(fs *driver.Files) string {
		var got []string
		for _, f := range fs.IPCs {
			got = append(got, f.Path)
		}
		if !slices.Equal(got, want) || len(fs.Warnings) != 0 {
			return fmt.Sprintf("IPCs %q, warnings %v; want %q", got, fs.Warnings, want)
		}
		return ""
	}
}

func warns(want ...string) func(*driver.Files) string {
	return func(fs *driver.Files) string {
		for _, w := range want {
			if !slices.ContainsFunc(fs.Warnings, func(x driver.Warning) bool { return x.String() == w }) {
				return fmt.Sprintf("warnings %v lack %q", fs.Warnings, w)
			}
		}
		return ""
	}
}

func firmwareIs(want ...string) func(*driver.Files) string {
	return func(fs *driver.Files) string {
		var got []string
		for _, f := range fs.Firmware {
			got = append(got, f.Path)
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("firmware %q, want %q", got, want)
		}
		return ""
	}
}
