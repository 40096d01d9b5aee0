package ldcache

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
)

// target describes the ldconfig Build stands in for: the machine it was
// built for decides which ELF files it accepts, how it tags them, its
// trusted directories and how it compares names.
type target struct {
	goarch  string
	order   byteOrder
	is64    bool   // ldconfig's own word size (ElfW)
	signed  bool   // C char is signed
	triplet string // Debian multiarch triplet
	// muslArch names musl's loader and path file (ld-musl-<arch>.so.1).
	muslArch string
	// classify maps a file's class, machine and e_flags (after the generic
	// reading succeeded with flag) to its final flags; ok false rejects it.
	classify func(class byte, machine uint16, eflags uint32, flag int32) (int32, bool)
	// accepts reports whether the generic reader runs for this class.
	accepts func(class byte, machine uint16) bool
	// hwcapNames and platforms are the legacy hwcap subdirectory names
	// (name → bit), from the machine's dl-procinfo.
	hwcapNames map[string]uint
	platforms  map[string]uint
	// allHWCaps are all hwcap names, important or not (path_hwcap counts
	// every one).
	allHWCaps map[string]uint
	// x86ISA: read GNU_PROPERTY_X86_ISA_1_NEEDED into the ISA level.
	x86ISA bool
	// interps are the known program interpreters, which mark libc6.
	interps []string
}

const (
	flagELF      = 1
	flagLibc5    = 2
	flagLibc6    = 3
	flagAny      = -1
	tlsHWCapBit  = 63
	firstPlatfom = 48 // _DL_FIRST_PLATFORM
)

var x86Platforms = map[string]uint{"i586": firstPlatfom, "i686": firstPlatfom + 1, "haswell": firstPlatfom + 2, "xeon_phi": firstPlatfom + 3}

func newTarget(goarch string) (*target, error) {
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	mk, ok := targets[goarch]
	if !ok {
		return nil, fmt.Errorf("%w: architecture %q", ErrNotSupported, goarch)
	}
	t := mk()
	t.goarch = goarch
	if t.order == nil {
		t.order = binary.LittleEndian
	}
	return t, nil
}

func nativeClass(is64 bool) byte {
	if is64 {
		return 2 // ELFCLASS64
	}
	return 1
}

// generic is the default readelflib: native class only, any machine.
func generic(is64 bool, arch int32) func() *target {
	return func() *target {
		return &target{
			is64:     is64,
			accepts:  func(class byte, _ uint16) bool { return class == nativeClass(is64) },
			classify: func(_ byte, _ uint16, _ uint32, flag int32) (int32, bool) { return withArch(flag, arch), true },
		}
	}
}

// withArch tags a 64-bit library: 64-bit libraries are always libc6.
func withArch(flag, arch int32) int32 {
	if arch == 0 {
		return flag
	}
	return arch | flagLibc6
}

var targets = map[string]func() *target{
	"amd64": func() *target {
		t := x86(true)
		t.triplet, t.muslArch = "x86_64-linux-gnu", "x86_64"
		t.interps = []string{"/lib/ld-linux-x86-64.so.2", "/lib/ld-linux.so.2", "/libx32/ld-linux-x32.so.2", "/lib64/ld-linux-x86-64.so.2"}
		return t
	},
	"386": func() *target {
		t := x86(false)
		t.triplet, t.muslArch = "i386-linux-gnu", "i386"
		t.interps = []string{"/lib/ld-linux.so.2", "/lib/ld-linux.so.2", "/libx32/ld-linux-x32.so.2", "/lib64/ld-linux-x86-64.so.2"}
		return t
	},
	"arm64": func() *target {
		t := arm(true)
		t.triplet, t.muslArch = "aarch64-linux-gnu", "aarch64"
		t.interps = []string{"/lib/ld-linux-aarch64.so.1", "/lib/ld-linux-aarch64_be.so.1", "/lib/ld-linux.so.3", "/lib/ld-linux-armhf.so.3"}
		return t
	},
	"arm": func() *target {
		t := arm(false)
		t.triplet, t.muslArch = "arm-linux-gnueabihf", "armhf"
		t.interps = []string{"/lib/ld-linux-armhf.so.3", "/lib/ld-linux.so.3"}
		return t
	},
	"ppc64le": withTriplet(generic(true, int32(ArchPPC64)), "powerpc64le-linux-gnu", "powerpc64le", "/lib64/ld64.so.2"),
	"s390x":   withOrder(withTriplet(generic(true, int32(ArchS390X)), "s390x-linux-gnu", "s390x", "/lib/ld64.so.1"), binary.BigEndian),
	"riscv64": withTriplet(generic(true, int32(ArchRISCV64)), "riscv64-linux-gnu", "riscv64", "/lib/ld-linux-riscv64-lp64d.so.1"),
	"loong64": withTriplet(generic(true, int32(ArchLoongArchDouble)), "loongarch64-linux-gnu", "loongarch64", "/lib64/ld-linux-loongarch-lp64d.so.1"),
}

func withTriplet(mk func() *target, triplet, musl, interp string) func() *target {
	return func() *target {
		t := mk()
		t.triplet, t.muslArch, t.signed = triplet, musl, false
		t.interps = []string{interp}
		return t
	}
}

func withOrder(mk func() *target, o byteOrder) func() *target {
	return func() *target {
		t := mk()
		t.order = o
		return t
	}
}

// x86 is sysdeps/unix/sysv/linux/x86/readelflib.c: x86-64 and x32
// libraries are libc6 with their tag, i386 libraries keep the generic flag.
func x86(is64 bool) *target {
	return &target{
		is64: is64, signed: true, x86ISA: true,
		hwcapNames: map[string]uint{"x86_64": 1, "avx512_1": 2},
		allHWCaps:  map[string]uint{"sse2": 0, "x86_64": 1, "avx512_1": 2},
		platforms:  x86Platforms,
		accepts: func(class byte, machine uint16) bool {
			return (machine == 62 && (class == 1 || class == 2)) || (machine == 3 && class == 1)
		},
		classify: func(class byte, machine uint16, _ uint32, flag int32) (int32, bool) {
			switch {
			case machine == 62 && class == 2:
				return int32(ArchX8664) | flagLibc6, true
			case machine == 62:
				return int32(ArchX32) | flagLibc6, true
			}
			return flag, true
		},
	}
}

// arm covers AArch64 (which also lists 32-bit ARM libraries) and 32-bit
// ARM: EABI5 objects are tagged hard- or soft-float from e_flags.
func arm(is64 bool) *target {
	return &target{
		is64: is64,
		accepts: func(class byte, _ uint16) bool {
			return class == 1 || (is64 && class == 2)
		},
		classify: func(class byte, _ uint16, eflags uint32, flag int32) (int32, bool) {
			if class == 2 {
				return int32(ArchAArch64) | flagLibc6, true
			}
			if eflags>>24 != 5 { // EF_ARM_EABI_VERSION != EF_ARM_EABI_VER5
				return flag, true
			}
			switch {
			case eflags&0x400 != 0: // EF_ARM_ABI_FLOAT_HARD
				return int32(ArchARMHF) | flagLibc6, true
			case eflags&0x200 != 0: // EF_ARM_ABI_FLOAT_SOFT
				return int32(ArchARMSF) | flagLibc6, true
			}
			return flagLibc6, true
		},
	}
}

// isHWCapName reports a legacy hwcap subdirectory name ldconfig descends
// into: an important hwcap, a platform, or "tls".
func (t *target) isHWCapName(name string) bool {
	if _, ok := t.hwcapNames[name]; ok {
		return true
	}
	_, ok := t.platforms[name]
	return ok || name == "tls"
}

// pathHWCap is glibc's path_hwcap: the hwcap bits of the trailing hwcap,
// platform and "tls" components of a directory path.
func (t *target) pathHWCap(p string) uint64 {
	var hw uint64
	for {
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return hw
		}
		bit, ok := t.hwcapBit(p[i+1:])
		if !ok {
			return hw
		}
		hw += 1 << bit
		p = p[:i]
	}
}

func (t *target) hwcapBit(name string) (uint, bool) {
	if b, ok := t.allHWCaps[name]; ok {
		return b, true
	}
	if b, ok := t.platforms[name]; ok {
		return b, true
	}
	return tlsHWCapBit, name == "tls"
}
