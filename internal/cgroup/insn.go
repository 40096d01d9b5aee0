package cgroup

import (
	"encoding/binary"
	"fmt"
)

// insn is one eBPF instruction (struct bpf_insn, include/uapi/linux/bpf.h):
// an 8-bit opcode, two 4-bit registers, a 16-bit offset and a 32-bit
// immediate. A 64-bit constant load (BPF_LD|BPF_IMM|BPF_DW) takes two
// slots, the second with opcode 0 and the constant's high half in imm.
type insn struct {
	op       uint8
	dst, src uint8
	off      int16
	imm      int32
}

// insnSize is the size of struct bpf_insn.
const insnSize = 8

// Opcode fields (include/uapi/linux/bpf_common.h and bpf.h).
const (
	clsLD    = 0x00
	clsLDX   = 0x01
	clsST    = 0x02
	clsSTX   = 0x03
	clsALU   = 0x04
	clsJMP   = 0x05
	clsJMP32 = 0x06
	clsALU64 = 0x07

	sizeW  = 0x00 // 32 bits
	sizeDW = 0x18 // 64 bits

	modeIMM = 0x00
	modeMEM = 0x60

	srcK = 0x00 // immediate operand
	srcX = 0x08 // register operand

	aluAND = 0x50
	aluRSH = 0x70
	aluMOV = 0xb0

	jmpJA   = 0x00
	jmpJNE  = 0x50
	jmpCALL = 0x80
	jmpEXIT = 0x90

	// opLoadImm64 is the first slot of a 64-bit constant load.
	opLoadImm64 = clsLD | modeIMM | sizeDW
)

// Registers.
const (
	r0  = 0
	r1  = 1
	r2  = 2
	r3  = 3
	r4  = 4
	r5  = 5
	r10 = 10
)

func (i insn) class() uint8  { return i.op & 0x07 }
func (i insn) jumpOp() uint8 { return i.op & 0xf0 }
func (i insn) mode() uint8   { return i.op & 0xe0 }
func (i insn) isJump() bool  { return i.class() == clsJMP || i.class() == clsJMP32 }
func (i insn) isALU() bool   { return i.class() == clsALU || i.class() == clsALU64 }

func (i insn) String() string {
	return fmt.Sprintf("op %#02x dst r%d src r%d off %d imm %d", i.op, i.dst, i.src, i.off, i.imm)
}

// Constructors of the few instructions the prefix uses.

// ldxW loads the 32-bit word at src+off into dst.
func ldxW(dst, src uint8, off int16) insn {
	return insn{op: clsLDX | modeMEM | sizeW, dst: dst, src: src, off: off}
}

// alu32Imm applies a 32-bit ALU operation with an immediate to dst.
func alu32Imm(op, dst uint8, imm int32) insn { return insn{op: clsALU | op | srcK, dst: dst, imm: imm} }

// movReg32 copies the low 32 bits of src into dst.
func movReg32(dst, src uint8) insn { return insn{op: clsALU | aluMOV | srcX, dst: dst, src: src} }

// jneImm jumps off instructions ahead when dst != imm.
func jneImm(dst uint8, imm int32, off int16) insn {
	return insn{op: clsJMP | jmpJNE | srcK, dst: dst, imm: imm, off: off}
}

// jneReg jumps off instructions ahead when dst != src.
func jneReg(dst, src uint8, off int16) insn {
	return insn{op: clsJMP | jmpJNE | srcX, dst: dst, src: src, off: off}
}

func exit() insn { return insn{op: clsJMP | jmpEXIT} }

// littleEndian reports the host's byte order, which struct bpf_insn's
// register nibbles and numbers follow.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// encode returns insns as the kernel reads them.
func encode(insns []insn) []byte {
	b := make([]byte, 0, len(insns)*insnSize)
	for _, in := range insns {
		regs := in.dst&0x0f | in.src<<4
		if !littleEndian {
			regs = in.dst<<4 | in.src&0x0f
		}
		b = append(b, in.op, regs)
		b = binary.NativeEndian.AppendUint16(b, uint16(in.off))
		b = binary.NativeEndian.AppendUint32(b, uint32(in.imm))
	}
	return b
}

// decode parses instructions as the kernel writes them.
func decode(b []byte) ([]insn, error) {
	if len(b)%insnSize != 0 {
		return nil, fmt.Errorf("%d bytes of instructions, not a multiple of %d: %w", len(b), insnSize, ErrInvalid)
	}
	out := make([]insn, len(b)/insnSize)
	for i := range out {
		s := b[i*insnSize:]
		dst, src := s[1]&0x0f, s[1]>>4
		if !littleEndian {
			dst, src = s[1]>>4, s[1]&0x0f
		}
		out[i] = insn{op: s[0], dst: dst, src: src,
			off: int16(binary.NativeEndian.Uint16(s[2:])), imm: int32(binary.NativeEndian.Uint32(s[4:]))}
	}
	return out, nil
}
