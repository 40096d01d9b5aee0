package cgroup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	devconfig "github.com/opencontainers/cgroups/devices/config"
	"golang.org/x/sys/unix"
)

// allowV1 writes to devices.allow the accesses that devices.list lacks,
// checks that the list then covers every rule, and returns the undo that
// writes the same lines to devices.deny.
func (c *Cgroup) allowV1(rules []Rule) (func() error, error) {
	list, err := c.readList()
	if err != nil {
		return nil, fmt.Errorf("allowing %s in %s: %w", rulesString(rules), c.path, err)
	}
	var missing []devconfig.Rule
	var from []Rule
	for _, r := range rules {
		o := r.oci()
		if o.Permissions = list.missing(o); !o.Permissions.IsEmpty() {
			missing, from = append(missing, o), append(from, r)
		}
	}
	if len(missing) == 0 { // the list read covers every rule: nothing to write or check again
		return c.undoV1(nil)
	}
	added, i, err := c.writeRules(c.dir, "devices.allow", missing)
	if err != nil {
		return nil, c.rollbackV1(c.dir, added, fmt.Errorf("allowing %s in %s: %w", from[i], c.path, err))
	}
	if err := c.verifyV1(rules); err != nil {
		return nil, c.rollbackV1(c.dir, added, err)
	}
	return c.undoV1(added)
}

// writeRules writes each rule line to the control file name in dir, one
// write per rule as the kernel wants, through one descriptor. It returns
// the rules written and, on error, the index of the one that failed.
func (c *Cgroup) writeRules(dir *os.File, name string, rules []devconfig.Rule) ([]devconfig.Rule, int, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, 0, &os.PathError{Op: "openat", Path: name, Err: err}
	}
	defer unix.Close(fd)
	for i, r := range rules {
		line := r.CgroupString()
		if err := writeLine(fd, line); err != nil {
			return rules[:i], i, fmt.Errorf("writing %q to %s: %w", line, name, &os.PathError{Op: "write", Path: name, Err: err})
		}
	}
	return rules, 0, nil
}

func (c *Cgroup) readList() (devicesList, error) {
	b, err := c.readFile("devices.list")
	if err != nil {
		return devicesList{}, err
	}
	return parseDevicesList(b)
}

// writeLine writes line in one write(2), again if a signal interrupts it.
func writeLine(fd int, line string) error {
	for {
		n, err := unix.Write(fd, []byte(line))
		switch {
		case err == unix.EINTR:
			continue
		case err == nil && n < len(line):
			return io.ErrShortWrite
		}
		return err
	}
}

func (c *Cgroup) readFile(name string) ([]byte, error) {
	fd, err := unix.Openat(int(c.dir.Fd()), name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: name, Err: err}
	}
	defer unix.Close(fd)
	// Read directly: an *os.File would first ask the descriptor's flags
	// (fcntl) to set up polling, which a cgroup file does not use.
	b := make([]byte, 0, 512)
	for {
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
		if len(b) == cap(b) {
			b = slices.Grow(b, len(b))
		}
	}
}

// writeRule writes one rule line to the control file name in dir, in one
// write as the kernel wants.
func (c *Cgroup) writeRule(dir *os.File, name string, r devconfig.Rule) error {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return &os.PathError{Op: "openat", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	_, err = f.Write([]byte(r.CgroupString()))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %q to %s: %w", r.CgroupString(), name, err)
	}
	return nil
}

// verifyV1 re-reads devices.list and checks that every rule is covered.
func (c *Cgroup) verifyV1(rules []Rule) error {
	list, err := c.readList()
	if err != nil {
		return fmt.Errorf("checking %s in %s: %w", rulesString(rules), c.path, err)
	}
	for _, r := range rules {
		if m := list.missing(r.oci()); !m.IsEmpty() {
			return fmt.Errorf("checking %s in %s: devices.list still lacks access %q after the write: %w", r, c.path, m, ErrNotSupported)
		}
	}
	return nil
}

// denyAll writes the rules to devices.deny in reverse order.
func (c *Cgroup) denyAll(dir *os.File, added []devconfig.Rule) error {
	var errs []error
	for _, r := range slices.Backward(added) {
		if err := c.writeRule(dir, "devices.deny", r); err != nil {
			errs = append(errs, fmt.Errorf("taking back %s in %s: %w", r.CgroupString(), c.path, err))
		}
	}
	return errors.Join(errs...)
}

func (c *Cgroup) rollbackV1(dir *os.File, added []devconfig.Rule, cause error) error {
	if err := c.denyAll(dir, added); err != nil {
		return errors.Join(cause, fmt.Errorf("rolling back: %w", err))
	}
	return cause
}

func (c *Cgroup) undoV1(added []devconfig.Rule) (func() error, error) {
	if len(added) == 0 {
		return func() error { return nil }, nil
	}
	dir, err := c.dupDir()
	if err != nil {
		return nil, c.rollbackV1(c.dir, added, fmt.Errorf("allowing devices in %s: %w", c.path, err))
	}
	return sync.OnceValue(func() error {
		defer dir.Close()
		return c.denyAll(dir, added)
	}), nil
}
