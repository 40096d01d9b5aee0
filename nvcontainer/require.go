package nvcontainer

import (
	"errors"
	"fmt"
	"strings"
)

// Requirement checks (NVIDIA_REQUIRE_*): the DSL of libnvidia-container's
// src/cli/dsl.c, evaluated the way nvidia-container-cli configure does.

// Errors matched (with errors.Is) by the errors of [CheckRequirements] and
// [ValidateRequirement].
var (
	// ErrUnsatisfied: the host does not meet a requirement.
	ErrUnsatisfied = errors.New("unsatisfied condition")
	// ErrInvalidRequirement: a requirement cannot be parsed or compared.
	ErrInvalidRequirement = errors.New("invalid expression")
)

// RequireFacts is what requirements are evaluated against. The plan fills it
// from the driver and the selected devices; it holds plain strings so that
// this package's DSL needs neither.
type RequireFacts struct {
	// CUDAVersion is the driver's CUDA version, "12.4". Empty: unknown, and
	// every cuda term passes.
	CUDAVersion string
	// DriverVersion is the kernel driver (NVRM) version, "550.54.15".
	// Empty: unknown, and every driver term passes.
	DriverVersion string
	// Devices are the selected GPUs; a selected MIG device contributes its
	// parent GPU. Empty: arch and brand terms pass, and each requirement is
	// evaluated once without a device.
	Devices []RequireDevice
}

// RequireDevice is one selected GPU as the DSL sees it.
type RequireDevice struct {
	// Arch is the CUDA compute capability, "8.0". Empty: arch terms pass.
	Arch string
	// Brand is NVML's brand name, "Tesla", "GeForce", ... Empty: brand
	// terms pass.
	Brand string
}

// UnsatisfiedError is a requirement the host does not meet. Its text is
// libnvidia-container's.
type UnsatisfiedError struct {
	Requirement string // the whole expression
	Device      int    // index in RequireFacts.Devices, or -1 for none
}

// Error reads "unsatisfied condition: <first clause>", with libnvidia-container's
// advice appended when that clause starts with "cuda>=": "unsatisfied condition:
// cuda>=12.8, please update your driver to a newer version, or use an earlier
// cuda container".
func (e *UnsatisfiedError) Error() string {
	first, _, _ := strings.Cut(e.Requirement, " ")
	if strings.HasPrefix(first, "cuda>=") {
		return "unsatisfied condition: " + first +
			", please update your driver to a newer version, or use an earlier cuda container"
	}
	return "unsatisfied condition: " + first
}

// Is reports whether target is [ErrUnsatisfied].
func (e *UnsatisfiedError) Is(target error) bool { return target == ErrUnsatisfied }

// InvalidRequirementError says where a requirement is invalid.
type InvalidRequirementError struct {
	Requirement string // the whole expression
	Term        string // the offending comma-separated term
	Offset      int    // byte offset of Term in Requirement
	Reason      string // what is wrong with it
}

// Error reads `invalid expression: term "cuda>=x" at offset 0 of requirement
// "cuda>=x": version "x" is not made of digits and dots`. It starts with
// libnvidia-container's text, "invalid expression".
func (e *InvalidRequirementError) Error() string {
	return fmt.Sprintf("invalid expression: term %q at offset %d of requirement %q: %s",
		e.Term, e.Offset, e.Requirement, e.Reason)
}

// Is reports whether target is [ErrInvalidRequirement].
func (e *InvalidRequirementError) Is(target error) bool { return target == ErrInvalidRequirement }

// CheckRequirements evaluates reqs the way nvidia-container-cli configure
// does: every requirement against each selected device in turn, or once
// without a device when none is selected; the first failure is returned.
//
// Inside one requirement, space-separated clauses are ORed and
// comma-separated terms ANDed. Evaluation is dsl.c's, quirks included: it is
// lazy (terms after a false one in the same clause, and clauses after a
// satisfied one, are not examined, so an invalid term there goes unnoticed),
// a value is only checked when it is compared, and a clause with no terms
// keeps the previous clause's result. Use [ValidateRequirement] to check a
// requirement strictly.
//
// The error is an [*UnsatisfiedError] or an [*InvalidRequirementError].
func CheckRequirements(reqs []string, f RequireFacts) error {
	if len(f.Devices) == 0 {
		return checkAll(reqs, &f, nil, -1)
	}
	for i := range f.Devices {
		if err := checkAll(reqs, &f, &f.Devices[i], i); err != nil {
			return err
		}
	}
	return nil
}

func checkAll(reqs []string, f *RequireFacts, dev *RequireDevice, idx int) error {
	for _, r := range reqs {
		ok, err := evalPredicate(r, f, dev)
		if err != nil {
			return err
		}
		if !ok {
			return &UnsatisfiedError{Requirement: r, Device: idx}
		}
	}
	return nil
}

// ValidateRequirement checks every term of expr strictly: known key, one of
// the six operators, a non-empty value, a dotted number for cuda, driver
// and arch, only = and != for brand, and a term short enough for
// libnvidia-container's 128-byte error buffer. It reports the first
// problem as an [*InvalidRequirementError]. A requirement it accepts is
// reported invalid by [CheckRequirements] only if a host fact is malformed.
func ValidateRequirement(expr string) error {
	for _, c := range splitClauses(expr) {
		for _, t := range c {
			if err := validateTerm(expr, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// evalPredicate is dsl_evaluate: it reports whether expr holds.
func evalPredicate(expr string, f *RequireFacts, dev *RequireDevice) (bool, error) {
	ret := true
	for _, clause := range splitClauses(expr) {
		complete := true
		for _, t := range clause {
			ok, err := evalTerm(expr, t, f, dev)
			if err != nil {
				return false, err
			}
			ret = ok
			if !ok {
				complete = false
				break
			}
		}
		if complete {
			break
		}
	}
	return ret, nil
}

// span is a piece of a requirement and its byte offset.
type span struct {
	text string
	off  int
}

// splitClauses splits expr on single spaces, then each clause on commas,
// dropping empty pieces (strsep semantics). A clause whose pieces are all
// empty stays, as an empty slice, because it still ends the OR loop.
func splitClauses(expr string) [][]span {
	var out [][]span
	for _, c := range splitSpans(span{expr, 0}, ' ') {
		out = append(out, splitSpans(c, ','))
	}
	return out
}

func splitSpans(s span, sep byte) []span {
	var out []span
	start := 0
	for i := 0; i <= len(s.text); i++ {
		if i < len(s.text) && s.text[i] != sep {
			continue
		}
		if i > start {
			out = append(out, span{s.text[start:i], s.off + start})
		}
		start = i + 1
	}
	return out
}
