package devices

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/sentinel"

	"github.com/go-nvc/nvc/internal/inroot"
	"github.com/go-nvc/nvc/internal/ns"
)

// CreateNodes makes the NVIDIA device nodes that are missing under the dev
// root — the host-side half of libnvidia-container's --load-kmods, done as
// nvidia-modprobe does it: nvidiactl and /dev/nvidiaN for every GPU in
// /proc/driver/nvidia/gpus, nvidia-uvm and nvidia-uvm-tools, nvidia-modeset,
// the nvidia-caps nodes of every MIG capability present in procfs, and the
// IMEX channels asked for. Majors come from /proc/devices; modes and owners
// from /proc/driver/nvidia/params (DeviceFileMode/UID/GID), or from each
// capability's file; with ModifyDeviceFiles (DeviceFileModify) 0 a node is
// left alone. A node of the wrong type or number is replaced, one with the
// wrong mode or owner corrected, a correct one untouched, so CreateNodes is
// idempotent.
//
// Inside a user namespace (uid_map or gid_map not the identity, or
// setgroups "deny") it does nothing and says so, as libnvidia-container
// does. It needs CAP_MKNOD and CAP_CHOWN, and CAP_SYS_MODULE for modprobe.
//
// ctx bounds the modprobe runs (each is also killed after
// NodeOptions.ModprobeTimeout); when ctx is done CreateNodes returns its
// error.
func CreateNodes(ctx context.Context, opts *NodeOptions) (*NodeReport, error) {
	o := withNodeDefaults(opts)
	r := &NodeReport{}
	if why := userNamespace(o.Roots.Proc); why != "" {
		r.Skipped = "inside a user namespace (" + why + ")"
		return r, nil
	}
	loaded, err := loadModules(ctx, &o, r)
	if err != nil {
		return r, err
	}
	nodes, err := nodesToCreate(&o, loaded, r)
	if err != nil {
		return r, fmt.Errorf("creating device nodes: %w", err)
	}
	for _, n := range nodes {
		if err := ensureNode(o.Roots.Dev, n, r); err != nil {
			return r, fmt.Errorf("creating device node %s: %w", n.Path, err)
		}
	}
	return r, nil
}

func withNodeDefaults(opts *NodeOptions) NodeOptions {
	var o NodeOptions
	if opts != nil {
		o = *opts
	}
	o.Roots = o.Roots.WithDefaults()
	return o
}

func nodesToCreate(o *NodeOptions, loaded map[string]bool, r *NodeReport) ([]wantNode, error) {
	f, err := readProcFacts(o.Roots.Proc)
	if err != nil {
		return nil, err
	}
	paramsPath := f.path(ProcDriver + "/params")
	data, err := readParams(paramsPath)
	if err != nil {
		return nil, err
	}
	params, err := readFileParams(paramsPath, data)
	if err != nil {
		return nil, err
	}
	if err := checkIMEXChannels(paramsPath, data, o.IMEXChannels); err != nil {
		return nil, err
	}
	infos, err := readInformation(f)
	if err != nil {
		return nil, err
	}
	minors := make([]uint32, len(infos))
	for i, in := range infos {
		minors[i] = in.minor
	}
	nodes, warn := plannedNodes(f, params, minors, loaded, o.IMEXChannels)
	r.Warnings = append(r.Warnings, warn...)
	if !loaded["nvidia"] {
		return nodes, nil
	}
	caps, err := capNodes(f)
	return append(nodes, caps...), err
}

// userNamespace says why the process seems to be in a user namespace, or
// "" when uid_map and gid_map are the identity (or absent, as in a
// procfs image without self/) and setgroups is not "deny".
func userNamespace(procRoot string) string {
	for _, m := range []string{"uid_map", "gid_map"} {
		data, err := os.ReadFile(filepath.Join(procRoot, "self", m))
		if err == nil && !ns.IdentityMap(string(data)) {
			return m + " is not the identity"
		}
	}
	data, err := os.ReadFile(filepath.Join(procRoot, "self", "setgroups"))
	if err == nil && strings.TrimSpace(string(data)) == "deny" {
		return "setgroups is deny"
	}
	return ""
}

// ensureNode makes n under devRoot the way nvidia-modprobe's mknod_helper
// does, working relative to the opened parent directory and checking the
// result without following symlinks.
func ensureNode(devRoot string, n wantNode, r *NodeReport) error {
	if !n.modify {
		return nil
	}
	dir := filepath.Join(devRoot, filepath.Dir(strings.TrimPrefix(n.Path, "/dev/")))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dfd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	name := filepath.Base(n.Path)
	created, err := makeNode(dfd, name, n)
	if err != nil {
		return err
	}
	changed, err := setAttrs(dfd, name, n)
	switch {
	case err != nil:
		if created {
			unix.Unlinkat(dfd, name, 0)
		}
		return err
	case created:
		r.Created = append(r.Created, n.Node)
	case changed:
		r.Fixed = append(r.Fixed, n.Node)
	}
	return nil
}

// makeNode creates the node unless a character device with the right
// number is there; something else in its place is removed first.
func makeNode(dfd int, name string, n wantNode) (bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil && isNode(&st, n.Node) {
		return false, nil
	}
	if err == nil {
		if err := removeAt(dfd, name, &st); err != nil {
			return false, err
		}
	} else if err != unix.ENOENT {
		return false, os.NewSyscallError("fstatat", err)
	}
	dev := unix.Mkdev(n.Major, n.Minor)
	if err := unix.Mknodat(dfd, name, unix.S_IFCHR|uint32(n.mode), int(dev)); err != nil {
		return false, sentinel.Permission("creating device node "+name, "CAP_MKNOD", os.NewSyscallError("mknodat", err))
	}
	return true, nil
}

func isNode(st *unix.Stat_t, n Node) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFCHR && unix.Major(st.Rdev) == n.Major && unix.Minor(st.Rdev) == n.Minor
}

func removeAt(dfd int, name string, st *unix.Stat_t) error {
	flags := 0
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		flags = unix.AT_REMOVEDIR
	}
	return os.NewSyscallError("unlinkat", unix.Unlinkat(dfd, name, flags))
}

// setAttrs gives the node its mode and owner, after checking through an
// O_PATH descriptor that it is still the node made; it reports a change.
func setAttrs(dfd int, name string, n wantNode) (bool, error) {
	fd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, os.NewSyscallError("openat", err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, os.NewSyscallError("fstat", err)
	}
	if !isNode(&st, n.Node) {
		return false, fmt.Errorf("%w: %s is not character device %d:%d after mknod", ErrInvalid, n.Path, n.Major, n.Minor)
	}
	if st.Mode&0o777 == uint32(n.mode) && st.Uid == n.uid && st.Gid == n.gid {
		return false, nil
	}
	if err := unix.Fchownat(fd, "", int(n.uid), int(n.gid), unix.AT_EMPTY_PATH); err != nil {
		return false, os.NewSyscallError("fchownat", err)
	}
	return true, chmodFD(fd, n.mode)
}

// chmodFD changes the mode of the inode fd (an O_PATH descriptor) refers
// to, never of a name that could have been swapped for a symlink since it
// was checked: fchmodat2(AT_EMPTY_PATH) on Linux 6.6 and later, else
// chmod of the descriptor's /proc/thread-self/fd link, which the kernel
// resolves to that same inode.
func chmodFD(fd int, mode fs.FileMode) error {
	err := unix.Fchmodat(fd, "", uint32(mode), unix.AT_EMPTY_PATH)
	if err != unix.EOPNOTSUPP && err != unix.ENOSYS {
		return os.NewSyscallError("fchmodat2", err)
	}
	return chmodProcFD(fd, mode)
}

func chmodProcFD(fd int, mode fs.FileMode) error {
	p := "/proc/thread-self/fd/" + strconv.Itoa(fd)
	if err := unix.Chmod(p, uint32(mode)); err != nil {
		return &os.PathError{Op: "chmod", Path: p, Err: err}
	}
	return nil
}

// maxParamsSize bounds the driver's params file (a few hundred bytes).
const maxParamsSize = 64 << 10

// readParams reads the driver's params file, nil if it is missing. It is
// read as every file that may not be what it claims (inroot.ReadRegular):
// opened O_PATH and read only if fstat says it is a regular file, so a
// device node or FIFO at the path (a proc root an image controls) is
// refused, never opened.
func readParams(path string) ([]byte, error) {
	data, err := inroot.ReadRegularFile(path, maxParamsSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}
