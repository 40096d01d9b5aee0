package nvcontainer

import (
	"github.com/go-nvc/nvc/internal/oci"
	"github.com/go-nvc/nvc/internal/sentinel"
)

// ErrPermission is matched (with errors.Is) when Apply or host preparation
// is refused for want of a privilege: entering the container's mount
// namespace needs CAP_SYS_ADMIN, opening it CAP_SYS_PTRACE over a process
// of another user, creating device nodes CAP_MKNOD. The error names the
// capability. It matches fs.ErrPermission too, and is the same value as
// devices.ErrPermission.
var ErrPermission = sentinel.ErrPermission

// ErrInvalidRootfs is matched when a container's root filesystem is
// unusable: by [NewPlan] when it is relative or "/", by nvcli.Container, and
// by toolkit.ContainerFor and toolkit.RequestFromHook when neither the
// state nor the spec gives one (or it is "/").
var ErrInvalidRootfs = oci.ErrInvalidRootfs
