// Package sentinel holds the one identity of each error condition that
// more than one package reports, so that errors.Is answers the same
// whichever package a caller asks: the public packages export these values
// under their own names (ldcache.ErrNotSupported, driver.ErrNotSupported
// and devices.ErrNoDriver are the same value), and internal packages whose
// sentinels read differently make them match with [Mark].
//
// It has no OS-specific code, needs no privileges and imports only the
// standard library.
package sentinel

import (
	"errors"
	"fmt"
	"io/fs"
)

var (
	// ErrNotSupported: the architecture, the system, the kernel or the
	// driver lacks what the operation needs.
	ErrNotSupported = errors.New("not supported")
	// ErrNoDriver: the NVIDIA driver is not there (not loaded, or none of
	// its files or versions are found).
	ErrNoDriver = errors.New("NVIDIA driver not loaded")
	// ErrInvalidRootfs: a container's root filesystem is missing,
	// relative, or "/".
	ErrInvalidRootfs = errors.New("invalid rootfs directory")
	// ErrPermission: the caller lacks a privilege the operation needs. It
	// matches fs.ErrPermission.
	ErrPermission = Mark(errors.New("permission denied"), fs.ErrPermission)
)

// Mark returns an error that reads as err and matches both err and
// target (errors.Is and errors.As see both).
func Mark(err, target error) error { return &marked{err: err, target: target} }

type marked struct{ err, target error }

func (m *marked) Error() string   { return m.err.Error() }
func (m *marked) Unwrap() []error { return []error{m.err, m.target} }

// PermissionError reports an operation refused for want of a capability.
// It matches [ErrPermission] and fs.ErrPermission.
type PermissionError struct {
	Op         string // what was refused: "entering the mount namespace of pid 42"
	Capability string // the capability it needs: "CAP_SYS_ADMIN"
	Err        error  // the system call's error, EPERM or EACCES
}

// Error reads "<op>: needs <capability>: <err>".
func (e *PermissionError) Error() string {
	return fmt.Sprintf("%s: needs %s: %v", e.Op, e.Capability, e.Err)
}

// Unwrap returns the system call's error and ErrPermission.
func (e *PermissionError) Unwrap() []error { return []error{e.Err, ErrPermission} }

// Permission returns err as a *PermissionError naming capability when err
// is EPERM or EACCES (fs.ErrPermission), and err itself otherwise.
func Permission(op, capability string, err error) error {
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return &PermissionError{Op: op, Capability: capability, Err: err}
}
