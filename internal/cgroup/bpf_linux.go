package cgroup

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The parts of union bpf_attr (include/uapi/linux/bpf.h) this package
// passes to bpf(2). The kernel zero-fills what a shorter struct leaves out
// and refuses non-zero bytes it does not know, so each is declared only up
// to the last field used (BPF_PROG_QUERY's up to revision: kernels from
// 6.17 write that field whatever size is passed).

// ptr is a __aligned_u64 that holds a pointer. Being an unsafe.Pointer to
// the runtime, what it points to stays alive and is updated when a
// goroutine stack moves. It fills the field on 64-bit hosts only; bpf
// refuses to run on others (no NVIDIA driver supports a 32-bit kernel).
type ptr struct{ p unsafe.Pointer }

type progQueryAttr struct {
	targetFd        uint32
	attachType      uint32
	queryFlags      uint32
	attachFlags     uint32
	progIDs         ptr
	progCount       uint32
	_               uint32
	progAttachFlags uint64
	linkIDs         uint64
	linkAttachFlags uint64
	revision        uint64
}

type getFdByIDAttr struct {
	id        uint32
	nextID    uint32
	openFlags uint32
}

type objInfoAttr struct {
	fd      uint32
	infoLen uint32
	info    ptr
}

// progInfo is struct bpf_prog_info up to xlated_prog_insns.
type progInfo struct {
	typ             uint32
	id              uint32
	tag             [8]byte
	jitedProgLen    uint32
	xlatedProgLen   uint32
	jitedProgInsns  ptr
	xlatedProgInsns ptr
}

type progLoadAttr struct {
	progType    uint32
	insnCnt     uint32
	insns       ptr
	license     ptr
	logLevel    uint32
	logSize     uint32
	logBuf      ptr
	kernVersion uint32
	progFlags   uint32
	progName    [unix.BPF_OBJ_NAME_LEN]byte
}

type progAttachAttr struct {
	targetFd     uint32
	attachBpfFd  uint32
	attachType   uint32
	attachFlags  uint32
	replaceBpfFd uint32
}

// bpf calls bpf(2) with cmd and attr (a pointer to one of the structs
// above), retrying on EINTR.
func bpf[T any](cmd int, attr *T) (int, error) {
	if unsafe.Sizeof(ptr{}) != 8 {
		return -1, unix.ENOTSUP // see ptr
	}
	for {
		r, _, errno := unix.Syscall(unix.SYS_BPF, uintptr(cmd), uintptr(unsafe.Pointer(attr)), unsafe.Sizeof(*attr))
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return -1, errno
		}
		return int(r), nil
	}
}

// program is a BPF program file descriptor.
type program struct{ fd int }

func (p *program) Close() error { return unix.Close(p.fd) }

// attachedDevicePrograms returns the cgroup's attach mode for device
// programs (0, BPF_F_ALLOW_OVERRIDE or BPF_F_ALLOW_MULTI) and the IDs of the
// programs attached to it (not those inherited from ancestors).
func attachedDevicePrograms(dirFd int) (uint32, []uint32, error) {
	var ids []uint32
	for {
		attr := progQueryAttr{targetFd: uint32(dirFd), attachType: unix.BPF_CGROUP_DEVICE, progCount: uint32(len(ids))}
		if len(ids) > 0 {
			attr.progIDs.p = unsafe.Pointer(&ids[0])
		}
		_, err := bpf(unix.BPF_PROG_QUERY, &attr)
		switch {
		case errors.Is(err, unix.ENOSPC): // attached meanwhile: ask again
			ids = make([]uint32, attr.progCount+1)
			continue
		case err != nil:
			return 0, nil, fmt.Errorf("querying device programs: %w", os.NewSyscallError("bpf BPF_PROG_QUERY", err))
		case int(attr.progCount) > len(ids):
			ids = make([]uint32, attr.progCount)
			continue
		}
		return attr.attachFlags, ids[:attr.progCount], nil
	}
}

// openProgram returns a descriptor of the program with ID id.
func openProgram(id uint32) (*program, error) {
	fd, err := bpf(unix.BPF_PROG_GET_FD_BY_ID, &getFdByIDAttr{id: id})
	if err != nil {
		return nil, os.NewSyscallError("bpf BPF_PROG_GET_FD_BY_ID", err)
	}
	return &program{fd: fd}, nil
}

// instructions returns p's translated instructions, as the kernel runs them.
func (p *program) instructions() ([]insn, error) {
	var info progInfo
	if err := p.info(&info); err != nil {
		return nil, err
	}
	if info.xlatedProgLen == 0 {
		return nil, fmt.Errorf("the kernel gives no instructions (needs CAP_SYS_ADMIN, Linux 4.15): %w", ErrNotSupported)
	}
	buf := make([]byte, info.xlatedProgLen)
	info = progInfo{xlatedProgLen: uint32(len(buf)), xlatedProgInsns: ptr{p: unsafe.Pointer(&buf[0])}}
	err := p.info(&info)
	switch {
	case err != nil:
		return nil, err
	case info.xlatedProgInsns.p == nil:
		return nil, fmt.Errorf("the kernel withholds the instructions (restricted by kernel.kptr_restrict or bpf_jit_harden): %w", ErrNotSupported)
	case int(info.xlatedProgLen) != len(buf):
		return nil, fmt.Errorf("the program's length changed from %d to %d bytes: %w", len(buf), info.xlatedProgLen, ErrInvalid)
	}
	return decode(buf)
}

func (p *program) info(info *progInfo) error {
	attr := objInfoAttr{fd: uint32(p.fd), infoLen: uint32(unsafe.Sizeof(*info)), info: ptr{p: unsafe.Pointer(info)}}
	_, err := bpf(unix.BPF_OBJ_GET_INFO_BY_FD, &attr)
	if err != nil {
		return os.NewSyscallError("bpf BPF_OBJ_GET_INFO_BY_FD", err)
	}
	return nil
}

// loadDeviceProgram loads insns as a BPF_PROG_TYPE_CGROUP_DEVICE program
// named name. Where the verifier refuses it, the error ends with the
// verifier's last line.
func loadDeviceProgram(name string, insns []insn) (*program, error) {
	code := encode(insns)
	license := []byte(programLicense + "\x00")
	attr := progLoadAttr{
		progType: unix.BPF_PROG_TYPE_CGROUP_DEVICE,
		insnCnt:  uint32(len(insns)),
		insns:    ptr{p: unsafe.Pointer(&code[0])},
		license:  ptr{p: unsafe.Pointer(&license[0])},
	}
	copy(attr.progName[:len(attr.progName)-1], name)
	fd, err := bpf(unix.BPF_PROG_LOAD, &attr)
	if err == nil {
		return &program{fd: fd}, nil
	}
	err = os.NewSyscallError("bpf BPF_PROG_LOAD", err)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EINVAL) {
		log := make([]byte, 64<<10)
		attr.logLevel, attr.logSize, attr.logBuf = 1, uint32(len(log)), ptr{p: unsafe.Pointer(&log[0])}
		if fd, e := bpf(unix.BPF_PROG_LOAD, &attr); e == nil {
			unix.Close(fd) // loaded this time; keep the first error
		} else if last := lastLine(log); last != "" {
			err = fmt.Errorf("%w: verifier: %s", err, last)
		}
	}
	return nil, err
}

// lastLine returns the last non-empty line of a NUL-terminated log.
func lastLine(log []byte) string {
	n := 0
	for n < len(log) && log[n] != 0 {
		n++
	}
	s := string(log[:n])
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}

// attachDevice attaches p to the cgroup dirFd with flags; with replace
// (and BPF_F_ALLOW_MULTI) it takes replace's place.
func attachDevice(dirFd int, p *program, flags uint32, replace *program) error {
	attr := progAttachAttr{targetFd: uint32(dirFd), attachBpfFd: uint32(p.fd), attachType: unix.BPF_CGROUP_DEVICE, attachFlags: flags}
	if replace != nil {
		attr.attachFlags |= unix.BPF_F_REPLACE
		attr.replaceBpfFd = uint32(replace.fd)
	}
	if _, err := bpf(unix.BPF_PROG_ATTACH, &attr); err != nil {
		return os.NewSyscallError("bpf BPF_PROG_ATTACH", err)
	}
	return nil
}

// detachDevice detaches p from the cgroup dirFd.
func detachDevice(dirFd int, p *program) error {
	attr := progAttachAttr{targetFd: uint32(dirFd), attachBpfFd: uint32(p.fd), attachType: unix.BPF_CGROUP_DEVICE}
	if _, err := bpf(unix.BPF_PROG_DETACH, &attr); err != nil {
		return os.NewSyscallError("bpf BPF_PROG_DETACH", err)
	}
	return nil
}

// swapProgram makes to take from's place on the cgroup. With
// BPF_F_ALLOW_MULTI it replaces from in place (BPF_F_REPLACE); where the
// kernel lacks BPF_F_REPLACE (EINVAL, before 5.6) it attaches to and then
// detaches from, so that for a moment both run and only what both allow is
// allowed. Otherwise the cgroup holds one program, which attaching with the
// same flags replaces.
func swapProgram(dirFd int, flags uint32, from, to *program) error {
	if flags&unix.BPF_F_ALLOW_MULTI == 0 {
		return attachErr(attachDevice(dirFd, to, flags, nil))
	}
	err := attachDevice(dirFd, to, flags, from)
	if !errors.Is(err, unix.EINVAL) {
		return attachErr(err)
	}
	if err := attachDevice(dirFd, to, flags, nil); err != nil {
		return attachErr(err)
	}
	if err := detachDevice(dirFd, from); err != nil {
		return errors.Join(attachErr(err), detachDevice(dirFd, to))
	}
	return nil
}

func attachErr(err error) error {
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("%w (the old program is attached through a BPF link or was detached meanwhile): %w", err, ErrNotSupported)
	}
	return err
}
