// Command ldconfig is glibc's ldconfig rebuilt on package ldcache: it
// prints a cache (-p) exactly as glibc 2.36 prints it, and builds one for a
// root the way `ldconfig -r ROOT` does, without running anything.
//
//	ldconfig -p [-C CACHE] [-r ROOT]        print the cache
//	ldconfig [-r ROOT] [-C CACHE] [-f CONF] [-c new|compat|old] [-N] [-X] [-n] [-v] [DIR...]
//
// Options are glibc's: -C the cache file and -f the configuration file
// (both inside ROOT), -c the file layout, -N do not write the cache, -X do
// not touch symlinks, -n scan only the DIR arguments and write nothing,
// -v list what is scanned; DIRs are scanned before the configuration's.
// --generator=STRING sets the generator string recorded in the cache.
//
// # What it reads and changes
//
// It reads ROOT's ld.so.conf (and its includes), the libraries in the
// scanned directories and, for -p, the cache; it writes only CACHE inside
// ROOT, replacing it atomically, unless -N or -n is given. Paths are
// resolved inside ROOT, so links in the image cannot send it out of ROOT,
// and nothing is executed. It needs write access to the cache's directory
// (root for /etc) and no particular kernel.
//
// # When not to use it
//
// It is not all of glibc's ldconfig: there is no auxiliary cache (-i is
// accepted and ignored) and options glibc has beyond those above are
// refused. It is an example of package ldcache; a program that needs a
// cache should call ldcache.Build or ldcache.Update itself.
package main
