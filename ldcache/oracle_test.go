package ldcache_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// runLdconfig runs glibc's ldconfig (the peer these tests compare
// against, from testutil.GlibcLdconfig, which logs its version; the
// expected one is Debian's 2.36) with args and returns its stdout,
// failing tb on a non-zero exit. With -r it gates on root: only then does
// ldconfig chroot into ROOT, which the comparisons assume (without it,
// it resolves paths itself and rejects relative include patterns).
func runLdconfig(tb testing.TB, args ...string) []byte {
	tb.Helper()
	if slices.Contains(args, "-r") {
		testutil.RequireRoot(tb)
	}
	cmd := exec.Command(testutil.GlibcLdconfig(tb), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("ldconfig %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// glibcWrites runs glibc's `ldconfig -r root -X -C /etc/glibc.cache` with
// args added (options, then directories) and returns the file it wrote
// and its parsed form.
func glibcWrites(t *testing.T, root string, args ...string) ([]byte, *ldcache.Cache) {
	t.Helper()
	runLdconfig(t, append([]string{"-r", root, "-X", "-C", "/etc/glibc.cache"}, args...)...)
	b, err := os.ReadFile(filepath.Join(root, "etc/glibc.cache"))
	require.NoError(t, err)
	c, err := ldcache.Parse(b)
	require.NoError(t, err, "Parse glibc's cache")
	return b, c
}
