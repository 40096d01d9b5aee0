package rootfs

import "golang.org/x/sys/unix"

// mayCreate asks Options.MayCreate whether anything may be created in
// dir; nil when it may (or no MayCreate is set).
func (r *Root) mayCreate(dir *handle) error {
	if r.opts.MayCreate == nil {
		return nil
	}
	shown := dir.name
	if dir == r.top || shown == "" {
		shown = "/"
	}
	return r.opts.MayCreate(dir.fd, shown)
}

// entryExists reports whether dir holds an entry name (of any type).
func entryExists(dir int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}
