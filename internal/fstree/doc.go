// Package fstree builds file trees from a small line-oriented description.
//
// Tests and the fake host generator use it to lay out driver roots, rootfs
// trees and hostile layouts in a few readable lines:
//
//	dir     usr/lib/x86_64-linux-gnu 0755
//	file    etc/debian_version "12.5\n"
//	file    usr/bin/nvidia-smi 0755
//	symlink usr/lib64/libcuda.so.1 libcuda.so.550.54.15
//	char    dev/nvidiactl 195 255 0666
//	fifo    tmp/pipe
//	socket  run/nvidia-persistenced/socket
//
// Paths are relative to the root given to [Build]; parents are created as
// needed (mode 0755). A MODE is octal with a leading zero. A file's CONTENT is
// the rest of the line, or a Go string literal when it starts with a quote.
// Lines starting with '#' and blank lines are ignored.
//
// # What it needs
//
// It creates files below the root it is given and changes nothing else.
// Character devices need CAP_MKNOD (root); with [Options].CharAsFile they
// are plain files instead, so that tests run unprivileged. No particular
// kernel is needed.
//
// # When not to use it
//
// The root is trusted (a temp dir the caller made); the package does not
// defend against symlinks planted inside it by someone else, so it must
// never build into a container's rootfs or any directory another user can
// write: use internal/rootfs there.
package fstree
