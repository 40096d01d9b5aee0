package cgroup

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
)

// programLicense is the license string of the programs Allow loads. They
// call no helpers, so it has no effect on what they may do.
const programLicense = "Apache-2.0"

// programName is the name of the programs Allow loads (bpftool shows it).
const programName = "nvc_devices"

// swap is one program replaced on the cgroup.
type swap struct {
	id       uint32
	old, new *program
}

func (s swap) close() {
	s.old.Close()
	s.new.Close()
}

// allowV2 replaces each device program attached to the cgroup with one that
// accepts rules first and then runs the original instructions.
func (c *Cgroup) allowV2(rules []Rule) (func() error, error) {
	fd := int(c.dir.Fd())
	flags, ids, err := attachedDevicePrograms(fd)
	if err != nil {
		return nil, fmt.Errorf("allowing %s in %s: %w", rulesString(rules), c.path, err)
	}
	var done []swap
	for _, id := range ids {
		s, err := c.replaceProgram(fd, flags, id, rules)
		if errors.Is(err, errAllowedAlready) {
			continue
		}
		if err != nil {
			return nil, c.rollbackV2(c.dir, flags, done, fmt.Errorf("allowing %s in %s: device program %d: %w", rulesString(rules), c.path, id, err))
		}
		done = append(done, s)
	}
	return c.undoV2(flags, done)
}

// replaceProgram reads program id back, loads its rebuilt form and swaps it in.
func (c *Cgroup) replaceProgram(fd int, flags uint32, id uint32, rules []Rule) (swap, error) {
	old, err := openProgram(id)
	if err != nil {
		return swap{}, fmt.Errorf("opening the attached program: %w", err)
	}
	s := swap{id: id, old: old}
	if s.new, err = loadRebuilt(old, rules); err != nil {
		old.Close()
		return swap{}, err
	}
	if err := swapProgram(fd, flags, s.old, s.new); err != nil {
		s.close()
		return swap{}, fmt.Errorf("replacing the attached program: %w", err)
	}
	return s, nil
}

// loadRebuilt loads a program that accepts rules and otherwise runs old.
func loadRebuilt(old *program, rules []Rule) (*program, error) {
	insns, err := old.instructions()
	if err != nil {
		return nil, fmt.Errorf("reading the attached program's instructions: %w", err)
	}
	if startsWith(insns, allowPrefix(rules)) {
		return nil, errAllowedAlready
	}
	combined, err := rebuild(rules, insns)
	if err != nil {
		return nil, err
	}
	p, err := loadDeviceProgram(programName, combined)
	if err != nil {
		return nil, fmt.Errorf("loading the rebuilt program: %w", err)
	}
	return p, nil
}

// restore swaps the original programs back, last first.
func restore(dir *os.File, flags uint32, done []swap) error {
	var errs []error
	for _, s := range slices.Backward(done) {
		if err := swapProgram(int(dir.Fd()), flags, s.new, s.old); err != nil {
			errs = append(errs, fmt.Errorf("restoring device program %d: %w", s.id, err))
		}
		s.close()
	}
	return errors.Join(errs...)
}

func (c *Cgroup) rollbackV2(dir *os.File, flags uint32, done []swap, cause error) error {
	if err := restore(dir, flags, done); err != nil {
		return errors.Join(cause, fmt.Errorf("rolling back in %s: %w", c.path, err))
	}
	return cause
}

func (c *Cgroup) undoV2(flags uint32, done []swap) (func() error, error) {
	if len(done) == 0 {
		return func() error { return nil }, nil
	}
	dir, err := c.dupDir()
	if err != nil {
		return nil, c.rollbackV2(c.dir, flags, done, fmt.Errorf("allowing devices in %s: %w", c.path, err))
	}
	path := c.path
	return sync.OnceValue(func() error {
		defer dir.Close()
		if err := restore(dir, flags, done); err != nil {
			return fmt.Errorf("taking back device access in %s: %w", path, err)
		}
		return nil
	}), nil
}
