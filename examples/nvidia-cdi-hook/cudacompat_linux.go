//go:build !cgo

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/oci"
	"github.com/go-nvc/nvc/internal/rootfs"
)

// Where CUDA forward compatibility lives in an image, and where the hook
// says so.
const (
	compatDir       = "/usr/local/cuda/compat"
	compatLibGlob   = "libcuda.so.*.*"
	ldsoconfDir     = "/etc/ld.so.conf.d"
	compatConfGlob  = "00-compat-*.conf"
	maxCompatConf   = 64 << 10 // bytes read from one 00-compat-*.conf
	maxCompatConfs  = 64       // 00-compat-*.conf files read
	compatConfPerms = 0o644
)

// cudaCompatFlags declares enable-cuda-compat's flags and returns its
// action: when the image holds exactly one libcuda.so.X.Y.Z (a regular
// file) in /usr/local/cuda/compat and X is greater than the host driver's
// major version, write /etc/ld.so.conf.d/00-compat-nvidia-cdi-hook.conf
// naming that directory, for update-ldcache to scan first; otherwise make
// sure no entry of an earlier run is left (see convergeCompatConf).
// Nothing is mounted.
func cudaCompatFlags(fs *pflag.FlagSet) action {
	driver := fs.String("host-driver-version", "", "the host driver's `VERSION` (550.54.15); empty: do nothing")
	return func(rootfsPath string, h *hookEnv) error {
		if *driver == "" {
			h.log.Debug("no --host-driver-version: CUDA compat not considered")
			return nil
		}
		host, err := majorVersion(*driver)
		if err != nil {
			return fmt.Errorf("parsing --host-driver-version %q: %w", *driver, err)
		}
		root, err := rootfs.Open(rootfsPath, nil)
		if err != nil {
			return err
		}
		defer root.Close()
		return enableCompat(root, host, h)
	}
}

// enableCompat writes the compat configuration if the image's compat
// library is newer than the host driver (major hostMajor), and removes
// what earlier runs wrote otherwise.
func enableCompat(root *rootfs.Root, hostMajor int, h *hookEnv) error {
	use, err := compatNewer(root, hostMajor, h)
	if err != nil {
		return err
	}
	name, removed, err := convergeCompatConf(root, use)
	if len(removed) > 0 {
		h.log.Debug("removed stale CUDA compat entries", "dir", ldsoconfDir, "files", removed)
	}
	if err == nil && use {
		h.log.Debug("CUDA compat enabled", "conf", name)
	}
	return err
}

// compatNewer reports whether the image has exactly one compat library
// and it is newer than the host driver (major hostMajor).
func compatNewer(root *rootfs.Root, hostMajor int, h *hookEnv) (bool, error) {
	libs, err := compatLibs(root)
	if err != nil {
		return false, err
	}
	if len(libs) != 1 {
		h.log.Debug("CUDA compat not used: want exactly one library", "dir", compatDir, "found", libs)
		return false, nil
	}
	v, err := majorVersion(strings.TrimPrefix(libs[0], "libcuda.so."))
	if err != nil || v <= hostMajor {
		h.log.Debug("CUDA compat not used: library not newer than the driver", "library", libs[0], "host-major", hostMajor)
		return false, nil
	}
	h.log.Debug("CUDA compat library newer than the driver", "library", libs[0], "host-major", hostMajor)
	return true, nil
}

// majorVersion is the number before the first dot of v ("550.54.15").
func majorVersion(v string) (int, error) {
	s, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("major version %q is not a number", s)
	}
	return n, nil
}

// compatLibs lists the regular files matching libcuda.so.*.* in the
// image's compat dir, resolved inside the root (symlinked parents
// included); it stops at two. A missing dir is no library.
func compatLibs(root *rootfs.Root) ([]string, error) {
	dir, err := openDirInRoot(root, compatDir)
	if err != nil {
		return nil, ignoreMissing(err)
	}
	defer dir.Close()
	var libs []string
	err = eachName(dir, compatLibGlob, func(name string) bool {
		var st unix.Stat_t
		if unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			libs = append(libs, name)
		}
		return len(libs) < 2
	})
	return libs, err
}

// readCompatConfs returns the directories the root's
// /etc/ld.so.conf.d/00-compat-*.conf files list (absolute paths, each
// once, files in name order), as enable-cuda-compat writes them. Files
// are opened inside the root; one that is not a regular file, cannot be
// read or is larger than maxCompatConf is skipped, as glibc's ldconfig
// skips an unreadable configuration file; at most maxCompatConfs are read.
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
// file, nil if it cannot be read.
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
// root (openat2 RESOLVE_IN_ROOT, through pathrs-lite).
func openDirInRoot(root *rootfs.Root, unsafePath string) (*os.File, error) {
	h, err := pathrs.OpenatInRoot(root.File(), unsafePath)
	if err != nil {
		return nil, fmt.Errorf("opening %s in rootfs %q: %w", unsafePath, root.Path(), err)
	}
	defer h.Close()
	d, err := pathrs.Reopen(h, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("opening %s in rootfs %q: %w", unsafePath, root.Path(), err)
	}
	return d, nil
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
