package cdihook

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
	"github.com/go-nvc/nvc/internal/oci"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// compatConfName is CompatConf's name in /etc/ld.so.conf.d.
var compatConfName = path.Base(CompatConf)

// generatedCompatConf matches the names earlier hooks gave their entry:
// 00-compat-<12 hex digits>.conf (this hook before it used
// CompatConf) and 00-compat-<uuid>.conf (NVIDIA's nvidia-cdi-hook).
var generatedCompatConf = regexp.MustCompile(`^00-compat-([0-9a-f]{12}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.conf$`)

// isHookCompatConf reports whether name in /etc/ld.so.conf.d is an entry a
// hook wrote: compatConfName or a generated name, listing the compat dir
// and nothing else. Anything else there is the image's and is left alone.
func isHookCompatConf(root *rootfs.Root, name, compatDir string) bool {
	if name != compatConfName && !generatedCompatConf.MatchString(name) {
		return false
	}
	dirs := readConfDirs(root, path.Join(ldsoconfDir, name))
	return slices.Equal(dirs, []string{CompatDir}) || slices.Equal(dirs, []string{compatDir})
}

// convergeCompatConf makes the hook's entries in /etc/ld.so.conf.d what
// one clean run leaves: with use, CompatConf naming the compat dir and no
// other; without, none. Entries of earlier runs (and of NVIDIA's hook) are
// removed, so that a stale one cannot keep an older compat libcuda.so.1
// first after the host driver was upgraded past it. At most
// maxCompatConfs candidates are looked at per run. It returns the names
// removed.
func convergeCompatConf(root *rootfs.Root, compatDir string, use bool) (removed []string, err error) {
	if use {
		if err := root.WriteFile(CompatConf, []byte(compatDir+"\n"), compatConfPerms); err != nil {
			return nil, fmt.Errorf("creating %s: %w", CompatConf, err)
		}
	}
	dir, err := openDirInRoot(root, ldsoconfDir)
	if err != nil {
		return nil, ignoreMissing(err)
	}
	defer dir.Close()
	var stale []string
	err = eachName(dir, compatConfGlob, func(name string) bool {
		if (name != compatConfName || !use) && (name == compatConfName || generatedCompatConf.MatchString(name)) {
			stale = append(stale, name)
		}
		return len(stale) < maxCompatConfs
	})
	if err != nil {
		return nil, err
	}
	for _, name := range stale {
		if !isHookCompatConf(root, name, compatDir) {
			continue
		}
		if err := unix.Unlinkat(int(dir.Fd()), name, 0); err != nil {
			return removed, fmt.Errorf("removing stale %s in rootfs %q: %w", path.Join(ldsoconfDir, name), root.Path(), err)
		}
		removed = append(removed, name)
	}
	return removed, nil
}

// readCompatConfs returns the directories the root's
// /etc/ld.so.conf.d/00-compat-*.conf files list (absolute paths, each
// once, files in name order), as EnableCUDACompat writes them. Files are
// opened inside the root; one that is not a regular file, cannot be read
// or is larger than maxCompatConf is skipped, as glibc's ldconfig skips
// an unreadable configuration file; at most maxCompatConfs are read.
func readCompatConfs(root *rootfs.Root) ([]string, error) {
	dir, err := openDirInRoot(root, ldsoconfDir)
	if err != nil {
		return nil, ignoreMissing(err)
	}
	var names []string
	err = eachName(dir, compatConfGlob, func(name string) bool {
		names = append(names, name)
		return len(names) < maxCompatConfs
	})
	dir.Close()
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var dirs []string
	for _, name := range names {
		for _, d := range readConfDirs(root, path.Join(ldsoconfDir, name)) {
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs, nil
}

// readConfDirs returns the absolute directories of one configuration
// file, nil if it cannot be read. The file is resolved inside the root
// and read only if fstat of its O_PATH descriptor shows a regular file.
func readConfDirs(root *rootfs.Root, file string) []string {
	f, err := root.OpenFile(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := oci.ReadLimited(f, maxCompatConf)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if d := strings.TrimSpace(line); path.IsAbs(d) {
			dirs = append(dirs, path.Clean(d))
		}
	}
	return dirs
}

// openDirInRoot opens unsafePath, a directory inside the root, for
// reading: every component, the last included, is resolved inside the
// root (internal/inroot: openat2 RESOLVE_IN_ROOT, or filepath-securejoin's
// walk). O_DIRECTORY makes anything but a directory fail before it is
// opened.
func openDirInRoot(root *rootfs.Root, unsafePath string) (*os.File, error) {
	fd, err := inroot.Open(root.File(), unsafePath, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("opening %s in rootfs %q: %w", unsafePath, root.Path(), err)
	}
	return os.NewFile(uintptr(fd), path.Join(root.Path(), unsafePath)), nil
}

// eachName calls fn with each name in dir matching pattern, in directory
// order, until fn returns false.
func eachName(dir *os.File, pattern string, fn func(string) bool) error {
	for {
		names, err := dir.Readdirnames(256)
		for _, n := range names {
			if ok, _ := path.Match(pattern, n); ok && !fn(n) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", dir.Name(), err)
		}
	}
}

// ignoreMissing turns "no such directory" (or a non-directory where one
// was expected) into nil.
func ignoreMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		return nil
	}
	return err
}
