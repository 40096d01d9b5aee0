package fakehost

import (
	"strings"

	"github.com/go-nvc/nvc/internal/fstree"
)

// layout is a distribution's file system shape.
type layout struct {
	// lib64 and lib32 are the driver's library dirs, relative to the root
	// ("usr/lib/x86_64-linux-gnu"); ld.so.conf may name them by an alias
	// behind a merged-/usr link ("/lib/x86_64-linux-gnu").
	lib64, lib32 string
	// base is the release files, merged-/usr links and ld.so.conf files.
	base []fstree.Entry
}

// legacyDir holds a previous install's leftovers; its ld.so.conf.d file
// sorts last, so its entries come after the driver's in the cache.
const legacyDir = "opt/nvidia-legacy/lib64"

// mesaDir is the Mesa dir below a layout's lib64, listed in ld.so.conf.
const mesaDir = "mesa"

func newLayout(l Layout) layout {
	if l == Fedora {
		return fedoraLayout()
	}
	return debianLayout()
}

// distro is what sets one distribution's layout apart.
type distro struct {
	lib64, lib32 string // as layout's
	// files are the release files, ld.so.conf and the distribution's own
	// ld.so.conf.d files.
	files []fstree.Entry
	// mesaConf names the ld.so.conf.d file listing <lib64>/mesa.
	mesaConf string
}

// layout adds what every distribution gets: merged-/usr links, and
// ld.so.conf.d files for the Mesa dir beside the driver's 64-bit
// libraries and for the legacy dir.
func (d distro) layout() layout {
	base := append(mergedUsr("bin", "sbin", "lib", "lib64"), d.files...)
	base = append(base,
		conf(d.mesaConf, "# a Mesa libGL kept beside the driver's", "/"+d.lib64+"/"+mesaDir),
		conf("zz-nvidia-legacy.conf", "# a previous driver install, never cleaned up", "/"+legacyDir))
	return layout{lib64: d.lib64, lib32: d.lib32, base: base}
}

// debianLayout is Debian 12: merged /usr, multiarch dirs, and the
// ld.so.conf.d files of libc-bin (the x86_64 one lists /lib/... first, so
// the cache names libraries /lib/x86_64-linux-gnu/...).
func debianLayout() layout {
	return distro{
		lib64:    "usr/lib/x86_64-linux-gnu",
		lib32:    "usr/lib/i386-linux-gnu",
		mesaConf: "x86_64-linux-gnu_GL.conf",
		files: []fstree.Entry{
			file("etc/debian_version", "12.5\n"),
			file("etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n"),
			file("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n\n"),
			conf("libc.conf", "# libc default configuration", "/usr/local/lib"),
			conf("i386-linux-gnu.conf", "# Multiarch support", "/usr/local/lib/i386-linux-gnu",
				"/lib/i386-linux-gnu", "/usr/lib/i386-linux-gnu", "/usr/local/lib/i686-linux-gnu",
				"/lib/i686-linux-gnu", "/usr/lib/i686-linux-gnu"),
			conf("x86_64-linux-gnu.conf", "# Multiarch support", "/usr/local/lib/x86_64-linux-gnu",
				"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"),
		},
	}.layout()
}

// fedoraLayout is Fedora 40: merged /usr, /usr/lib64 and /usr/lib. glibc's
// built-in dirs (/lib64, /lib, /usr/lib64, /usr/lib on Fedora) are also
// listed in a .conf file, so that an ldconfig built for another
// distribution (Debian's, in the tests) scans the same dirs.
func fedoraLayout() layout {
	return distro{
		lib64:    "usr/lib64",
		lib32:    "usr/lib",
		mesaConf: "mesa-GL.conf",
		files: []fstree.Entry{
			file("etc/fedora-release", "Fedora release 40 (Forty)\n"),
			file("etc/os-release", "NAME=\"Fedora Linux\"\nID=fedora\nVERSION_ID=40\n"),
			file("etc/ld.so.conf", "include ld.so.conf.d/*.conf\n"),
			conf("glibc-system-dirs.conf", "# glibc's built-in dirs on Fedora x86_64", "/lib64", "/lib", "/usr/lib64", "/usr/lib"),
		},
	}.layout()
}

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
