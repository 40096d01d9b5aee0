package ldcache_test

import (
	"encoding/binary"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/ldcache"
)

// syscallFloor is the least an incremental update can do under the
// issue's rules, as bare system calls on one goroutine, nothing decided
// and nothing checked: read the root's cache; list each directory
// holding a library of the full cache (getdents); stat each library file
// there (the ctime rule: a file rewritten in place is read again) and
// read each library symlink (where it leads: a link elsewhere cannot be
// told from a local one otherwise); open and read the head of each added
// file; write the new cache (write, fchmod, fsync, rename).
type syscallFloor struct {
	root  string
	dirs  []string // absolute, symlinks resolved, each once
	added []string // absolute
	cache []byte   // what is written
	buf   []byte
}

func newSyscallFloor(b *testing.B, root, cacheFile string, added []string) *syscallFloor {
	c, err := ldcache.OpenInRoot(root, cacheFile)
	require.NoError(b, err, "OpenInRoot %s", cacheFile)
	data, err := c.MarshalBinary()
	require.NoError(b, err)
	f := &syscallFloor{root: root, cache: data, buf: make([]byte, 64<<10)}
	seen := map[string]bool{}
	for _, e := range c.Entries {
		d, err := filepath.EvalSymlinks(filepath.Join(root, path.Dir(e.Path)))
		if err == nil && !seen[d] {
			seen[d] = true
			f.dirs = append(f.dirs, d)
		}
	}
	for _, a := range added {
		f.added = append(f.added, filepath.Join(root, a))
	}
	return f
}

func (f *syscallFloor) run(b *testing.B) {
	_, err := os.ReadFile(filepath.Join(f.root, "/etc/ld.so.cache"))
	require.NoError(b, err)
	for _, d := range f.dirs {
		f.dir(d)
	}
	for _, a := range f.added {
		if fd, err := unix.Open(a, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			unix.Pread(fd, f.buf[:4096], 0)
			unix.Close(fd)
		}
	}
	dst := filepath.Join(f.root, "/etc/ld.so.cache.floor")
	fd, err := unix.Open(dst+".tmp", unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	require.NoError(b, err)
	_, err = unix.Write(fd, f.cache)
	require.NoError(b, err)
	require.NoError(b, unix.Fchmod(fd, 0o644))
	require.NoError(b, unix.Fsync(fd))
	unix.Close(fd)
	require.NoError(b, unix.Rename(dst+".tmp", dst))
}

func (f *syscallFloor) dir(d string) {
	fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var stx unix.Statx_t
	for {
		n, err := unix.Getdents(fd, f.buf)
		if err != nil || n <= 0 {
			return
		}
		for b := f.buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:]))
			name := string(b[19:reclen])
			if i := strings.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if (strings.HasPrefix(name, "lib") || strings.HasPrefix(name, "ld-")) && strings.Contains(name, ".so") {
				switch b[18] {
				case unix.DT_REG:
					unix.Statx(fd, name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS, &stx)
				case unix.DT_LNK:
					unix.Readlinkat(fd, name, f.buf[len(f.buf)-4096:])
				}
			}
			b = b[reclen:]
		}
	}
}
