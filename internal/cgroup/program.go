package cgroup

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// Values of struct bpf_cgroup_dev_ctx (include/uapi/linux/bpf.h): the low 16
// bits of access_type hold the device type, the high 16 bits the access.
const (
	devcgDevBlock = 1
	devcgDevChar  = 2
	devcgAccMknod = 1
	devcgAccRead  = 2
	devcgAccWrite = 4
	devcgAccAll   = devcgAccMknod | devcgAccRead | devcgAccWrite
)

// prefixHeader loads the context into the registers that the rule blocks
// test, the layout of opencontainers/cgroups' generator: R2 type, R3 access,
// R4 major, R5 minor. R1 (the context) is left intact for the original
// program that follows.
func prefixHeader() asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word),
		asm.And.Imm32(asm.R2, 0xFFFF),
		asm.LoadMem(asm.R3, asm.R1, 0, asm.Word),
		asm.RSh.Imm32(asm.R3, 16),
		asm.LoadMem(asm.R4, asm.R1, 4, asm.Word),
		asm.LoadMem(asm.R5, asm.R1, 8, asm.Word),
	}
}

// ruleBlock returns the checks of one normalized rule: when the request's
// type, major and minor equal the rule's and its access is a subset of the
// rule's, return 1 (allow); otherwise fall through past the block. Unlike
// the generator it is modelled on, it uses R0, not R1, as scratch.
func ruleBlock(r Rule) asm.Instructions {
	typ := int32(devcgDevChar)
	if r.Type == 'b' {
		typ = devcgDevBlock
	}
	acc := accessBits(r.Access)
	b := asm.Instructions{jneImm(asm.R2, typ)}
	if acc != devcgAccAll {
		b = append(b,
			asm.Mov.Reg32(asm.R0, asm.R3),
			asm.And.Imm32(asm.R0, acc),
			asm.Instruction{OpCode: asm.JNE.Op(asm.RegSource), Dst: asm.R0, Src: asm.R3},
		)
	}
	b = append(b,
		jneImm(asm.R4, int32(r.Major)),
		jneImm(asm.R5, int32(r.Minor)),
		asm.Mov.Imm32(asm.R0, 1),
		asm.Return(),
	)
	for i := range b {
		if b[i].OpCode.JumpOp() == asm.JNE {
			b[i].Offset = int16(len(b) - 1 - i) // to the first instruction after b
		}
	}
	return b
}

func jneImm(dst asm.Register, v int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.JNE.Op(asm.ImmSource), Dst: dst, Constant: int64(v)}
}

func accessBits(access string) int32 {
	var bits int32
	for _, c := range access {
		switch c {
		case 'r':
			bits |= devcgAccRead
		case 'w':
			bits |= devcgAccWrite
		case 'm':
			bits |= devcgAccMknod
		}
	}
	return bits
}

// allowPrefix returns the instructions that accept the normalized rules and
// fall through to whatever follows for any other request.
//
// opencontainers/cgroups v0.1.0 generates whole programs only (its
// generator, deviceFilter, is unexported and reached through DevicesSetV2,
// which attaches what it makes), and its access check uses R1 as scratch,
// so its output could not be followed by another program that reads the
// context. The prefix therefore follows its block layout with R0 as scratch.
func allowPrefix(rules []Rule) asm.Instructions {
	insns := prefixHeader()
	for _, r := range rules {
		insns = append(insns, ruleBlock(r)...)
	}
	return insns
}

// rebuild returns a program that accepts the normalized rules and otherwise
// behaves as original, the translated instructions of an attached program.
// Jumps in original are relative, so they keep their targets.
func rebuild(rules []Rule, original asm.Instructions) (asm.Instructions, error) {
	body, err := sanitize(original)
	if err != nil {
		return nil, err
	}
	return append(allowPrefix(rules), body...), nil
}

// sanitize copies translated instructions without their metadata (symbols,
// BTF) and refuses what cannot be loaded again as it stands: helper and
// subprogram calls (the kernel rewrites their targets), map references (IDs
// in place of file descriptors), the JIT's blinding register, and anything
// outside plain ALU, jump, memory and constant instructions.
func sanitize(insns asm.Instructions) (asm.Instructions, error) {
	if len(insns) == 0 {
		return nil, fmt.Errorf("reading back the program: no instructions: %w", ErrNotSupported)
	}
	out := make(asm.Instructions, len(insns))
	for i, ins := range insns {
		if err := checkInstruction(ins); err != nil {
			return nil, fmt.Errorf("reading back the program: instruction %d (%v): %w", i, ins, err)
		}
		out[i] = asm.Instruction{OpCode: ins.OpCode, Dst: ins.Dst, Src: ins.Src, Offset: ins.Offset, Constant: ins.Constant}
	}
	last := out[len(out)-1].OpCode
	if last.JumpOp() != asm.Exit && last.JumpOp() != asm.Ja {
		return nil, fmt.Errorf("reading back the program: last instruction %v is not an exit or jump: %w", out[len(out)-1], ErrNotSupported)
	}
	return out, nil
}

func checkInstruction(ins asm.Instruction) error {
	if ins.Dst > asm.R10 || ins.Src > asm.R10 {
		return fmt.Errorf("uses a register beyond R10, as JIT constant blinding (net.core.bpf_jit_harden) does: %w", ErrNotSupported)
	}
	switch cls := ins.OpCode.Class(); {
	case cls.IsALU():
		return nil
	case cls.IsJump():
		if ins.OpCode.JumpOp() == asm.Call {
			return fmt.Errorf("calls a helper or subprogram: %w", ErrNotSupported)
		}
		return nil
	case cls == asm.LdXClass, cls == asm.StClass, cls == asm.StXClass:
		if ins.OpCode.Mode() != asm.MemMode {
			return fmt.Errorf("memory access mode %v: %w", ins.OpCode.Mode(), ErrNotSupported)
		}
		return nil
	case ins.IsConstantLoad(asm.DWord) && ins.Src == 0:
		return nil
	}
	return fmt.Errorf("opcode %v (a map reference or packet load): %w", ins.OpCode, ErrNotSupported)
}

// errAllowedAlready says that an attached program already starts with the
// prefix Allow would add for the same rules (an earlier Allow, not taken
// back, as after a configure killed part-way): it is kept as it is, so
// that running Allow again does not stack another copy.
var errAllowedAlready = errors.New("rules allowed already")

// startsWith reports whether the translated instructions insns begin with
// prefix, compared as sanitize copies them.
func startsWith(insns, prefix asm.Instructions) bool {
	if len(insns) < len(prefix) {
		return false
	}
	for i, p := range prefix {
		in := insns[i]
		if in.OpCode != p.OpCode || in.Dst != p.Dst || in.Src != p.Src || in.Offset != p.Offset || in.Constant != p.Constant {
			return false
		}
	}
	return true
}
