package ldcache

import "golang.org/x/sys/unix"

type statAnswer struct {
	st  unix.Stat_t
	err error
}

// stat is r.stat, once per path and Build: the directories are looked
// up by their configuration lines, the trusted list, the snapshot's
// paths and the prior cache's, often the same ones.
func (b *builder) stat(p string) (unix.Stat_t, error) {
	return remember(&b.stats, p, b.r.stat)
}

// lstat is r.lstat, once per path and Build: an include's matches are
// looked at by the glob, then by the check of their times.
func (b *builder) lstat(p string) (unix.Stat_t, error) {
	return remember(&b.lstats, p, b.r.lstat)
}

func remember(m *map[string]statAnswer, p string, f func(string) (unix.Stat_t, error)) (unix.Stat_t, error) {
	if a, ok := (*m)[p]; ok {
		return a.st, a.err
	}
	st, err := f(p)
	if *m == nil {
		*m = map[string]statAnswer{}
	}
	(*m)[p] = statAnswer{st, err}
	return st, err
}
