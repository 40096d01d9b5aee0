package fakehost

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.NoError(t, writeDriver(h, o), "writeDriver")
	return h
}

// dgxa100 is the fake NVML of a DGX A100 at the default versions.
func dgxa100(t testing.TB) devices.NVMLInterface {
	t.Helper()
	n, err := fakenvml.New("dgxa100", nil)
	require.NoError(t, err, "fakenvml.New")
	return n
}

// glibcEntries runs glibc's ldconfig on root's ld.so.conf, without touching
// links, into a cache of its own, and returns `ldconfig -p`'s lines for it.
func glibcEntries(t *testing.T, root string) []string {
	t.Helper()
	out, err := exec.Command(testutil.GlibcLdconfig(t), "-X", "-r", root, "-C", "/glibc-ld.so.cache").CombinedOutput()
	require.NoError(t, err, "ldconfig -r %s\n%s", root, out)
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
			assert.Len(t, stale, len(ours)-len(rest), "stale entries in our cache\n%s", strings.Join(ours, "\n"))
			assert.Equal(t, glibc, rest, "ldconfig -p of our cache\n%s\nof glibc's, built from the same tree\n%s", strings.Join(ours, "\n"), strings.Join(glibc, "\n"))
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
				assert.Contains(t, ours, want, "our cache lacks %q", want)
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
		t.Run(tc.path, func(t *testing.T) {
			f, err := elf.Open(filepath.Join(h.Root, tc.path))
			require.NoError(t, err, tc.path)
			defer f.Close()
			soname, _ := f.DynString(elf.DT_SONAME)
			needed, _ := f.DynString(elf.DT_NEEDED)
			assert.Equal(t, []string{tc.soname}, soname, "%s: SONAME", tc.path)
			assert.Equal(t, tc.class, f.Class, "%s: class", tc.path)
			assert.Contains(t, needed, "libc.so.6", "%s: NEEDED", tc.path)
			if tc.needs != "" {
				assert.Contains(t, needed, tc.needs, "%s: NEEDED", tc.path)
			}
			if strings.Contains(tc.path, "mesa") {
				assert.False(t, slices.ContainsFunc(needed, func(s string) bool { return strings.HasPrefix(s, "libnvidia-") }), "%s: the Mesa decoy needs %q", tc.path, needed)
			}
		})
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
		t.Run(p, func(t *testing.T) {
			out, err := exec.Command(readelf, "-n", filepath.Join(h.Root, p)).CombinedOutput()
			require.NoError(t, err, "readelf -n %s\n%s", p, out)
			assert.Contains(t, string(out), "OS: Linux, "+want, "readelf -n %s", p)
		})
	}
}

func TestDriverHostFields(t *testing.T) {
	for lay, want := range map[Layout][2]string{
		Debian: {"/usr/lib/x86_64-linux-gnu", "/usr/lib/i386-linux-gnu"},
		Fedora: {"/usr/lib64", "/usr/lib"},
	} {
		t.Run(string(lay), func(t *testing.T) {
			h := writeDriverHost(t, Options{Layout: lay, DriverVersion: "560.35.03"})
			assert.Equal(t, want[0], h.LibDir, "%s: LibDir", lay)
			assert.Equal(t, want[1], h.Lib32Dir, "%s: Lib32Dir", lay)
			assert.Equal(t, "12.4", h.CUDAVersion, "%s: CUDAVersion", lay)
			_, err := os.Stat(filepath.Join(h.Root, h.LibDir, "libcuda.so.560.35.03"))
			assert.NoError(t, err)
		})
	}
}

func BenchmarkWriteDriver(b *testing.B) {
	n := dgxa100(b)
	for b.Loop() {
		writeDriverHost(b, Options{NVML: n})
	}
}
