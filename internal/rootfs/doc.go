// Package rootfs creates and finds files inside a container's root
// filesystem without ever leaving it, whatever the image planted there.
//
// A [Root] holds the rootfs open as an O_PATH directory descriptor. Every
// path inside it is an untrusted unsafePath: its parent is resolved with
// openat2(RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS), so symlinks and ".." are
// followed but clamped to the rootfs, and the last component is never
// followed: a symlink, FIFO, socket, device or directory where a regular
// file should be is an error ([ErrWrongType]). Without openat2 (Linux < 5.6)
// the parent is resolved by filepath-securejoin's pathrs-lite instead, or
// the call fails closed, as [Options].Resolver says.
//
// A symlink among the parents is followed inside the rootfs, but only to
// an existing directory: a dangling one is an error, never a reason to
// create its target (as with pathrs-lite's MkdirAll).
//
// Missing parent directories are created one component at a time,
// relative to verified directory descriptors (mkdirat, then reopened with
// O_NOFOLLOW and checked), with mode 0755 and the container owner's uid and
// gid. Placeholder files are created with O_CREAT|O_EXCL|O_NOFOLLOW,
// symlinks with symlinkat (which never replaces anything; [Root.ReplaceSymlink]
// replaces an existing symlink, and only a symlink, by exchanging a new one
// made beside it), device nodes with mknodat and then checked for type and
// major:minor. Each result is an
// [Entry] pinned by descriptors, to act on (move_mount onto it) rather than
// re-resolving a string.
//
// Everything created is recorded on [Options].Undo right after the system
// call that created it (mkdirat, openat O_CREAT|O_EXCL, mknodat,
// symlinkat), before the open, fstat or chown that follows and may fail
// (EMFILE, EPERM). Undoing removes only what this package created and only
// while it is still what was created: the same inode, an empty regular
// file, an empty directory, the symlink with the same target, the node with
// the same device number. What WriteFile and ReplaceSymlink replaced is put
// back. What undo cannot take back (a directory someone filled, an entry
// replaced or written to) is left alone and named in its error, which
// matches [ErrLeftBehind].
//
// Needs: Linux; root (or the right capabilities) to create files owned by
// another uid or device nodes. The rootfs path itself is trusted except for
// its last component, which must be a real directory, not a symlink.
package rootfs
