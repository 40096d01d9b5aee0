package requirement

import (
	"errors"
	"fmt"
	"strings"
)

// Requirement checks (NVIDIA_REQUIRE_*): the DSL of libnvidia-container's
// src/cli/dsl.c, evaluated the way nvidia-container-cli configure does.

// Errors matched (with errors.Is) by the errors of [Check] and
// [Validate].
var (
	// ErrUnsatisfied: the host does not meet a requirement.
	ErrUnsatisfied = errors.New("unsatisfied condition")
	// ErrInvalid: a requirement cannot be parsed or compared.
	ErrInvalid = errors.New("invalid expression")
	// ErrUnknownFact: a requirement failed because a host fact it compares
	// is unknown (NVML unavailable); matched together with ErrUnsatisfied.
	ErrUnknownFact = errors.New("host fact unknown")
)

// Facts is what requirements are evaluated against. The plan fills it
// from the driver and the selected devices; it holds plain strings so that
// this package's DSL needs neither.
//
// A term whose fact is unknown is false, so a requirement holds only
// through facts that are known; libnvidia-container, which cannot start
// without NVML, never lacks them: where it cannot learn one it refuses the
// container, and here a requirement fails only where the unknown fact
// decides it. The one exception is dsl.c's: arch and brand terms pass when
// no device is selected.
//
// An unknown brand is not NVML's "Unknown": libnvidia-container names a
// brand NVML reports as NVML_BRAND_UNKNOWN (or one it has no name for)
// "Unknown", which "brand=unknown" matches; a brand that was never asked
// (procfs discovery) matches no brand term. The standard CUDA images'
// NVIDIA_REQUIRE_CUDA ("cuda>=12.4 brand=tesla,driver>=535,driver<536 …")
// therefore configure on a procfs host whose driver meets the cuda term,
// and on one whose driver does not, fail naming the brand only where a
// brand clause's driver range holds (the forward compatibility branches).
type Facts struct {
	// CUDAVersion is the driver's CUDA version, "12.4": NVML's, or
	// without NVML the driver version mapped through NVIDIA's table
	// (driver.CUDAVersionForDriver). Empty: unknown, and a cuda term is
	// false.
	CUDAVersion string
	// CUDAAtLeast says CUDAVersion is only a lower bound (a driver newer
	// than the table's last row): a cuda term that a newer version could
	// decide otherwise ("cuda>=13.4" with 13.3) is unknown, so false,
	// naming the fact; one it cannot ("cuda>=12.4") is decided.
	CUDAAtLeast bool
	// DriverVersion is the kernel driver (NVRM) version, "550.54.15".
	// Empty: unknown, and a driver term is false.
	DriverVersion string
	// Devices are the selected GPUs; a selected MIG device contributes its
	// parent GPU. Empty: arch and brand terms pass, and each requirement is
	// evaluated once without a device.
	Devices []Device
	// UnknownReason says why empty facts are unknown, for the error, e.g.
	// "NVML unavailable: …". Empty: "not reported by the host".
	UnknownReason string
}

// Device is one selected GPU as the DSL sees it.
type Device struct {
	// Arch is the CUDA compute capability, "8.0". Empty: unknown, and an
	// arch term is false.
	Arch string
	// Brand is NVML's brand name, "Tesla", "GeForce", ... Empty: unknown,
	// and a brand term is false.
	Brand string
}

// UnsatisfiedError is a requirement the host does not meet. Its text is
// libnvidia-container's, with the unknown fact added when one made it
// fail.
type UnsatisfiedError struct {
	Requirement string // the whole expression
	Device      int    // index in Facts.Devices, or -1 for none
	// Unknown is the first term evaluated whose fact was unknown, and
	// Fact and Why name that fact and why it is unknown
	// (Facts.UnknownReason); all empty when every fact compared
	// was known.
	Unknown, Fact, Why string
}

// Error reads "unsatisfied condition: <first clause>", with libnvidia-container's
// advice appended when that clause starts with "cuda>=": "unsatisfied condition:
// cuda>=12.8, please update your driver to a newer version, or use an earlier
// cuda container". When an unknown fact made it fail, the advice is
// replaced by what is unknown and why: "unsatisfied condition: cuda>=12.8
// (cannot check cuda>=12.8: CUDA version unknown: NVML unavailable: …)".
func (e *UnsatisfiedError) Error() string {
	first, _, _ := strings.Cut(e.Requirement, " ")
	switch {
	case e.Unknown != "":
		return fmt.Sprintf("unsatisfied condition: %s (cannot check %s: %s unknown: %s)", first, e.Unknown, e.Fact, e.Why)
	case strings.HasPrefix(first, "cuda>="):
		return "unsatisfied condition: " + first +
			", please update your driver to a newer version, or use an earlier cuda container"
	}
	return "unsatisfied condition: " + first
}

// Is reports whether target is [ErrUnsatisfied], or [ErrUnknownFact] when
// an unknown fact made the requirement fail.
func (e *UnsatisfiedError) Is(target error) bool {
	return target == ErrUnsatisfied || (target == ErrUnknownFact && e.Unknown != "")
}

// InvalidError says where a requirement is invalid.
type InvalidError struct {
	Requirement string // the whole expression
	Term        string // the offending comma-separated term
	Offset      int    // byte offset of Term in Requirement
	Reason      string // what is wrong with it
}

// Error reads `invalid expression: term "cuda>=x" at offset 0 of requirement
// "cuda>=x": version "x" is not made of digits and dots`. It starts with
// libnvidia-container's text, "invalid expression".
func (e *InvalidError) Error() string {
	return fmt.Sprintf("invalid expression: term %q at offset %d of requirement %q: %s",
		e.Term, e.Offset, e.Requirement, e.Reason)
}

// Is reports whether target is [ErrInvalid].
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// Check evaluates reqs the way nvidia-container-cli configure
// does: every requirement against each selected device in turn, or once
// without a device when none is selected; the first failure is returned.
//
// Inside one requirement, space-separated clauses are ORed and
// comma-separated terms ANDed. Evaluation is dsl.c's, quirks included: it is
// lazy (terms after a false one in the same clause, and clauses after a
// satisfied one, are not examined, so an invalid term there goes unnoticed),
// a value is only checked when it is compared, and a clause with no terms
// keeps the previous clause's result. Use [Validate] to check a
// requirement strictly.
//
// A term comparing a fact that is unknown (empty in f) is false; the
// requirement then fails unless another clause holds, with an
// [*UnsatisfiedError] that names the unknown fact (and matches
// [ErrUnknownFact]). The terms after it in its clause are still evaluated,
// so an invalid one is reported as it would be with the fact known. Only
// arch and brand terms with no device selected pass without a fact.
//
// The error is an [*UnsatisfiedError] or an [*InvalidError].
func Check(reqs []string, f Facts) error {
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

func checkAll(reqs []string, f *Facts, dev *Device, idx int) error {
	for _, r := range reqs {
		ok, unknown, err := evalPredicate(r, f, dev)
		if err != nil {
			return err
		}
		if !ok {
			return unsatisfied(r, idx, unknown, f)
		}
	}
	return nil
}

func unsatisfied(r string, idx int, u unknownFact, f *Facts) error {
	e := &UnsatisfiedError{Requirement: r, Device: idx}
	if u.term != "" {
		e.Unknown, e.Fact, e.Why = u.term, u.fact, f.UnknownReason
		if e.Why == "" {
			e.Why = "not reported by the host"
		}
	}
	return e
}

// Validate checks every term of expr strictly: known key, one of
// the six operators, a non-empty value, a dotted number for cuda, driver
// and arch, only = and != for brand, and a term short enough for
// libnvidia-container's 128-byte error buffer. It reports the first
// problem as an [*InvalidError]. A requirement it accepts is
// reported invalid by [Check] only if a host fact is malformed.
func Validate(expr string) error {
	for _, c := range splitClauses(expr) {
		for _, t := range c {
			if err := validateTerm(expr, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// unknownFact is a term that was false because its fact is unknown.
type unknownFact struct{ term, fact string }

// evalPredicate is dsl_evaluate: it reports whether expr holds and, when
// it does not, the first term evaluated whose fact was unknown. A term on
// an unknown fact is false, but the terms after it in its clause are
// still evaluated, as dsl.c would reach them were the fact known and the
// term true.
func evalPredicate(expr string, f *Facts, dev *Device) (bool, unknownFact, error) {
	ret := true
	var first unknownFact
	for _, clause := range splitClauses(expr) {
		ok, u, err := evalClause(expr, clause, f, dev)
		if err != nil {
			return false, unknownFact{}, err
		}
		if first.term == "" {
			first = u
		}
		if ok != nil {
			ret = *ok
		}
		if ok == nil || *ok {
			break
		}
	}
	return ret, first, nil
}

// evalClause ANDs a clause's terms, stopping at the first false one; it
// returns nil for a clause without terms (which keeps the previous
// clause's result) and, when only unknown facts made it false, the first
// term on one.
func evalClause(expr string, clause []span, f *Facts, dev *Device) (*bool, unknownFact, error) {
	var u unknownFact
	for i, t := range clause {
		ok, fact, err := evalTerm(expr, t, f, dev)
		switch {
		case err != nil:
			return nil, u, err
		case fact != "" && u.term == "":
			u = unknownFact{t.text, fact}
		case fact == "" && !ok:
			return &ok, unknownFact{}, nil // false whatever the unknown fact is
		}
		if i == len(clause)-1 {
			all := u.term == ""
			return &all, u, nil
		}
	}
	return nil, u, nil
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
