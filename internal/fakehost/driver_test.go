package fakehost

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakenvml"
	"github.com/go-nvc/nvc/internal/testutil"
)

// writeDriverHost runs writeDriver alone into a temp dir.
func writeDriverHost(t testing.TB, o Options) *Host {
	t.Helper()
	o = withDefaults(&o)
	if o.NVML == nil {
		o.NVML = dgxa100(t)
	}
	h := &Host{Root: t.TempDir(), NVML: o.NVML, DriverVersion: o.DriverVersion, Layout: o.Layout}
	if err := writeDriver(h, o); err != nil {
		t.Fatal(err)
	}
	return h
}

// dgxa100 is the fake NVML of a DGX A100 at the default versions.
func dgxa100(t testing.TB) devices.NVMLInterface {
	t.Helper()
	n, err := fakenvml.New("dgxa100", nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// glibcEntries runs glibc's ldconfig on root's ld.so.conf, without touching
// links, into a cache of its own, and returns `ldconfig -p`'s lines for it.
func glibcEntries(t *testing.T, root string) []string {
	t.Helper()
	out, err := exec.Command(testutil.GlibcLdconfig(t), "-X", "-r", root, "-C", "/glibc-ld.so.cache").CombinedOutput()
	if err != nil {
		t.Fatalf("ldconfig -r %s: %v\n%s", root, err, out)
	}
	return testutil.LdconfigEntries(t, filepath.Join(root, "glibc-ld.so.cache"))
}

// TestDriverCacheAgreesWithGlibc checks the generated ld.so.cache against
// glibc's ldconfig (Debian GLIBC 2.36) run on the same tree: glibc's
// `ldconfig -p` prints the same entries, in the same order, for both caches,
// except the two stale entries the generator documents, which only ours has.
func TestDriverCacheAgreesWithGlibc(t *testing.T) {
	for _, lay := range []Layout{Debian, Fedora} {
		t.Run(string(lay), func(t *testing.T) {
			h := writeDriverHost(t, Options{Layout: lay})
			glibc := glibcEntries(t, h.Root)
			ours := testutil.LdconfigEntries(t, filepath.Join(h.Root, "etc/ld.so.cache"))
			stale := []string{
				"libnvidia-fbc.so.1 (libc6,x86-64) => /" + legacyDir + "/libnvidia-fbc.so.1",
				"libnvidia-cfg.so.1 (libc6,x86-64) => /" + legacyDir + "/libnvidia-cfg.so.1",
			}
			rest := slices.DeleteFunc(slices.Clone(ours), func(l string) bool { return slices.Contains(stale, l) })
			if len(ours)-len(rest) != len(stale) || !slices.Equal(rest, glibc) {
				t.Errorf("ldconfig -p of our cache\n%s\nof glibc's, built from the same tree\n%s", strings.Join(ours, "\n"), strings.Join(glibc, "\n"))
			}
			lib, lib32 := "/lib/x86_64-linux-gnu", "/lib/i386-linux-gnu"
			if lay == Fedora {
				lib, lib32 = "/lib64", "/lib"
			}
			for _, want := range []string{
				"libcuda.so.1 (libc6,x86-64) => " + lib + "/libcuda.so.1",
				"libcuda.so (libc6,x86-64) => " + lib + "/libcuda.so",
				"libcuda.so.1 (libc6) => " + lib32 + "/libcuda.so.1",
				"libnvidia-glcore.so." + h.DriverVersion + " (libc6,x86-64) => " + lib + "/libnvidia-glcore.so." + h.DriverVersion,
				"libGL.so.1 (libc6,x86-64) => " + h.LibDir + "/mesa/libGL.so.1",
			} {
				if !slices.Contains(ours, want) {
					t.Errorf("our cache lacks %q", want)
				}
			}
		})
	}
}

// TestDriverLibrariesAreRealELF reads every generated library back with
// debug/elf: SONAME, class, machine, the GL compat dependencies and the TLS
// note.
func TestDriverLibrariesAreRealELF(t *testing.T) {
	h := writeDriverHost(t, Options{})
	ver := h.DriverVersion
	for _, tc := range []struct {
		path, soname string
		class        elf.Class
		needs        string
	}{
		{h.LibDir + "/libcuda.so.1", "libcuda.so.1", elf.ELFCLASS64, ""},
		{h.Lib32Dir + "/libcuda.so.1", "libcuda.so.1", elf.ELFCLASS32, ""},
		{h.LibDir + "/libGLX_nvidia.so.0", "libGLX_nvidia.so.0", elf.ELFCLASS64, ""},
		{h.LibDir + "/libnvidia-glcore.so." + ver, "libnvidia-glcore.so." + ver, elf.ELFCLASS64, ""},
		{h.LibDir + "/libGL.so.1", "libGL.so.1", elf.ELFCLASS64, "libnvidia-glcore.so." + ver},
		{h.Lib32Dir + "/libEGL.so", "libEGL.so.1", elf.ELFCLASS32, "libnvidia-eglcore.so." + ver},
		{h.LibDir + "/vdpau/libvdpau_nvidia.so.1", "libvdpau_nvidia.so.1", elf.ELFCLASS64, ""},
		{h.LibDir + "/mesa/libGL.so.1", "libGL.so.1", elf.ELFCLASS64, ""},
	} {
		f, err := elf.Open(filepath.Join(h.Root, tc.path))
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		soname, _ := f.DynString(elf.DT_SONAME)
		needed, _ := f.DynString(elf.DT_NEEDED)
		if len(soname) != 1 || soname[0] != tc.soname || f.Class != tc.class {
			t.Errorf("%s: SONAME %q class %v, want %q %v", tc.path, soname, f.Class, tc.soname, tc.class)
		}
		if !slices.Contains(needed, "libc.so.6") || (tc.needs != "" && !slices.Contains(needed, tc.needs)) {
			t.Errorf("%s: NEEDED %q, want libc.so.6 and %q", tc.path, needed, tc.needs)
		}
		if strings.Contains(tc.path, "mesa") && slices.ContainsFunc(needed, func(s string) bool { return strings.HasPrefix(s, "libnvidia-") }) {
			t.Errorf("%s: the Mesa decoy needs %q", tc.path, needed)
		}
		f.Close()
	}
}

// TestDriverTLSNote checks the ABI notes of the real and the decoy TLS
// libraries with readelf, a second ELF reader.
func TestDriverTLSNote(t *testing.T) {
	readelf := testutil.RequireCommand(t, "readelf")
	h := writeDriverHost(t, Options{})
	for p, want := range map[string]string{
		h.LibDir + "/libnvidia-tls.so." + h.DriverVersion:               "ABI: 2.3.99",
		"/" + legacyDir + "/libnvidia-tls.so." + h.DriverVersion:        "ABI: 2.2.5",
		h.LibDir + "/libnvidia-tls.so." + decoyVersion(h.DriverVersion): "ABI: 2.3.99",
	} {
		out, err := exec.Command(readelf, "-n", filepath.Join(h.Root, p)).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "OS: Linux, "+want) {
			t.Errorf("readelf -n %s: %v, want %q in\n%s", p, err, want, out)
		}
	}
}

func TestDriverHostFields(t *testing.T) {
	for lay, want := range map[Layout][2]string{
		Debian: {"/usr/lib/x86_64-linux-gnu", "/usr/lib/i386-linux-gnu"},
		Fedora: {"/usr/lib64", "/usr/lib"},
	} {
		h := writeDriverHost(t, Options{Layout: lay, DriverVersion: "560.35.03"})
		if h.LibDir != want[0] || h.Lib32Dir != want[1] || h.CUDAVersion != "12.4" {
			t.Errorf("%s: LibDir %q Lib32Dir %q CUDAVersion %q, want %q %q 12.4", lay, h.LibDir, h.Lib32Dir, h.CUDAVersion, want[0], want[1])
		}
		if _, err := os.Stat(filepath.Join(h.Root, h.LibDir, "libcuda.so.560.35.03")); err != nil {
			t.Error(err)
		}
	}
}

func BenchmarkWriteDriver(b *testing.B) {
	n := dgxa100(b)
	for b.Loop() {
		writeDriverHost(b, Options{NVML: n})
	}
}
