//go:build !linux

package undo

import "syscall"

// CloseFds closes every descriptor in fds, each one the caller's own.
func CloseFds(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}
