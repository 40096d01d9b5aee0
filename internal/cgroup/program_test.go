package cgroup

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
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
				if err != nil {
					t.Fatal(err)
				}
				if len(out) != len(tc.insns) {
					t.Fatalf("got %d instructions, want %d", len(out), len(tc.insns))
				}
				for i, ins := range out {
					if ins.Symbol() != "" || ins.Reference() != "" {
						t.Errorf("instruction %d keeps metadata: %v", i, ins)
					}
				}
				return
			}
			if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrNotSupported with %q", err, tc.want)
			}
		})
	}
}

// TestAllowPrefix checks the prefix's shape: it never writes R1 (the
// context the original program reads), every jump lands on the next rule's
// first instruction or just past the prefix, and each block accepts.
func TestAllowPrefix(t *testing.T) {
	rules, err := normalizeAll([]Rule{{Major: 195, Minor: 255}, {Type: 'b', Major: 8, Minor: 1, Access: "rwm"}, {Major: 1, Minor: 8, Access: "r"}})
	if err != nil {
		t.Fatal(err)
	}
	p := allowPrefix(rules)
	starts := map[int]bool{len(p): true}
	at := len(prefixHeader())
	for _, r := range rules {
		at += len(ruleBlock(r))
		starts[at] = true
	}
	if at != len(p) {
		t.Fatalf("prefix has %d instructions, blocks add up to %d", len(p), at)
	}
	for i, ins := range p {
		if writesR1(ins) {
			t.Errorf("instruction %d (%v) writes R1", i, ins)
		}
		if ins.OpCode.JumpOp() == asm.JNE && !starts[i+1+int(ins.Offset)] {
			t.Errorf("instruction %d (%v) jumps to %d, not to a block start", i, ins, i+1+int(ins.Offset))
		}
	}
	if n := strings.Count(p.String(), "Exit"); n != len(rules) {
		t.Errorf("prefix has %d exits, want one per rule (%d):\n%v", n, len(rules), p)
	}
}

func writesR1(ins asm.Instruction) bool {
	cls := ins.OpCode.Class()
	return ins.Dst == asm.R1 && (cls.IsALU() || cls == asm.LdXClass || cls == asm.LdClass)
}

func TestRebuild(t *testing.T) {
	rules, err := normalizeAll([]Rule{{Major: 195, Minor: 255}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rebuild(rules, denyAllBut13)
	if err != nil {
		t.Fatal(err)
	}
	prefix := allowPrefix(rules)
	if len(got) != len(prefix)+len(denyAllBut13) {
		t.Fatalf("rebuilt program has %d instructions, want %d + %d", len(got), len(prefix), len(denyAllBut13))
	}
	for i, ins := range denyAllBut13 {
		g := got[len(prefix)+i]
		if g.OpCode != ins.OpCode || g.Dst != ins.Dst || g.Src != ins.Src || g.Offset != ins.Offset || g.Constant != ins.Constant {
			t.Errorf("original instruction %d changed: %v, was %v", i, g, ins)
		}
	}
}
