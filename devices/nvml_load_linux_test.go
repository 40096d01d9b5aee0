//go:build cgo

package devices_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/testutil"
)

// fakeNVMLSource is a stand-in libnvidia-ml.so.1. VERSION is the driver
// version it reports; a constructor appends it to MARK, so a test sees
// which file was loaded. PARTIAL keeps only nvmlInit_v2; NO_MIG leaves out
// the architecture and MIG functions of drivers before R450. It has one
// GPU: minor 0, bus 0000:07:00.0, Tesla, compute capability 8.0.
const fakeNVMLSource = `
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
	int fd = open(MARK, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) { (void)!write(fd, VERSION "\n", strlen(VERSION) + 1); close(fd); }
}
int nvmlInit_v2(void) { return 0; }
#ifndef PARTIAL
static int dev;
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int r) { return "fake NVML error"; }
int nvmlSystemGetDriverVersion(char *v, unsigned n) { strncpy(v, VERSION, n); return 0; }
int nvmlSystemGetCudaDriverVersion(int *v) { *v = 12040; return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 1; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d) { *d = &dev; return i == 0 ? 0 : 2; }
int nvmlDeviceGetMinorNumber(void *d, unsigned *m) { *m = 0; return 0; }
int nvmlDeviceGetUUID(void *d, char *u, unsigned n) { strncpy(u, "GPU-fake", n); return 0; }
int nvmlDeviceGetPciInfo_v3(void *d, unsigned char *p) {
	unsigned loc[3] = {0, 7, 0};
	memset(p, 0, 68); memcpy(p + 16, loc, sizeof loc); return 0;
}
int nvmlDeviceGetName(void *d, char *s, unsigned n) { strncpy(s, "Fake GPU", n); return 0; }
int nvmlDeviceGetBrand(void *d, int *b) { *b = 2; return 0; }
int nvmlDeviceGetCudaComputeCapability(void *d, int *maj, int *min) { *maj = 8; *min = 0; return 0; }
#ifndef NO_MIG
int nvmlDeviceGetArchitecture(void *d, unsigned *a) { *a = 7; return 0; }
int nvmlDeviceGetMigMode(void *d, unsigned *c, unsigned *p) { *c = *p = 0; return 0; }
int nvmlDeviceGetMaxMigDeviceCount(void *d, unsigned *n) { *n = 0; return 0; }
int nvmlDeviceGetMigDeviceHandleByIndex(void *d, unsigned i, void **m) { return 6; }
int nvmlDeviceGetGpuInstanceId(void *d, unsigned *i) { return 3; }
int nvmlDeviceGetComputeInstanceId(void *d, unsigned *i) { return 3; }
int nvmlDeviceGetAttributes_v2(void *d, void *a) { return 3; }
#endif
#endif
`

// buildFakeNVML compiles the fake NVML into path with the given driver
// version, marker file and extra defines.
func buildFakeNVML(t *testing.T, path, version, mark string, defines ...string) {
	t.Helper()
	gcc := testutil.RequireCommand(t, "gcc")
	src := filepath.Join(t.TempDir(), "nvml.c")
	must(t, os.WriteFile(src, []byte(fakeNVMLSource), 0o644))
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	args := []string{"-shared", "-fPIC", "-o", path, src, "-Wl,-soname,libnvidia-ml.so.1",
		fmt.Sprintf("-DVERSION=%q", version), fmt.Sprintf("-DMARK=%q", mark)}
	for _, d := range defines {
		args = append(args, "-D"+d)
	}
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
}

// childResult is what TestDiscoverChild prints.
type childResult struct {
	Err  string        `json:"err,omitempty"`
	Host *devices.Host `json:"host,omitempty"`
}

// TestDiscoverChild is run by the NVML loading tests in a child process,
// because a library that lacks a function go-nvml calls aborts the whole
// process. It does nothing on its own.
func TestDiscoverChild(t *testing.T) {
	env := os.Getenv("NVC_DISCOVER_CHILD")
	if env == "" {
		return
	}
	var o devices.Options
	must(t, json.Unmarshal([]byte(env), &o))
	h, err := devices.Discover(&o)
	r := childResult{Host: h}
	if err != nil {
		r.Err = err.Error()
	}
	out, _ := json.Marshal(r)
	fmt.Printf("RESULT %s\n", out)
}

// discoverInChild runs Discover with o in a child process; the child must
// exit normally within 30 s.
func discoverInChild(t *testing.T, o devices.Options) childResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts, err := json.Marshal(o)
	must(t, err)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDiscoverChild$")
	cmd.Env = append(os.Environ(), "NVC_DISCOVER_CHILD="+string(opts))
	out, err := cmd.CombinedOutput()
	_, res, ok := strings.Cut(string(out), "RESULT ")
	if err != nil || !ok {
		t.Fatalf("Discover in a child process: %v (context: %v)\n%s", err, ctx.Err(), out)
	}
	var r childResult
	res, _, _ = strings.Cut(res, "\n")
	must(t, json.Unmarshal([]byte(res), &r))
	return r
}

// rootOptions discovers on h with NVML loaded from the driver root.
func rootOptions(t *testing.T, b devices.Backend) (devices.Options, string) {
	h := genHost(t, nil)
	lib := filepath.Join(h.Root, "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1")
	must(t, os.Remove(lib))
	return devices.Options{Backend: b, DriverRoot: h.Root, ProcRoot: h.ProcRoot, DevRoot: h.DevRoot}, lib
}

// TestNVMLPartialLibrary: a libnvidia-ml.so.1 that exports nvmlInit_v2 and
// nothing else is refused before Init (Auto falls back to procfs and says
// which function is missing); go-nvml would abort the process at the first
// call into a missing function.
func TestNVMLPartialLibrary(t *testing.T) {
	o, lib := rootOptions(t, devices.Auto)
	mark := filepath.Join(t.TempDir(), "loaded")
	buildFakeNVML(t, lib, "550.54.15", mark, "PARTIAL")
	r := discoverInChild(t, o)
	if r.Err != "" || r.Host.Backend != devices.Procfs || !strings.Contains(r.Host.NVMLError, "nvmlShutdown not found") {
		t.Errorf("auto: %q, %+v", r.Err, r.Host)
	}
	o.Backend = devices.NVML
	if r = discoverInChild(t, o); !strings.Contains(r.Err, "NVML unavailable") {
		t.Errorf("forced NVML: %q", r.Err)
	}
}

// TestNVMLOldDriver: a library without the architecture and MIG functions
// (drivers before R450) is still used; discovery sees them as
// ERROR_FUNCTION_NOT_FOUND, as libnvidia-container does.
func TestNVMLOldDriver(t *testing.T) {
	o, lib := rootOptions(t, devices.NVML)
	buildFakeNVML(t, lib, "418.226.00", filepath.Join(t.TempDir(), "loaded"), "NO_MIG")
	r := discoverInChild(t, o)
	if r.Err != "" || r.Host.DriverVersion != "418.226.00" || r.Host.CUDAVersion != "12.4" || len(r.Host.GPUs) != 1 {
		t.Fatalf("%q, %+v", r.Err, r.Host)
	}
	g := r.Host.GPUs[0]
	if g.UUID != "GPU-fake" || g.BusID != "00000000:07:00.0" || g.Brand != "Tesla" || g.ComputeCapability != "8.0" ||
		g.Architecture != "" || g.MIGCapable {
		t.Errorf("GPU %+v", g)
	}
}

// TestNVMLResolvedInRoot: the driver root's libnvidia-ml.so.1 is an
// absolute symlink. It must be followed inside the root (to the root's
// copy, driver 550.54.15), never to the host file of the same path
// (driver 111.11.11), which must not even be loaded.
func TestNVMLResolvedInRoot(t *testing.T) {
	o, lib := rootOptions(t, devices.NVML)
	mark := filepath.Join(t.TempDir(), "loaded")
	host := filepath.Join(t.TempDir(), "outside", "libnvidia-ml.so.1")
	buildFakeNVML(t, host, "111.11.11", mark)
	buildFakeNVML(t, filepath.Join(o.DriverRoot, host), "550.54.15", mark)
	must(t, os.Symlink(host, lib))
	r := discoverInChild(t, o)
	if r.Err != "" || r.Host.DriverVersion != "550.54.15" || r.Host.GPUs[0].Architecture != "Ampere" {
		t.Errorf("%q, %+v", r.Err, r.Host)
	}
	if loaded, _ := os.ReadFile(mark); string(loaded) != "550.54.15\n" {
		t.Errorf("libraries loaded: %q", loaded)
	}
}

// TestNVMLNotRegular: a FIFO in the library's place is refused, not opened
// (opening it would block until a writer appears).
func TestNVMLNotRegular(t *testing.T) {
	o, lib := rootOptions(t, devices.Auto)
	must(t, syscall.Mkfifo(lib, 0o644))
	r := discoverInChild(t, o)
	if r.Err != "" || r.Host.Backend != devices.Procfs || !strings.Contains(r.Host.NVMLError, "not a regular file") {
		t.Errorf("%q, %+v", r.Err, r.Host)
	}
}
