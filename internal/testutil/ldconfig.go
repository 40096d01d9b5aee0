package testutil

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// GlibcLdconfig returns glibc's ldconfig, the peer tests check caches
// against, and logs its version ("peer: ldconfig (Debian GLIBC
// 2.36-9+deb12u9) 2.36"). It looks in /usr/sbin and /sbin before PATH,
// which for a user often lacks them; without it tb is [Unavailable].
func GlibcLdconfig(tb testing.TB) string {
	tb.Helper()
	p := ""
	for _, c := range []string{"/usr/sbin/ldconfig", "/sbin/ldconfig"} {
		if _, err := os.Stat(c); err == nil {
			p = c
			break
		}
	}
	if p == "" {
		p = RequireCommand(tb, "ldconfig")
	}
	v, _ := exec.Command(p, "--version").Output()
	first, _, _ := strings.Cut(string(v), "\n")
	tb.Logf("peer: %s", first)
	return p
}

// LdconfigEntries returns the entries glibc's `ldconfig -p -C cache`
// prints for the cache file, in its order, one per line without the
// leading tab: "libcuda.so.1 (libc6,x86-64) => /usr/lib64/libcuda.so.1".
func LdconfigEntries(tb testing.TB, cache string) []string {
	tb.Helper()
	out, err := exec.Command(GlibcLdconfig(tb), "-p", "-C", cache).CombinedOutput()
	if err != nil {
		tb.Fatalf("ldconfig -p -C %s: %v\n%s", cache, err, out)
	}
	var entries []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "\t") {
			entries = append(entries, strings.TrimSpace(l))
		}
	}
	return entries
}
