package ldcache

import "strconv"

// Arch is the architecture part of an entry's flags: the bits glibc masks
// with FLAG_REQUIRED_MASK (0xff00). The dynamic loader of each ABI accepts
// only entries with its own value, so a 64-bit x86 process never picks an
// i386 or x32 library from a mixed cache.
type Arch uint16

// Architecture values, as glibc's dl-cache.h numbers them. ArchNone is what
// 32-bit i386 (and other ABIs without a tag of their own) is written as.
const (
	ArchNone             Arch = 0x0000 // i386, and 32-bit ABIs without a tag
	ArchSPARC64          Arch = 0x0100
	ArchIA64             Arch = 0x0200
	ArchX8664            Arch = 0x0300 // x86-64
	ArchS390X            Arch = 0x0400 // 64-bit s390
	ArchPPC64            Arch = 0x0500 // 64-bit POWER, both byte orders (ppc64le)
	ArchMIPS64N32        Arch = 0x0600
	ArchMIPS64N64        Arch = 0x0700
	ArchX32              Arch = 0x0800 // x86-64 with 32-bit pointers
	ArchARMHF            Arch = 0x0900 // 32-bit ARM, hard-float ABI
	ArchAArch64          Arch = 0x0a00
	ArchARMSF            Arch = 0x0b00 // 32-bit ARM, soft-float ABI
	ArchMIPS32NaN2008    Arch = 0x0c00
	ArchMIPS64N32NaN2008 Arch = 0x0d00
	ArchMIPS64N64NaN2008 Arch = 0x0e00
	ArchRISCVSoft        Arch = 0x0f00 // RISC-V, soft-float ABI
	ArchRISCVDouble      Arch = 0x1000 // RISC-V, double-float ABI (riscv64 lp64d)
	ArchLoongArchSoft    Arch = 0x1100
	ArchLoongArchDouble  Arch = 0x1200
)

// ArchI386 is the value i386 libraries carry: no architecture tag.
const ArchI386 = ArchNone

// ArchRISCV64 is the value riscv64 (lp64d) libraries carry.
const ArchRISCV64 = ArchRISCVDouble

var archNames = map[Arch]string{
	ArchNone: "i386", ArchSPARC64: "sparc64", ArchIA64: "ia64",
	ArchX8664: "x86-64", ArchS390X: "s390x", ArchPPC64: "ppc64",
	ArchMIPS64N32: "mips64-n32", ArchMIPS64N64: "mips64",
	ArchX32: "x32", ArchARMHF: "armhf", ArchAArch64: "aarch64",
	ArchARMSF: "armel", ArchMIPS32NaN2008: "mips-nan2008",
	ArchMIPS64N32NaN2008: "mips64-n32-nan2008", ArchMIPS64N64NaN2008: "mips64-nan2008",
	ArchRISCVSoft: "riscv-soft-float", ArchRISCVDouble: "riscv64",
	ArchLoongArchSoft: "loongarch-soft-float", ArchLoongArchDouble: "loongarch64",
}

// String names the architecture ("x86-64", "i386", "aarch64", …); unknown
// values print as their hex flag value.
func (a Arch) String() string {
	if s, ok := archNames[a]; ok {
		return s
	}
	return "0x" + strconv.FormatUint(uint64(a), 16)
}

// goarchs maps Go's GOARCH to the architecture of its 64-bit (or only)
// libraries and of the 32-bit libraries the same machine also runs.
var goarchs = map[string][2]Arch{
	"amd64":   {ArchX8664, ArchI386},
	"386":     {ArchI386, ArchI386},
	"arm64":   {ArchAArch64, ArchARMHF},
	"arm":     {ArchARMHF, ArchARMHF},
	"ppc64le": {ArchPPC64, ArchPPC64},
	"ppc64":   {ArchPPC64, ArchPPC64},
	"s390x":   {ArchS390X, ArchS390X},
	"riscv64": {ArchRISCV64, ArchRISCV64},
	"loong64": {ArchLoongArchDouble, ArchLoongArchDouble},
}

// ArchOf returns the architecture of a GOARCH's native libraries ("amd64"
// gives x86-64, "arm64" aarch64, "ppc64le" ppc64).
func ArchOf(goarch string) (Arch, bool) {
	a, ok := goarchs[goarch]
	return a[0], ok
}

// Compat32Of returns the architecture of the 32-bit libraries a GOARCH's
// machines also run, as libnvidia-container's compat32 handling sees it:
// i386 for amd64, armhf for arm64. It reports false where there is none.
func Compat32Of(goarch string) (Arch, bool) {
	a, ok := goarchs[goarch]
	if !ok || a[0] == a[1] {
		return 0, false
	}
	return a[1], true
}

// Type is the library type in the low byte of an entry's flags.
type Type uint8

// Library types (FLAG_TYPE_MASK values).
const (
	TypeLibc4 Type = 0 // a.out libc4 library
	TypeELF   Type = 1 // ELF library of unknown libc
	TypeLibc5 Type = 2 // ELF libc5 library
	TypeLibc6 Type = 3 // ELF glibc library (the usual value)
)

var typeNames = [...]string{"libc4", "ELF", "libc5", "libc6"}

// String returns glibc's name for the type ("libc6", "ELF", …, "unknown").
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "unknown"
}

// Flag masks of an entry's flags.
const (
	FlagTypeMask     = 0x00ff // the Type
	FlagRequiredMask = 0xff00 // the Arch
)
