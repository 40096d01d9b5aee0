package ldcache_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// TestMuslPathFile: the path file's new content puts the directories
// first and keeps the file's entries (or musl's defaults) after them, each
// once, and nothing is written.
func TestMuslPathFile(t *testing.T) {
	for _, c := range []struct{ name, spec, want string }{
		{"defaults", "", "/nv\n/lib\n/usr/local/lib\n/usr/lib\n"},
		{"own", "file etc/ld-musl-x86_64.path \"/usr/lib:/opt/x\\n/nv\\n\"\n", "/nv\n/usr/lib\n/opt/x\n"},
	} {
		root := testutil.Tree(t, "file lib/ld-musl-x86_64.so.1 \"x\"\ndir etc\n"+c.spec)
		file, data, err := ldcache.MuslPathFile(root, "amd64", []string{"/nv", "/nv"})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if file != "/etc/ld-musl-x86_64.path" || string(data) != c.want {
			t.Errorf("%s: %s = %q, want /etc/ld-musl-x86_64.path = %q", c.name, file, data, c.want)
		}
		if c.spec == "" {
			if _, err := os.Lstat(filepath.Join(root, file)); !os.IsNotExist(err) {
				t.Errorf("%s: the path file was written (%v)", c.name, err)
			}
		}
	}
}
