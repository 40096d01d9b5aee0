package fakehost

import (
	"strings"

	"github.com/go-nvc/nvc/internal/fstree"
)

// libDir is a directory the host's ld.so.conf lists.
type libDir struct {
	alias string // as ld.so.conf names it and the cache records it: "/lib/x86_64-linux-gnu"
	phys  string // where it is, relative to the root: "usr/lib/x86_64-linux-gnu"
	lib32 bool   // holds i386 libraries
}

// layout is a distribution's file system shape.
type layout struct {
	lib64, lib32 libDir // the driver's library dirs
	// dirs are the ld.so.conf dirs with libraries, in the order glibc's
	// ldconfig reads them (after dropping aliases of one dir).
	dirs []libDir
	// base is the release file, merged-/usr links and ld.so.conf files.
	base []fstree.Entry
}

// legacyDir holds a previous install's leftovers; its ld.so.conf.d file
// sorts last, so its entries come after the driver's in the cache.
const legacyDir = "opt/nvidia-legacy/lib64"

func newLayout(l Layout) layout {
	if l == Fedora {
		return fedoraLayout()
	}
	return debianLayout()
}

// debianLayout is Debian 12: merged /usr, multiarch dirs, and the
// ld.so.conf.d files of libc-bin (the x86_64 one lists /lib/... first, so
// the cache names libraries /lib/x86_64-linux-gnu/...).
func debianLayout() layout {
	l := layout{
		lib64: libDir{alias: "/lib/x86_64-linux-gnu", phys: "usr/lib/x86_64-linux-gnu"},
		lib32: libDir{alias: "/lib/i386-linux-gnu", phys: "usr/lib/i386-linux-gnu", lib32: true},
	}
	mesa := libDir{alias: "/usr/lib/x86_64-linux-gnu/mesa", phys: "usr/lib/x86_64-linux-gnu/mesa"}
	l.dirs = []libDir{l.lib32, l.lib64, mesa, legacy()}
	l.base = append(mergedUsr("bin", "sbin", "lib", "lib64"),
		file("etc/debian_version", "12.5\n"),
		file("etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n"),
		file("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n\n"),
		conf("libc.conf", "# libc default configuration", "/usr/local/lib"),
		conf("i386-linux-gnu.conf", "# Multiarch support", "/usr/local/lib/i386-linux-gnu",
			"/lib/i386-linux-gnu", "/usr/lib/i386-linux-gnu", "/usr/local/lib/i686-linux-gnu",
			"/lib/i686-linux-gnu", "/usr/lib/i686-linux-gnu"),
		conf("x86_64-linux-gnu.conf", "# Multiarch support", "/usr/local/lib/x86_64-linux-gnu",
			"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"),
		conf("x86_64-linux-gnu_GL.conf", "# a Mesa libGL kept beside the driver's", mesa.alias),
		conf("zz-nvidia-legacy.conf", "# a previous driver install, never cleaned up", "/"+legacyDir),
	)
	return l
}

// fedoraLayout is Fedora 40: merged /usr, /usr/lib64 and /usr/lib. glibc's
// built-in dirs (/lib64, /lib, /usr/lib64, /usr/lib on Fedora) are also
// listed in a .conf file, so that an ldconfig built for another
// distribution (Debian's, in the tests) scans the same dirs.
func fedoraLayout() layout {
	l := layout{
		lib64: libDir{alias: "/lib64", phys: "usr/lib64"},
		lib32: libDir{alias: "/lib", phys: "usr/lib", lib32: true},
	}
	mesa := libDir{alias: "/usr/lib64/mesa", phys: "usr/lib64/mesa"}
	l.dirs = []libDir{l.lib64, l.lib32, mesa, legacy()}
	l.base = append(mergedUsr("bin", "sbin", "lib", "lib64"),
		file("etc/fedora-release", "Fedora release 40 (Forty)\n"),
		file("etc/os-release", "NAME=\"Fedora Linux\"\nID=fedora\nVERSION_ID=40\n"),
		file("etc/ld.so.conf", "include ld.so.conf.d/*.conf\n"),
		conf("glibc-system-dirs.conf", "# glibc's built-in dirs on Fedora x86_64", "/lib64", "/lib", "/usr/lib64", "/usr/lib"),
		conf("mesa-GL.conf", "# a Mesa libGL kept beside the driver's", mesa.alias),
		conf("zz-nvidia-legacy.conf", "# a previous driver install, never cleaned up", "/"+legacyDir),
	)
	return l
}

func legacy() libDir { return libDir{alias: "/" + legacyDir, phys: legacyDir} }

// mergedUsr links each top-level dir to its /usr counterpart.
func mergedUsr(dirs ...string) []fstree.Entry {
	var es []fstree.Entry
	for _, d := range dirs {
		es = append(es,
			fstree.Entry{Kind: fstree.Dir, Path: "usr/" + d, Mode: 0o755},
			fstree.Entry{Kind: fstree.Symlink, Path: d, Target: "usr/" + d})
	}
	return es
}

func file(p, content string) fstree.Entry {
	return fstree.Entry{Kind: fstree.File, Path: p, Mode: 0o644, Content: []byte(content)}
}

func conf(name, comment string, dirs ...string) fstree.Entry {
	return file("etc/ld.so.conf.d/"+name, comment+"\n"+strings.Join(dirs, "\n")+"\n")
}
