package ldcache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Update makes the dynamic loader of the container root rootfs find the
// libraries in opts.FirstDirs and opts.Dirs: it rebuilds the root's cache
// as the root's own `ldconfig DIRS…` would (see Build) and replaces the
// cache file, or, in a musl root (FamilyMusl), puts the directories first
// in /etc/ld-musl-<arch>.path, keeping its existing entries (or musl's
// defaults) after them.
//
// The rootfs is treated as hostile: every path is resolved inside it, the
// new file is created with O_EXCL in a directory opened inside it and
// renamed over the old one within that directory, so neither a symlink at
// the cache path nor one at /etc can redirect the write to the host.
// Nothing is executed. Files are read as Build reads them: a device node
// or FIFO, planted or renamed over a library or configuration file, is
// never opened but skipped (a musl path file that is not regular is
// replaced). ctx stops the scan as in Build; the cache is then left as it
// was.
func Update(ctx context.Context, rootfs string, opts *UpdateOptions) error {
	var o UpdateOptions
	if opts != nil {
		o = *opts
	}
	t, r, err := openTarget(rootfs, o.GOARCH)
	if err != nil {
		return fmt.Errorf("updating ld.so.cache: %w", err)
	}
	defer r.close()
	if o.Family == FamilyAuto {
		o.Family = detectFamily(r, t)
	}
	dirs := append(slices.Clip(o.FirstDirs), o.Dirs...)
	if o.Family == FamilyMusl {
		if err := muslLinks(ctx, r, t, dirs, &o); err != nil {
			return fmt.Errorf("updating the SONAME links in %s: %w", rootfs, err)
		}
		return updateMusl(r, t, dirs, rootfs)
	}
	return updateCache(ctx, r, t, dirs, &o, rootfs)
}

// openTarget opens rootfs for the ldconfig of goarch.
func openTarget(rootfs, goarch string) (*target, *root, error) {
	t, err := newTarget(goarch)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", rootfs, err)
	}
	r, err := openRoot(rootfs)
	return t, r, err
}

func updateCache(ctx context.Context, r *root, t *target, dirs []string, o *UpdateOptions, rootfs string) error {
	file := o.Cache
	if file == "" {
		file = "/etc/ld.so.cache"
	}
	bo := &BuildOptions{Config: o.Config, Dirs: dirs, Family: o.Family, GOARCH: o.GOARCH, NoLinks: !o.Links, LinkDirs: o.LinkDirs, Format: o.Format, Generator: o.Generator}
	if o.Incremental {
		bo.Reuse, bo.Before, bo.Added = file, o.Before, o.Added
	}
	c, err := build(ctx, r, t, bo)
	if err != nil {
		return fmt.Errorf("updating ld.so.cache in %s: %w", rootfs, err)
	}
	b, err := c.MarshalBinary()
	if err != nil {
		return fmt.Errorf("updating ld.so.cache in %s: %w", rootfs, err)
	}
	if err := writeInRoot(r, file, b); err != nil {
		return fmt.Errorf("updating ld.so.cache %s in %s: %w", file, rootfs, err)
	}
	return nil
}

// muslLinks makes the SONAME links of o.LinkDirs in a musl root: there
// is no cache to build, so the directories are scanned for them alone.
func muslLinks(ctx context.Context, r *root, t *target, dirs []string, o *UpdateOptions) error {
	if !o.LinkDirs || len(dirs) == 0 {
		return nil
	}
	_, err := build(ctx, r, t, &BuildOptions{Dirs: dirs, OnlyDirs: true, Family: o.Family, GOARCH: o.GOARCH})
	return err
}

// muslDefaultPath is musl's library path when no path file exists.
var muslDefaultPath = []string{"/lib", "/usr/local/lib", "/usr/lib"}

func updateMusl(r *root, t *target, dirs []string, rootfs string) error {
	file, data := muslPath(r, t, dirs)
	if err := writeInRoot(r, file, data); err != nil {
		return fmt.Errorf("updating musl path file %s in %s: %w", file, rootfs, err)
	}
	return nil
}

// MuslPathFile is what Update writes in a musl root, without writing it:
// the path file of rootfs's loader for goarch ("": the running one) and
// its new content, dirs first, then the file's present entries (musl's
// defaults when it has none), each once. A caller that records its own
// undo (nvcontainer's Apply) writes it through its own rootfs handle.
func MuslPathFile(rootfs, goarch string, dirs []string) (file string, data []byte, err error) {
	t, r, err := openTarget(rootfs, goarch)
	if err != nil {
		return "", nil, fmt.Errorf("reading the musl path file: %w", err)
	}
	defer r.close()
	if t.muslArch == "" {
		return "", nil, fmt.Errorf("reading the musl path file of %s: musl has no loader for %s", rootfs, t.goarch)
	}
	file, data = muslPath(r, t, dirs)
	return file, data, nil
}

// muslPath is the path file of t's musl loader and its content with dirs
// put first.
func muslPath(r *root, t *target, dirs []string) (file string, data []byte) {
	file = "/etc/ld-musl-" + t.muslArch + ".path"
	old := muslDefaultPath
	if b, err := r.readFile(file, 1<<20); err == nil {
		old = strings.FieldsFunc(string(b), func(c rune) bool { return c == '\n' || c == ':' })
	}
	var out []string
	for _, d := range append(slices.Clip(dirs), old...) {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return file, []byte(strings.Join(out, "\n") + "\n")
}

// writeInRoot replaces unsafePath inside the root with data, atomically,
// acting only through a file descriptor of its directory.
func writeInRoot(r *root, unsafePath string, data []byte) error {
	dir, base := path.Split(path.Clean("/" + unsafePath))
	if base == "" || base == "." || base == ".." {
		return fmt.Errorf("%q names no file", unsafePath)
	}
	dfd, err := r.open(dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return fmt.Errorf("opening %s: %w", dir, err)
	}
	defer unix.Close(dfd)
	tmp := "." + base + ".nvc-" + randomSuffix()
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("creating %s%s: %w", dir, tmp, err)
	}
	err = writeSync(fd, data)
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, base)
	}
	if err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("writing %s%s: %w", dir, base, err)
	}
	return nil
}

func writeSync(fd int, data []byte) error {
	defer unix.Close(fd)
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err != nil {
			return err
		}
		data = data[n:]
	}
	if err := unix.Fchmod(fd, 0o644); err != nil {
		return err
	}
	return unix.Fsync(fd)
}

func randomSuffix() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// OpenInRoot reads and parses the cache file at unsafePath inside rootfs
// (libnvidia-container's --ldcache under --root), resolving every symlink
// inside rootfs. A cache that is not a regular file is refused unopened:
// the error wraps inroot.ErrNotRegular ("not a regular file") and names
// the path.
func OpenInRoot(rootfs, unsafePath string) (*Cache, error) {
	r, err := openRoot(rootfs)
	if err != nil {
		return nil, fmt.Errorf("reading ld.so.cache: %w", err)
	}
	defer r.close()
	b, err := r.readFile(unsafePath, MaxCacheSize)
	if err != nil {
		return nil, fmt.Errorf("reading ld.so.cache %s in %s: %w", unsafePath, rootfs, err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("reading ld.so.cache %s in %s: %w", unsafePath, rootfs, err)
	}
	return c, nil
}

// WriteFileInRoot encodes c and replaces the file at unsafePath inside
// rootfs as Update does: resolved inside rootfs, created next to the old
// file through its directory's descriptor, synced, mode 0644, renamed.
func WriteFileInRoot(rootfs, unsafePath string, c *Cache) error {
	b, err := c.MarshalBinary()
	if err != nil {
		return fmt.Errorf("writing ld.so.cache %s in %s: %w", unsafePath, rootfs, err)
	}
	r, err := openRoot(rootfs)
	if err != nil {
		return fmt.Errorf("writing ld.so.cache: %w", err)
	}
	defer r.close()
	if err := writeInRoot(r, unsafePath, b); err != nil {
		return fmt.Errorf("writing ld.so.cache %s in %s: %w", unsafePath, rootfs, err)
	}
	return nil
}
