package ldcache_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		t.Run(c.name, func(t *testing.T) {
			root := testutil.Tree(t, "file lib/ld-musl-x86_64.so.1 \"x\"\ndir etc\n"+c.spec)
			file, data, err := ldcache.MuslPathFile(root, "amd64", []string{"/nv", "/nv"})
			require.NoError(t, err, c.name)
			assert.Equal(t, "/etc/ld-musl-x86_64.path", file, "%s: file", c.name)
			assert.Equal(t, c.want, string(data), "%s: content", c.name)
			if c.spec == "" {
				_, err := os.Lstat(filepath.Join(root, file))
				assert.ErrorIs(t, err, fs.ErrNotExist, "%s: the path file was written", c.name)
			}
		})
	}
}
