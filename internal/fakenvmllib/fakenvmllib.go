// Package fakenvmllib builds a stand-in libnvidia-ml.so.1 in C for tests
// that load NVML for real (dlopen through go-nvml), or check that a
// command does not.
//
// The library has one GPU: minor 0, bus 0000:07:00.0, brand Tesla,
// compute capability 8.0, CUDA 12.4. Its nvmlInit_v2 behaves as a GPU
// without persistence mode: it sleeps FAKE_NVML_INIT_DELAY_MS
// milliseconds (read from the environment at each call; unset: no delay)
// and, when FAKE_NVML_INIT_MARK names a file, appends "init\n" to it, so a
// test sees whether, and how often, NVML was started; when
// FAKE_NVML_INIT_STATUS names one, it copies its thread's status there;
// when FAKE_NVML_INIT_FDS names one, it lists its open descriptors there.
package fakenvmllib

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-nvc/nvc/internal/testutil"
)

// Environment variables the library reads in nvmlInit_v2.
const (
	EnvInitDelayMS = "FAKE_NVML_INIT_DELAY_MS"
	EnvInitMark    = "FAKE_NVML_INIT_MARK"
	// EnvInitStatus names a file nvmlInit_v2 copies the calling
	// thread's /proc/thread-self/status to (its ids, capabilities and
	// NoNewPrivs), so a test sees what NVML's code ran with.
	EnvInitStatus = "FAKE_NVML_INIT_STATUS"
	// EnvInitPrint, when set, is printed on stdout by nvmlInit_v2, as a
	// chatty library might.
	EnvInitPrint = "FAKE_NVML_INIT_PRINT"
	// EnvInitFds names a file nvmlInit_v2 writes the process's open
	// descriptors to, one number a line (/proc/self/fd, the listing's own
	// descriptor left out), so a test sees what NVML's code could use.
	EnvInitFds = "FAKE_NVML_INIT_FDS"
)

// source is the library. VERSION is the driver version it reports and
// UUID its GPU's; a constructor appends VERSION to MARK, so a test sees
// which file was loaded. PARTIAL keeps only nvmlInit_v2; NO_MIG leaves out
// the architecture and MIG functions of drivers before R450.
const source = `
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
	int fd = open(MARK, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) { (void)!write(fd, VERSION "\n", strlen(VERSION) + 1); close(fd); }
}
int nvmlInit_v2(void) {
	const char *m = getenv("FAKE_NVML_INIT_MARK"), *d = getenv("FAKE_NVML_INIT_DELAY_MS");
	const char *st = getenv("FAKE_NVML_INIT_STATUS"), *pr = getenv("FAKE_NVML_INIT_PRINT");
	if (pr && *pr) (void)!write(1, pr, strlen(pr));
	if (st && *st) {
		char buf[8192];
		int in = open("/proc/thread-self/status", O_RDONLY), out = open(st, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		ssize_t n = in >= 0 ? read(in, buf, sizeof buf) : -1;
		if (out >= 0 && n > 0) (void)!write(out, buf, n);
		if (in >= 0) close(in);
		if (out >= 0) close(out);
	}
	if (m && *m) {
		int fd = open(m, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) { (void)!write(fd, "init\n", 5); close(fd); }
	}
	const char *fds = getenv("FAKE_NVML_INIT_FDS");
	if (fds && *fds) {
		DIR *dir = opendir("/proc/self/fd");
		FILE *out = fopen(fds, "w");
		struct dirent *e;
		while (dir && out && (e = readdir(dir)) != NULL)
			if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(dir) && atoi(e->d_name) != fileno(out))
				fprintf(out, "%s\n", e->d_name);
		if (dir) closedir(dir);
		if (out) fclose(out);
	}
	if (d && *d) {
		long ms = atol(d);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) != 0) {}
	}
	return 0;
}
#ifndef PARTIAL
static int dev;
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int r) { return "fake NVML error"; }
int nvmlSystemGetDriverVersion(char *v, unsigned n) { strncpy(v, VERSION, n); return 0; }
int nvmlSystemGetCudaDriverVersion(int *v) { *v = 12040; return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 1; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d) { *d = &dev; return i == 0 ? 0 : 2; }
int nvmlDeviceGetMinorNumber(void *d, unsigned *m) { *m = 0; return 0; }
int nvmlDeviceGetUUID(void *d, char *u, unsigned n) { strncpy(u, UUID, n); return 0; }
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

// Options say what Build compiles.
type Options struct {
	// Version is the driver version the library reports. Empty: 550.54.15.
	Version string
	// Mark is the file the library's constructor appends Version to when
	// it is loaded. Empty: /dev/null.
	Mark string
	// UUID is the GPU's UUID. Empty: GPU-fake.
	UUID string
	// Defines are more -D flags: PARTIAL, NO_MIG.
	Defines []string
}

// Build compiles the library into path (its directory is created) with gcc,
// skipping tb where gcc is missing (failing it under
// NVC_REQUIRE_PRIVILEGED, as testutil.RequireCommand does).
func Build(tb testing.TB, path string, o Options) {
	tb.Helper()
	gcc := testutil.RequireCommand(tb, "gcc")
	if o.Version == "" {
		o.Version = "550.54.15"
	}
	if o.Mark == "" {
		o.Mark = os.DevNull
	}
	if o.UUID == "" {
		o.UUID = "GPU-fake"
	}
	src := filepath.Join(tb.TempDir(), "nvml.c")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	args := []string{"-shared", "-fPIC", "-o", path, src, "-Wl,-soname,libnvidia-ml.so.1",
		fmt.Sprintf("-DVERSION=%q", o.Version), fmt.Sprintf("-DMARK=%q", o.Mark), fmt.Sprintf("-DUUID=%q", o.UUID)}
	for _, d := range o.Defines {
		args = append(args, "-D"+d)
	}
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		tb.Fatalf("gcc: %v\n%s", err, out)
	}
}
