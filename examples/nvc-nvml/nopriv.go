//go:build cgo

package main

/*
#include <errno.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

// nvc_nopriv_step names the step of nvc_nopriv that failed, with its
// errno; NULL when every step succeeded.
const char *nvc_nopriv_step;
int nvc_nopriv_errno;

static void nvc_nopriv_fail(const char *step) {
	if (!nvc_nopriv_step) { nvc_nopriv_step = step; nvc_nopriv_errno = errno; }
}

// nvc_nopriv runs before the Go runtime starts (a constructor): on the
// process's one thread, so that every thread made later inherits it.
__attribute__((constructor)) static void nvc_nopriv(void) {
	// Only 0, 1, 2 and the library's descriptor 3 are the helper's: a
	// caller's descriptors without close-on-exec (Go's exec closes only
	// those with it) must not reach the library's code. 4 is the
	// executable NVMLHelperOptions ran, needed no more.
	if (syscall(SYS_close_range, 4U, ~0U, 0U) != 0) {
		struct rlimit r = {1024, 1024};
		getrlimit(RLIMIT_NOFILE, &r);
		for (rlim_t fd = 4; fd < r.rlim_cur && fd < (1 << 20); fd++)
			close((int)fd);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		nvc_nopriv_fail("PR_SET_NO_NEW_PRIVS");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		nvc_nopriv_fail("PR_CAP_AMBIENT_CLEAR_ALL");
	// Without CAP_SETPCAP (any unprivileged user) the bounding set stays:
	// with no permitted capabilities and no new privileges it gives none.
	for (int c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EPERM && errno != EINVAL)
			nvc_nopriv_fail("PR_CAPBSET_DROP");
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {{0, 0, 0}, {0, 0, 0}};
	if (syscall(SYS_capset, &h, d) != 0)
		nvc_nopriv_fail("capset");
	// Not dumpable, as libnvidia-container's helper is after its setuid
	// (this one's exec made it dumpable again): no other process of its
	// user (nobody is shared) may ptrace it or open its /proc files, and
	// so change the snapshot its caller trusts.
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		nvc_nopriv_fail("PR_SET_DUMPABLE");
}
*/
import "C"

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// checkNoPrivileges fails when the constructor failed, or when the calling
// thread has a capability or may gain privileges.
func checkNoPrivileges() error {
	if C.nvc_nopriv_step != nil {
		return fmt.Errorf("dropping privileges: %s: %w", C.GoString(C.nvc_nopriv_step), syscall.Errno(C.nvc_nopriv_errno))
	}
	f, err := os.Open("/proc/thread-self/status")
	if err != nil {
		return err
	}
	defer f.Close()
	want := map[string]string{"CapPrm": "0000000000000000", "CapEff": "0000000000000000",
		"CapInh": "0000000000000000", "CapAmb": "0000000000000000", "NoNewPrivs": "1"}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		w, ok := want[k]
		if !ok {
			continue
		}
		if v = strings.TrimSpace(v); v != w {
			return fmt.Errorf("privileges left: %s is %s, want %s", k, v, w)
		}
		delete(want, k)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for k := range want {
		if k != "CapAmb" { // kernels before 4.3 have no ambient set
			return errors.New("privileges unknown: /proc/thread-self/status has no " + k)
		}
	}
	return nil
}
