package cdihook

import (
	"context"
	"fmt"
	"path"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/rootfs"
)

// EnableCUDACompat applies the CUDA compat rule (see the package doc) to
// the container whose root filesystem is rootfsPath: when the compat dir
// (opts.CompatDir, default [CompatDir]) holds exactly one regular file
// libcuda.so.X.Y.Z that the host's versions call for, it writes
// [CompatConf] naming that dir, for [UpdateLDCache] to scan first;
// otherwise it makes sure no entry of an earlier run is left. Nothing is
// mounted. A nil opts, or one without host versions, changes nothing.
// The error of a version that is not a version quotes it.
func EnableCUDACompat(ctx context.Context, rootfsPath string, opts *CUDACompatOptions) (CUDACompatResult, error) {
	if err := context.Cause(ctx); err != nil {
		return CUDACompatResult{}, err
	}
	if opts == nil || (opts.HostDriverVersion == "" && opts.HostCUDAVersion == "") {
		return CUDACompatResult{Reason: "no host driver or CUDA version"}, nil
	}
	var host compatHost
	var err error
	if host.driver, err = optionalVersion("host driver", opts.HostDriverVersion); err != nil {
		return CUDACompatResult{}, err
	}
	if host.cuda, err = optionalVersion("host CUDA", opts.HostCUDAVersion); err != nil {
		return CUDACompatResult{}, err
	}
	dir := CompatDir
	if opts.CompatDir != "" {
		if !path.IsAbs(opts.CompatDir) {
			return CUDACompatResult{}, fmt.Errorf("compat dir %q is not absolute", opts.CompatDir)
		}
		dir = path.Clean(opts.CompatDir)
	}
	root, err := rootfs.Open(rootfsPath, nil)
	if err != nil {
		return CUDACompatResult{}, err
	}
	defer root.Close()
	return enableCompat(root, dir, host)
}

func optionalVersion(what, s string) (*version, error) {
	if s == "" {
		return nil, nil
	}
	v, err := parseVersion(s)
	if err != nil {
		return nil, fmt.Errorf("parsing %s version %q: %w", what, s, err)
	}
	return &v, nil
}

// enableCompat writes the compat configuration if the image's compat
// library in dir is called for by host, and removes what earlier runs
// wrote otherwise.
func enableCompat(root *rootfs.Root, dir string, host compatHost) (CUDACompatResult, error) {
	var res CUDACompatResult
	var err error
	if res.Libraries, res.Note, err = compatLibs(root, dir); err != nil {
		return res, err
	}
	res.Reason = compatReason(dir, res.Libraries, res.Note, host)
	res.Removed, err = convergeCompatConf(root, dir, res.Reason == "")
	res.Enabled = err == nil && res.Reason == ""
	return res, err
}

// compatLibs lists the regular files matching libcuda.so.*.* in the
// image's compat dir, resolved inside the root (symlinked parents
// included); it stops at two. A missing dir is no library. With one
// library, it also reads the library's note.
func compatLibs(root *rootfs.Root, compatDir string) ([]string, *CompatNote, error) {
	dir, err := openDirInRoot(root, compatDir)
	if err != nil {
		return nil, nil, ignoreMissing(err)
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
	if err != nil || len(libs) != 1 {
		return libs, nil, err
	}
	return libs, readCompatNote(dir, libs[0]), nil
}
