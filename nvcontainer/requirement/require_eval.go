package requirement

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// comparator is one of the DSL's six operators.
type comparator uint8

const (
	opEQ comparator = iota
	opNE
	opLT
	opLE
	opGT
	opGE
)

// operators is dsl.c's table, in its order: the first entry that the
// operator run is a prefix of wins, so "!" means "!=" and "<" means "<".
var operators = [...]string{opEQ: "=", opNE: "!=", opLT: "<", opLE: "<=", opGT: ">", opGE: ">="}

// exprMax is dsl.c's EXPR_MAX: a false term is formatted as "key op value"
// into a buffer this size, and one that does not fit makes the expression
// invalid.
const exprMax = 128

// term is one parsed KEY OP VALUE.
type term struct {
	key   string // as written
	op    comparator
	value string
}

// parseTerm splits t like evaluate_rule: the key runs up to the first of
// "<>=!", the operator is the maximal run of those, the rest is the value.
func parseTerm(t string) (term, string) {
	n := strings.IndexAny(t, "<>=!")
	switch {
	case n < 0:
		return term{}, "no operator (one of = != < <= > >=)"
	case n == 0:
		return term{}, "no key before the operator"
	}
	run := t[n:]
	run = run[:len(run)-len(strings.TrimLeft(run, "<>=!"))]
	op, ok := matchOperator(run)
	if !ok {
		return term{}, fmt.Sprintf("operator %q is not one of = != < <= > >=", run)
	}
	v := t[n+len(run):]
	if v == "" {
		return term{}, "no value after the operator"
	}
	return term{key: t[:n], op: op, value: v}, ""
}

func matchOperator(run string) (comparator, bool) {
	for i, op := range operators {
		if strings.HasPrefix(op, run) {
			return comparator(i), true
		}
	}
	return 0, false
}

// evalTerm is evaluate_rule plus the rule callbacks of configure.c. A
// non-empty fact names the unknown fact that made the term false.
func evalTerm(expr string, s span, f *Facts, dev *Device) (bool, string, error) {
	bad := func(reason string) error {
		return &InvalidError{Requirement: expr, Term: s.text, Offset: s.off, Reason: reason}
	}
	t, reason := parseTerm(s.text)
	if reason != "" {
		return false, "", bad(reason)
	}
	r := evalRule(t, f, dev)
	if r.invalid != "" {
		return false, "", bad(r.invalid)
	}
	if !r.ok && formattedLen(t) >= exprMax {
		return false, "", bad(fmt.Sprintf("condition longer than %d bytes", exprMax-1))
	}
	return r.ok, r.unknown, nil
}

func formattedLen(t term) int { return len(t.key) + len(operators[t.op]) + len(t.value) + 2 }

// dslKey is one of the DSL's four keys.
type dslKey uint8

const (
	keyUnknown dslKey = iota
	keyCUDA
	keyDriver
	keyArch
	keyBrand
)

var keyNames = [...]string{keyCUDA: "cuda", keyDriver: "driver", keyArch: "arch", keyBrand: "brand"}

// lookupKey matches k case-insensitively, as dsl.c's str_case_equal does.
func lookupKey(k string) dslKey {
	for i, name := range keyNames {
		if name != "" && asciiEqualFold(k, name) {
			return dslKey(i)
		}
	}
	return keyUnknown
}

func unknownKey(k string) string {
	return fmt.Sprintf("unknown key %q (want cuda, driver, arch or brand)", k)
}

// ruleResult is a term's value: ok, or invalid (a non-empty reason), or
// false because the fact named by unknown is not known.
type ruleResult struct {
	ok      bool
	invalid string
	unknown string
}

// evalRule applies the rule for t's key. Arch and brand pass without a
// device, as in configure.c; a fact that is unknown makes the term false.
func evalRule(t term, f *Facts, dev *Device) ruleResult {
	switch lookupKey(t.key) {
	case keyCUDA:
		r := hostVersion("CUDA version", f.CUDAVersion, t)
		if f.CUDAAtLeast && r.invalid == "" && r.unknown == "" && !boundDecides(f.CUDAVersion, t) {
			return ruleResult{unknown: "CUDA version above " + f.CUDAVersion}
		}
		return r
	case keyDriver:
		return hostVersion("driver version", f.DriverVersion, t)
	case keyArch:
		if dev == nil {
			return ruleResult{ok: true}
		}
		return hostVersion("device compute capability", dev.Arch, t)
	case keyBrand:
		if dev == nil {
			return ruleResult{ok: true}
		}
		return hostBrand(dev.Brand, t)
	}
	return ruleResult{invalid: unknownKey(t.key)}
}

// hostVersion compares the host's version have with t; the value is
// checked before the fact, so a malformed term stays invalid on a host
// that does not know the fact.
func hostVersion(what, have string, t term) ruleResult {
	if !isDotted(t.value) {
		return ruleResult{invalid: fmt.Sprintf("version %q is not made of digits and dots", t.value)}
	}
	if have == "" {
		return ruleResult{unknown: what}
	}
	if !isDotted(have) {
		return ruleResult{invalid: fmt.Sprintf("host %s %q is not made of digits and dots", what, have)}
	}
	ok, valid := compareVersion(have, t.op, t.value)
	if !valid {
		return ruleResult{invalid: fmt.Sprintf("cannot compare version %q with %q", have, t.value)}
	}
	return ruleResult{ok: ok}
}

// boundDecides reports whether t has the same value for every host
// version from low up. A comparison with t.value changes value only at
// t.value, so low, t.value (when above low) and a version above any other
// are the versions to try.
func boundDecides(low string, t term) bool {
	want, _ := compareVersion(low, t.op, t.value)
	probes := []string{"18446744073709551614"} // the largest component dsl.c reads
	if above, _ := compareVersion(t.value, opGT, low); above {
		probes = append(probes, t.value)
	}
	for _, p := range probes {
		if got, _ := compareVersion(p, t.op, t.value); got != want {
			return false
		}
	}
	return true
}

func hostBrand(have string, t term) ruleResult {
	if _, reason := compareBrand("", t.op, t.value); reason != "" {
		return ruleResult{invalid: reason}
	}
	if have == "" {
		return ruleResult{unknown: "device brand"}
	}
	ok, _ := compareBrand(have, t.op, t.value)
	return ruleResult{ok: ok}
}

func compareBrand(have string, op comparator, want string) (bool, string) {
	switch op {
	case opEQ:
		return asciiEqualFold(have, want), ""
	case opNE:
		return !asciiEqualFold(have, want), ""
	}
	return false, fmt.Sprintf("brand takes only = and !=, not %q", operators[op])
}

func isDotted(s string) bool {
	return strings.Trim(s, "0123456789.") == ""
}

// compareVersion is dsl_compare_version on two strings of digits and dots:
// numeric components compared in turn, runs of dots skipped, then what is
// left of the longer one ignored if it is only zeros and dots. valid is
// false where dsl.c gives -1: a component that does not start with a digit
// or does not fit below UINTMAX_MAX.
func compareVersion(v1 string, op comparator, v2 string) (result, valid bool) {
	for v1 != "" && v2 != "" {
		n1, r1, ok1 := leadingNumber(v1)
		n2, r2, ok2 := leadingNumber(v2)
		if !ok1 || !ok2 {
			return false, false
		}
		if n1 != n2 {
			return decideDiffer(n1, op, n2), true
		}
		v1, v2 = strings.TrimLeft(r1, "."), strings.TrimLeft(r2, ".")
	}
	return decideTail(strings.TrimLeft(v1, ".0"), op, strings.TrimLeft(v2, ".0")), true
}

func decideDiffer(n1 uint64, op comparator, n2 uint64) bool {
	switch op {
	case opEQ:
		return false
	case opNE:
		return true
	case opLT, opLE:
		return n1 < n2
	}
	return n1 > n2
}

// decideTail compares what is left once one side ran out; a non-empty
// rest makes its side the greater.
func decideTail(r1 string, op comparator, r2 string) bool {
	if op == opNE {
		return r1 != "" || r2 != ""
	}
	if r1 == "" && r2 == "" && (op == opEQ || op == opLE || op == opGE) {
		return true
	}
	switch op {
	case opLT, opLE:
		return r1 == "" && r2 != ""
	case opGT, opGE:
		return r1 != "" && r2 == ""
	}
	return false
}

// leadingNumber reads the digits at the start of s like strtoumax: none, or
// a value of UINTMAX_MAX or more, is not ok.
func leadingNumber(s string) (uint64, string, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, s, false
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil || n == math.MaxUint64 {
		return 0, s, false
	}
	return n, s[i:], true
}

// asciiEqualFold is strcasecmp() == 0: ASCII letters only, unlike
// strings.EqualFold.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// validateTerm is the strict check behind Validate.
func validateTerm(expr string, s span) error {
	bad := func(reason string) error {
		return &InvalidError{Requirement: expr, Term: s.text, Offset: s.off, Reason: reason}
	}
	t, reason := parseTerm(s.text)
	if reason == "" {
		reason = strictReason(t)
	}
	if reason != "" {
		return bad(reason)
	}
	return nil
}

func strictReason(t term) string {
	reason := ""
	switch lookupKey(t.key) {
	case keyUnknown:
		reason = unknownKey(t.key)
	case keyBrand:
		_, reason = compareBrand("", t.op, t.value)
	default:
		reason = strictVersion(t)
	}
	if reason == "" && formattedLen(t) >= exprMax {
		reason = fmt.Sprintf("condition longer than %d bytes", exprMax-1)
	}
	return reason
}

// strictVersion accepts a value only if every component parses, which is
// what comparing it with itself checks.
func strictVersion(t term) string {
	if !isDotted(t.value) {
		return fmt.Sprintf("version %q is not made of digits and dots", t.value)
	}
	if _, ok := compareVersion(t.value, t.op, t.value); !ok {
		return fmt.Sprintf("version %q has a component that is not a number below 2^64-1", t.value)
	}
	return ""
}
