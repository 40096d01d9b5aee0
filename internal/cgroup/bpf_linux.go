package cgroup

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// progQueryAttr is the BPF_PROG_QUERY part of union bpf_attr. It is declared
// up to revision: kernels from 6.17 write that field whatever size is passed.
type progQueryAttr struct {
	targetFd        uint32
	attachType      uint32
	queryFlags      uint32
	attachFlags     uint32
	progIDs         uint64
	progCount       uint32
	_               uint32
	progAttachFlags uint64
	linkIDs         uint64
	linkAttachFlags uint64
	revision        uint64
}

// attachedDevicePrograms returns the cgroup's attach mode for device
// programs (0, BPF_F_ALLOW_OVERRIDE or BPF_F_ALLOW_MULTI) and the IDs of the
// programs attached to it (not those inherited from ancestors).
func attachedDevicePrograms(dirFd int) (uint32, []ebpf.ProgramID, error) {
	attr := progQueryAttr{targetFd: uint32(dirFd), attachType: unix.BPF_CGROUP_DEVICE}
	_, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_QUERY, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if errno != 0 {
		return 0, nil, fmt.Errorf("querying device programs: %w", os.NewSyscallError("bpf BPF_PROG_QUERY", errno))
	}
	if attr.progCount == 0 {
		return attr.attachFlags, nil, nil
	}
	res, err := link.QueryPrograms(link.QueryOptions{Target: dirFd, Attach: ebpf.AttachCGroupDevice})
	if err != nil {
		return 0, nil, fmt.Errorf("querying device programs: %w", err)
	}
	ids := make([]ebpf.ProgramID, len(res.Programs))
	for i, p := range res.Programs {
		ids[i] = p.ID
	}
	return attr.attachFlags, ids, nil
}

// swapProgram makes to take from's place on the cgroup. With
// BPF_F_ALLOW_MULTI it replaces from in place (BPF_F_REPLACE); where the
// kernel lacks BPF_F_REPLACE (EINVAL, before 5.6) it attaches to and then
// detaches from, so that for a moment both run and only what both allow is
// allowed. Otherwise the cgroup holds one program, which attaching with the
// same flags replaces.
func swapProgram(dirFd int, flags uint32, from, to *ebpf.Program) error {
	opts := link.RawAttachProgramOptions{Target: dirFd, Program: to, Attach: ebpf.AttachCGroupDevice, Flags: flags}
	if flags&unix.BPF_F_ALLOW_MULTI == 0 {
		return attachErr(link.RawAttachProgram(opts))
	}
	opts.Anchor = link.ReplaceProgram(from)
	err := link.RawAttachProgram(opts)
	if !errors.Is(err, unix.EINVAL) {
		return attachErr(err)
	}
	opts.Anchor = nil
	if err := link.RawAttachProgram(opts); err != nil {
		return attachErr(err)
	}
	detach := link.RawDetachProgramOptions{Target: dirFd, Program: from, Attach: ebpf.AttachCGroupDevice}
	if err := link.RawDetachProgram(detach); err != nil {
		detach.Program = to
		return errors.Join(attachErr(err), link.RawDetachProgram(detach))
	}
	return nil
}

func attachErr(err error) error {
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("%w (the old program is attached through a BPF link or was detached meanwhile): %w", err, ErrNotSupported)
	}
	return err
}
