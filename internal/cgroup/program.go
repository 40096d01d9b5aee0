package cgroup

import (
	"errors"
	"fmt"
	"slices"
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
func prefixHeader() []insn {
	return []insn{
		ldxW(r2, r1, 0),
		alu32Imm(aluAND, r2, 0xFFFF),
		ldxW(r3, r1, 0),
		alu32Imm(aluRSH, r3, 16),
		ldxW(r4, r1, 4),
		ldxW(r5, r1, 8),
	}
}

// ruleBlock returns the checks of one normalized rule: when the request's
// type, major and minor equal the rule's and its access is a subset of the
// rule's, return 1 (allow); otherwise fall through past the block. Unlike
// the generator it is modelled on, it uses R0, not R1, as scratch.
func ruleBlock(r Rule) []insn {
	typ := int32(devcgDevChar)
	if r.Type == 'b' {
		typ = devcgDevBlock
	}
	acc := accessBits(r.Access)
	b := []insn{jneImm(r2, typ, 0)}
	if acc != devcgAccAll {
		b = append(b,
			movReg32(r0, r3),
			alu32Imm(aluAND, r0, acc),
			jneReg(r0, r3, 0),
		)
	}
	b = append(b,
		jneImm(r4, int32(r.Major), 0),
		jneImm(r5, int32(r.Minor), 0),
		alu32Imm(aluMOV, r0, 1),
		exit(),
	)
	for i := range b {
		if b[i].class() == clsJMP && b[i].jumpOp() == jmpJNE {
			b[i].off = int16(len(b) - 1 - i) // to the first instruction after b
		}
	}
	return b
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
func allowPrefix(rules []Rule) []insn {
	insns := prefixHeader()
	for _, r := range rules {
		insns = append(insns, ruleBlock(r)...)
	}
	return insns
}

// rebuild returns a program that accepts the normalized rules and otherwise
// behaves as original, the translated instructions of an attached program.
// Jumps in original are relative, so they keep their targets.
func rebuild(rules []Rule, original []insn) ([]insn, error) {
	if err := sanitize(original); err != nil {
		return nil, err
	}
	return append(allowPrefix(rules), original...), nil
}

// sanitize refuses translated instructions that cannot be loaded again as
// they stand: helper and subprogram calls (the kernel rewrites their
// targets), map references (IDs in place of file descriptors), the JIT's
// blinding register, and anything outside plain ALU, jump, memory and
// constant instructions.
func sanitize(insns []insn) error {
	if len(insns) == 0 {
		return fmt.Errorf("reading back the program: no instructions: %w", ErrNotSupported)
	}
	for i := 0; i < len(insns); i++ {
		in := insns[i]
		if err := checkInstruction(in); err != nil {
			return fmt.Errorf("reading back the program: instruction %d (%v): %w", i, in, err)
		}
		if in.op == opLoadImm64 {
			if i+1 == len(insns) || insns[i+1].op != 0 || insns[i+1].dst != 0 || insns[i+1].src != 0 {
				return fmt.Errorf("reading back the program: instruction %d (%v): 64-bit constant without its second half: %w", i, in, ErrNotSupported)
			}
			i++
		}
	}
	last := insns[len(insns)-1]
	if !last.isJump() || (last.jumpOp() != jmpEXIT && last.jumpOp() != jmpJA) {
		return fmt.Errorf("reading back the program: last instruction %v is not an exit or jump: %w", last, ErrNotSupported)
	}
	return nil
}

func checkInstruction(in insn) error {
	if in.dst > r10 || in.src > r10 {
		return fmt.Errorf("uses a register beyond R10, as JIT constant blinding (net.core.bpf_jit_harden) does: %w", ErrNotSupported)
	}
	switch cls := in.class(); {
	case in.isALU():
		return nil
	case in.isJump():
		if in.jumpOp() == jmpCALL {
			return fmt.Errorf("calls a helper or subprogram: %w", ErrNotSupported)
		}
		return nil
	case cls == clsLDX, cls == clsST, cls == clsSTX:
		if in.mode() != modeMEM {
			return fmt.Errorf("memory access mode %#02x: %w", in.mode(), ErrNotSupported)
		}
		return nil
	case in.op == opLoadImm64 && in.src == 0:
		return nil
	}
	return fmt.Errorf("opcode %#02x (a map reference or packet load): %w", in.op, ErrNotSupported)
}

// errAllowedAlready says that an attached program already starts with the
// prefix Allow would add for the same rules (an earlier Allow, not taken
// back, as after a configure killed part-way): it is kept as it is, so
// that running Allow again does not stack another copy.
var errAllowedAlready = errors.New("rules allowed already")

// startsWith reports whether the translated instructions insns begin with
// prefix.
func startsWith(insns, prefix []insn) bool {
	return len(insns) >= len(prefix) && slices.Equal(insns[:len(prefix)], prefix)
}
