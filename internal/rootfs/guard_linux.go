package rootfs

import "golang.org/x/sys/unix"

// mayCreate asks Options.MayCreate whether anything may be created in
// dir; nil when it may (or no MayCreate is set). A directory allowed once
// is not asked about again through the same handle: the answer is one
// about the descriptor (its mount), which does not change.
func (r *Root) mayCreate(dir *handle) error {
	if r.opts.MayCreate == nil || dir.allowed.Load() {
		return nil
	}
	shown := dir.name
	if dir == r.top || shown == "" {
		shown = "/"
	}
	err := r.opts.MayCreate(dir.fd, shown)
	if err == nil {
		dir.allowed.Store(true)
	}
	return err
}

// entryExists reports whether dir holds an entry name (of any type).
func entryExists(dir int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}
