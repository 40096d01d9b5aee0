package cdihook

import (
	"context"
	"fmt"
	"regexp"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/rootfs"
)

// Where [UpdateApplicationProfile] writes the driver's application
// profile in the container.
const (
	AppProfileDir  = "/etc/nvidia/nvidia-application-profiles-rc.d"
	AppProfileFile = AppProfileDir + "/10-container.conf"
)

var gpuNodeName = regexp.MustCompile(`^nvidia[0-9]+$`)

// maxDevEntries bounds the names of the container's /dev looked at.
const maxDevEntries = 4096

// AppProfileResult says what [UpdateApplicationProfile] found and wrote.
type AppProfileResult struct {
	// Minors are the minors of the GPU nodes (/dev/nvidiaN, character
	// devices) found, in directory order; those of 64 and above are not
	// in the mask.
	Minors []uint32
	// Mask is the EGLVisibleDGPUDevices bit mask written; 0: nothing
	// was written.
	Mask uint64
}

// UpdateApplicationProfile restricts EGL and Vulkan in the container
// whose root filesystem is rootfsPath to its GPUs, as the toolkit's
// update-application-profile hook: it reads the container's /dev for
// character devices named nvidiaN and, if any has a minor below 64,
// writes [AppProfileFile] (mode 0444, its directory 0555) setting
// EGLVisibleDGPUDevices to the mask of those minors for every
// application. /dev is resolved inside the root and its entries are
// never followed; the file is written beside its place and renamed over
// it, so a symlink the image planted there is replaced, not written
// through.
func UpdateApplicationProfile(ctx context.Context, rootfsPath string) (AppProfileResult, error) {
	var res AppProfileResult
	if err := context.Cause(ctx); err != nil {
		return res, err
	}
	root, err := rootfs.Open(rootfsPath, nil)
	if err != nil {
		return res, err
	}
	defer root.Close()
	if res.Minors, err = gpuMinors(root); err != nil {
		return res, err
	}
	for _, m := range res.Minors {
		if m < 64 {
			res.Mask |= 1 << m
		}
	}
	if res.Mask == 0 {
		return res, nil
	}
	if _, err := root.MkdirAll(AppProfileDir, 0o555); err != nil {
		return res, fmt.Errorf("creating %s: %w", AppProfileDir, err)
	}
	if err := root.WriteFile(AppProfileFile, appProfile(res.Mask), 0o444); err != nil {
		return res, fmt.Errorf("writing %s: %w", AppProfileFile, err)
	}
	return res, nil
}

// appProfile is the profile file's content, byte for byte the toolkit's.
func appProfile(mask uint64) []byte {
	return fmt.Appendf(nil, `{"profiles":[{"name":"_container_","settings":["EGLVisibleDGPUDevices",0x%x]}],"rules":[{"pattern":[],"profile":"_container_"}]}`, mask)
}

// gpuMinors lists the minors of the character devices named nvidiaN in
// the container's /dev (not followed); a missing /dev has none.
func gpuMinors(root *rootfs.Root) ([]uint32, error) {
	dir, err := openDirInRoot(root, "/dev")
	if err != nil {
		return nil, ignoreMissing(err)
	}
	defer dir.Close()
	var minors []uint32
	seen := 0
	err = eachName(dir, "nvidia*", func(name string) bool {
		seen++
		var st unix.Stat_t
		if gpuNodeName.MatchString(name) && unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR {
			minors = append(minors, unix.Minor(st.Rdev))
		}
		return seen < maxDevEntries
	})
	return minors, err
}
