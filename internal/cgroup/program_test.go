package cgroup

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// denyAllBut13 is a small stand-in for a runtime's program as the kernel
// gives it back (jumps as plain offsets): allow c 1:3, deny everything else.
var denyAllBut13 = append(prefixHeader(),
	jne(asm.R2, devcgDevChar, 4),
	jne(asm.R4, 1, 3),
	jne(asm.R5, 3, 2),
	asm.Mov.Imm32(asm.R0, 1),
	asm.Return(),
	asm.Mov.Imm32(asm.R0, 0),
	asm.Return(),
)

func jne(dst asm.Register, v int32, off int16) asm.Instruction {
	ins := jneImm(dst, v)
	ins.Offset = off
	return ins
}

func TestSanitize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		insns asm.Instructions
		want  string // error text; empty: accepted
	}{
		{"plain program", denyAllBut13, ""},
		{"ends in a jump", asm.Instructions{asm.Mov.Imm(asm.R0, 1).WithSymbol("f"), asm.Return(), {OpCode: asm.Ja.Op(asm.ImmSource), Offset: -2}}, ""},
		{"stack use", asm.Instructions{asm.StoreImm(asm.R10, -8, 1, asm.DWord), asm.LoadMem(asm.R0, asm.R10, -8, asm.DWord), asm.Return()}, ""},
		{"64-bit constant", asm.Instructions{asm.LoadImm(asm.R0, 1<<40, asm.DWord), asm.Return()}, ""},
		{"empty", nil, "no instructions"},
		{"helper call", asm.Instructions{asm.FnKtimeGetNs.Call(), asm.Return()}, "calls a helper"},
		{"map reference", asm.Instructions{asm.LoadMapPtr(asm.R1, 7), asm.Mov.Imm(asm.R0, 0), asm.Return()}, "map reference"},
		{"map value", asm.Instructions{asm.LoadMapValue(asm.R1, 7, 0), asm.Mov.Imm(asm.R0, 0), asm.Return()}, "map reference"},
		{"blinded", asm.Instructions{{OpCode: asm.Mov.Op32(asm.ImmSource), Dst: 11, Constant: 5}, asm.Return()}, "beyond R10"},
		{"packet load", asm.Instructions{asm.LoadAbs(0, asm.Word), asm.Return()}, "map reference or packet load"},
		{"atomic add", asm.Instructions{asm.StoreXAdd(asm.R10, asm.R0, asm.Word), asm.Return()}, "memory access mode"},
		{"no exit", asm.Instructions{asm.Mov.Imm(asm.R0, 1)}, "last instruction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := sanitize(tc.insns)
			if tc.want == "" {
				require.NoError(t, err)
				require.Len(t, out, len(tc.insns), "instructions")
				for i, ins := range out {
					assert.Empty(t, ins.Symbol(), "instruction %d keeps metadata: %v", i, ins)
					assert.Empty(t, ins.Reference(), "instruction %d keeps metadata: %v", i, ins)
				}
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
	for i, ins := range p {
		assert.False(t, writesR1(ins), "instruction %d (%v) writes R1", i, ins)
		if ins.OpCode.JumpOp() == asm.JNE {
			assert.True(t, starts[i+1+int(ins.Offset)], "instruction %d (%v) jumps to %d, not to a block start", i, ins, i+1+int(ins.Offset))
		}
	}
	assert.Equal(t, len(rules), strings.Count(p.String(), "Exit"), "prefix exits, want one per rule:\n%v", p)
}

func writesR1(ins asm.Instruction) bool {
	cls := ins.OpCode.Class()
	return ins.Dst == asm.R1 && (cls.IsALU() || cls == asm.LdXClass || cls == asm.LdClass)
}

func TestRebuild(t *testing.T) {
	rules, err := normalizeAll([]Rule{{Major: 195, Minor: 255}})
	require.NoError(t, err)
	got, err := rebuild(rules, denyAllBut13)
	require.NoError(t, err)
	prefix := allowPrefix(rules)
	require.Len(t, got, len(prefix)+len(denyAllBut13), "rebuilt program: %d prefix + %d original instructions", len(prefix), len(denyAllBut13))
	for i, ins := range denyAllBut13 {
		g := got[len(prefix)+i]
		type fields struct {
			OpCode   asm.OpCode
			Dst, Src asm.Register
			Offset   int16
			Constant int64
		}
		assert.Equal(t, fields{ins.OpCode, ins.Dst, ins.Src, ins.Offset, ins.Constant}, fields{g.OpCode, g.Dst, g.Src, g.Offset, g.Constant},
			"original instruction %d changed: %v, was %v", i, g, ins)
	}
}
