package cdihook

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/rootfs"
)

// EnableCUDACompat applies the CUDA compat rule (see the package doc) to
// the container whose root filesystem is rootfsPath: when [CompatDir] holds
// exactly one regular file libcuda.so.X.Y.Z and X is greater than the
// major of opts.HostDriverVersion, it writes [CompatConf] naming
// [CompatDir], for [UpdateLDCache] to scan first; otherwise it makes sure
// no entry of an earlier run is left. Nothing is mounted. A nil opts, or
// an empty HostDriverVersion, changes nothing. The error of a version
// that is not a number quotes it.
func EnableCUDACompat(ctx context.Context, rootfsPath string, opts *CUDACompatOptions) (CUDACompatResult, error) {
	if err := context.Cause(ctx); err != nil {
		return CUDACompatResult{}, err
	}
	if opts == nil || opts.HostDriverVersion == "" {
		return CUDACompatResult{Reason: "no host driver version"}, nil
	}
	host, err := majorVersion(opts.HostDriverVersion)
	if err != nil {
		return CUDACompatResult{}, fmt.Errorf("parsing host driver version %q: %w", opts.HostDriverVersion, err)
	}
	root, err := rootfs.Open(rootfsPath, nil)
	if err != nil {
		return CUDACompatResult{}, err
	}
	defer root.Close()
	return enableCompat(root, host)
}

// enableCompat writes the compat configuration if the image's compat
// library is newer than the host driver (major hostMajor), and removes
// what earlier runs wrote otherwise.
func enableCompat(root *rootfs.Root, hostMajor int) (CUDACompatResult, error) {
	var res CUDACompatResult
	var err error
	if res.Libraries, err = compatLibs(root); err != nil {
		return res, err
	}
	res.Reason = compatReason(res.Libraries, hostMajor)
	res.Removed, err = convergeCompatConf(root, res.Reason == "")
	res.Enabled = err == nil && res.Reason == ""
	return res, err
}

// compatReason says why compat is not used with libs in the compat dir
// and a driver of major hostMajor; "" when it is.
func compatReason(libs []string, hostMajor int) string {
	if len(libs) != 1 {
		return fmt.Sprintf("want exactly one %s in %s, found %d", compatLibGlob, CompatDir, len(libs))
	}
	v, err := majorVersion(strings.TrimPrefix(libs[0], "libcuda.so."))
	if err != nil || v <= hostMajor {
		return fmt.Sprintf("%s is not newer than the host driver (major %d)", libs[0], hostMajor)
	}
	return ""
}

// compatLibs lists the regular files matching libcuda.so.*.* in the
// image's compat dir, resolved inside the root (symlinked parents
// included); it stops at two. A missing dir is no library.
func compatLibs(root *rootfs.Root) ([]string, error) {
	dir, err := openDirInRoot(root, CompatDir)
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
