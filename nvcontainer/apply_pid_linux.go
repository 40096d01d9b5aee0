package nvcontainer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/internal/sentinel"
)

// process is the container's process, pinned: a descriptor of its
// <ProcRoot>/PID directory. procfs binds such a directory to the process
// it was opened for, not to its number: once that process is gone (and
// even if the number is reused), every file opened through the descriptor
// fails. Everything Apply learns about the process (its mount namespace,
// cgroup and owner) is read through it, never by the number again.
type process struct {
	pid int
	dir *os.File
	fd  int // dir's
}

// pinProcess checks ctr.PID and pins it: the pid is within the kernel's
// pid_max, its process is alive (not a zombie) before and after its mount
// namespace is opened through the pinned directory — so the namespace is
// that process's — and the namespace is not the caller's (ModeProcess) or
// is (ModeStandalone). It returns the process and the namespace Apply
// enters. Errors match ErrInvalidPID and name the pid.
func pinProcess(procRoot string, ctr Container) (*process, *ns.Namespace, error) {
	if err := checkPIDMax(procRoot, ctr.PID); err != nil {
		return nil, nil, err
	}
	name := filepath.Join(procRoot, strconv.Itoa(ctr.PID))
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, pidError(ctr.PID, "no such process", &os.PathError{Op: "open", Path: name, Err: err})
	}
	dir := os.NewFile(uintptr(fd), name) // not os.OpenFile: no poller, no fcntl at each Fd
	p := &process{pid: ctr.PID, dir: dir, fd: fd}
	n, err := p.namespace(ctr.Mode)
	if err != nil {
		dir.Close()
		return nil, nil, err
	}
	return p, n, nil
}

// namespace opens the pinned process's mount namespace, checks the
// process is still alive afterwards and compares the namespace with the
// caller's as mode requires.
func (p *process) namespace(mode Mode) (*ns.Namespace, error) {
	if err := p.alive(); err != nil {
		return nil, err
	}
	f, err := p.open("ns/mnt")
	if err != nil {
		return nil, pidError(p.pid, "opening its mount namespace", sentinel.Permission("opening ns/mnt", "CAP_SYS_PTRACE", err))
	}
	defer f.Close()
	n, err := ns.FromFile(f)
	if err != nil {
		return nil, pidError(p.pid, "opening its mount namespace", err)
	}
	if err := p.alive(); err != nil { // n is then the namespace of this process
		n.Close()
		return nil, err
	}
	if err := checkNamespace(p.pid, n, mode); err != nil {
		n.Close()
		return nil, err
	}
	if mode == ModeStandalone {
		n.Close()
		return ns.Current(), nil
	}
	return n, nil
}

// checkNamespace compares the process's mount namespace n with the
// caller's: in ModeProcess it must be another, and not that of pid 1 of
// the caller's procfs either (init's: the host's, for a caller that is
// itself in a container's namespace, as a createContainer hook is); in
// ModeStandalone it must be the caller's.
func checkNamespace(pid int, n *ns.Namespace, mode Mode) error {
	same, err := n.IsCaller()
	switch {
	case err != nil:
		return pidError(pid, "", err)
	case mode == ModeStandalone && !same:
		return pidError(pid, "standalone mode, but not in the caller's mount namespace", nil)
	case mode == ModeStandalone:
		return nil
	case same:
		return pidError(pid, "shares the caller's mount namespace (a host process, not a container's)", nil)
	}
	// Unreadable (no ptrace access to pid 1): then setns could not enter
	// it either.
	if init, err := n.SameAs("/proc/1/ns/mnt"); err == nil && init {
		return pidError(pid, "shares the mount namespace of pid 1 (init's, the host's)", nil)
	}
	return nil
}

// CheckContainer checks, changing nothing, that [Plan.Apply] would take
// ctr's Mode and PID, with the process found in procRoot ("" means
// /proc): what Apply's check and open steps refuse with [ErrInvalidPID]
// (or [ErrInvalidPlan] for an unknown Mode). A hook calls it before
// planning, so that a bad OCI state is reported as such and not as a
// rootfs the plan could not inspect through /proc/PID/root. Apply checks
// again: the process may be gone by then.
func CheckContainer(ctr Container, procRoot string) error {
	if err := checkContainer(&Plan{}, ctr); err != nil {
		return err.Err
	}
	if ctr.Mode == ModeRootfsOnly {
		return nil
	}
	if procRoot == "" {
		procRoot = "/proc"
	}
	p, n, err := pinProcess(procRoot, ctr)
	if err != nil {
		if ae, ok := err.(*ApplyError); ok {
			return ae.Err
		}
		return err
	}
	n.Close()
	p.close()
	return nil
}

// alive reads the process's state from its stat file: a zombie ('Z') or a
// dead process ('X', 'x') is not the container's process.
func (p *process) alive() error {
	var buf [4096]byte
	b, err := p.read("stat", buf[:])
	if err != nil {
		return pidError(p.pid, "not alive", err)
	}
	// "PID (COMM) S ...": COMM may hold anything, so the state follows the
	// last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return pidError(p.pid, fmt.Sprintf("unreadable state %q", b), nil)
	}
	switch b[i+2] {
	case 'Z':
		return pidError(p.pid, "a zombie, not alive", nil)
	case 'X', 'x':
		return pidError(p.pid, "dead", nil)
	}
	return nil
}

// read reads up to len(buf) bytes of a file of the pinned process's
// directory (one read: procfs gives a small file whole); it fails once the
// process is gone.
func (p *process) read(name string, buf []byte) ([]byte, error) {
	fd, err := unix.Openat(p.fd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: filepath.Join(p.dir.Name(), name), Err: err}
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: filepath.Join(p.dir.Name(), name), Err: err}
	}
	return buf[:n], nil
}

// open opens a file of the pinned process's directory; it fails once the
// process is gone.
func (p *process) open(name string) (*os.File, error) {
	fd, err := unix.Openat(p.fd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: filepath.Join(p.dir.Name(), name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(p.dir.Name(), name)), nil
}

// owner is the owner of the process's directory, as libnvidia-container
// takes it from stat("/proc/PID").
func (p *process) owner() (rootfs.Owner, error) {
	var st unix.Stat_t
	if err := unix.Fstat(p.fd, &st); err != nil {
		return rootfs.Owner{}, pidError(p.pid, "finding its owner", os.NewSyscallError("fstat", err))
	}
	return rootfs.Owner{UID: int(st.Uid), GID: int(st.Gid)}, nil
}

func (p *process) close() {
	if p != nil {
		p.dir.Close()
	}
}

// checkPIDMax refuses a pid above the kernel's pid_max: <ProcRoot>/sys/
// kernel/pid_max, else the running kernel's, else PID_MAX_LIMIT.
func checkPIDMax(procRoot string, pid int) error {
	limit := pidMaxLimit
	for _, f := range []string{filepath.Join(procRoot, "sys/kernel/pid_max"), "/proc/sys/kernel/pid_max"} {
		if n, err := readInt(f); err == nil {
			limit = n
			break
		}
	}
	if pid > limit {
		return pidError(pid, fmt.Sprintf("above the kernel's pid_max %d", limit), nil)
	}
	return nil
}

// readInt reads the number in the small file name (one read).
func readInt(name string) (int, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var buf [32]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(buf[:n])))
}

// pidError is an Apply error matching ErrInvalidPID: "container pid 7: why:
// err".
func pidError(pid int, why string, err error) *ApplyError {
	msg := fmt.Sprintf("container pid %d", pid)
	if why != "" {
		msg += ": " + why
	}
	if err != nil {
		return &ApplyError{Step: StepOpen, Err: fmt.Errorf("%s: %w: %w", msg, err, ErrInvalidPID), kind: ErrInvalidPID}
	}
	return &ApplyError{Step: StepOpen, Err: fmt.Errorf("%s: %w", msg, ErrInvalidPID), kind: ErrInvalidPID}
}
