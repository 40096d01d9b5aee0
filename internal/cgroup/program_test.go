package cgroup

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// denyAllBut13 is a small stand-in for a runtime's program as the kernel
// gives it back (jumps as plain offsets): allow c 1:3, deny everything else.
var denyAllBut13 = append(prefixHeader(),
	jneImm(r2, devcgDevChar, 4),
	jneImm(r4, 1, 3),
	jneImm(r5, 3, 2),
	alu32Imm(aluMOV, r0, 1),
	exit(),
	alu32Imm(aluMOV, r0, 0),
	exit(),
)

func TestSanitize(t *testing.T) {
	const (
		movImm64 = clsALU64 | aluMOV | srcK
		stDW     = clsST | modeMEM | sizeDW
		ldxDW    = clsLDX | modeMEM | sizeDW
		call     = clsJMP | jmpCALL
		ldAbsW   = clsLD | 0x20 | sizeW
		atomicW  = clsSTX | 0xc0 | sizeW
	)
	for _, tc := range []struct {
		name  string
		insns []insn
		want  string // error text; empty: accepted
	}{
		{"plain program", denyAllBut13, ""},
		{"ends in a jump", []insn{{op: movImm64, imm: 1}, exit(), {op: clsJMP | jmpJA, off: -2}}, ""},
		{"stack use", []insn{{op: stDW, dst: r10, off: -8, imm: 1}, {op: ldxDW, dst: r0, src: r10, off: -8}, exit()}, ""},
		{"64-bit constant", []insn{{op: opLoadImm64}, {imm: 1 << 8}, exit()}, ""},
		{"empty", nil, "no instructions"},
		{"helper call", []insn{{op: call, imm: 5}, exit()}, "calls a helper"},
		{"map reference", []insn{{op: opLoadImm64, dst: r1, src: 1, imm: 7}, {}, {op: movImm64}, exit()}, "map reference"},
		{"map value", []insn{{op: opLoadImm64, dst: r1, src: 2, imm: 7}, {}, {op: movImm64}, exit()}, "map reference"},
		{"constant cut short", []insn{exit(), {op: opLoadImm64}}, "second half"},
		{"blinded", []insn{{op: clsALU | aluMOV | srcK, dst: 11, imm: 5}, exit()}, "beyond R10"},
		{"packet load", []insn{{op: ldAbsW}, exit()}, "map reference or packet load"},
		{"atomic add", []insn{{op: atomicW, dst: r10, src: r0}, exit()}, "memory access mode"},
		{"no exit", []insn{{op: movImm64, imm: 1}}, "last instruction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := sanitize(tc.insns)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrNotSupported)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestAllowPrefix checks the prefix's shape: it never writes R1 (the
// context the original program reads), every jump lands on the next rule's
// first instruction or just past the prefix, and each block accepts.
func TestAllowPrefix(t *testing.T) {
	rules, err := normalizeAll([]Rule{{Major: 195, Minor: 255}, {Type: 'b', Major: 8, Minor: 1, Access: "rwm"}, {Major: 1, Minor: 8, Access: "r"}})
	require.NoError(t, err)
	p := allowPrefix(rules)
	starts := map[int]bool{len(p): true}
	at := len(prefixHeader())
	for _, r := range rules {
		at += len(ruleBlock(r))
		starts[at] = true
	}
	require.Len(t, p, at, "prefix instructions vs. blocks")
	exits := 0
	for i, in := range p {
		assert.False(t, writesR1(in), "instruction %d (%v) writes R1", i, in)
		if in.isJump() && in.jumpOp() == jmpJNE {
			assert.True(t, starts[i+1+int(in.off)], "instruction %d (%v) jumps to %d, not to a block start", i, in, i+1+int(in.off))
		}
		if in == exit() {
			exits++
		}
	}
	assert.Equal(t, len(rules), exits, "prefix exits, want one per rule:\n%v", p)
}

func writesR1(in insn) bool {
	cls := in.class()
	return in.dst == r1 && (in.isALU() || cls == clsLDX || cls == clsLD)
}

// TestAllowPrefixBytes checks the encoding against an independent
// assembler (cilium/ebpf's, which earlier versions loaded with): the bytes
// must be the same, or a prefix that an earlier version attached would not
// be recognised (errAllowedAlready) and would be stacked again.
func TestAllowPrefixBytes(t *testing.T) {
	rules, err := normalizeAll([]Rule{{Major: 195, Minor: 255}, {Type: 'b', Major: 8, Minor: 1, Access: "rwm"}, {Major: 1, Minor: 8, Access: "r"}, {Major: 4095, Minor: 1<<20 - 1, Access: "w"}})
	require.NoError(t, err)
	want := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word),
		asm.And.Imm32(asm.R2, 0xFFFF),
		asm.LoadMem(asm.R3, asm.R1, 0, asm.Word),
		asm.RSh.Imm32(asm.R3, 16),
		asm.LoadMem(asm.R4, asm.R1, 4, asm.Word),
		asm.LoadMem(asm.R5, asm.R1, 8, asm.Word),
	}
	jne := func(dst asm.Register, v int32, off int16) asm.Instruction {
		return asm.Instruction{OpCode: asm.JNE.Op(asm.ImmSource), Dst: dst, Constant: int64(v), Offset: off}
	}
	for _, r := range rules {
		typ := int32(devcgDevChar)
		if r.Type == 'b' {
			typ = devcgDevBlock
		}
		acc := accessBits(r.Access)
		if acc == devcgAccAll {
			want = append(want, jne(asm.R2, typ, 4))
		} else {
			want = append(want, jne(asm.R2, typ, 7),
				asm.Mov.Reg32(asm.R0, asm.R3),
				asm.And.Imm32(asm.R0, acc),
				asm.Instruction{OpCode: asm.JNE.Op(asm.RegSource), Dst: asm.R0, Src: asm.R3, Offset: 4})
		}
		want = append(want, jne(asm.R4, int32(r.Major), 3), jne(asm.R5, int32(r.Minor), 2), asm.Mov.Imm32(asm.R0, 1), asm.Return())
	}
	var buf bytes.Buffer
	var order binary.ByteOrder = binary.BigEndian
	if littleEndian {
		order = binary.LittleEndian
	}
	require.NoError(t, want.Marshal(&buf, order))
	got := encode(allowPrefix(rules))
	require.Equal(t, buf.Bytes(), got, "prefix bytes vs. cilium/ebpf's assembly:\n%v", want)
	back, err := decode(got)
	require.NoError(t, err)
	assert.Equal(t, allowPrefix(rules), back, "decode(encode(prefix))")
}

func TestDecodeInvalid(t *testing.T) {
	_, err := decode(make([]byte, 12))
	assert.ErrorIs(t, err, ErrInvalid)
}

func TestRebuild(t *testing.T) {
	rules, err := normalizeAll([]Rule{{Major: 195, Minor: 255}})
	require.NoError(t, err)
	got, err := rebuild(rules, denyAllBut13)
	require.NoError(t, err)
	prefix := allowPrefix(rules)
	require.Len(t, got, len(prefix)+len(denyAllBut13), "rebuilt program: %d prefix + %d original instructions", len(prefix), len(denyAllBut13))
	assert.Equal(t, prefix, got[:len(prefix)], "prefix")
	assert.Equal(t, denyAllBut13, got[len(prefix):], "original instructions")
}
