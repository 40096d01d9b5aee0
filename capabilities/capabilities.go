package capabilities

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// Capability is one driver capability class. The constants are single bits,
// declared in canonical (alphabetical) order.
type Capability uint8

// The driver capability classes.
const (
	// Compat32 adds the 32-bit copies of the other classes' libraries.
	Compat32 Capability = 1 << iota
	// Compute is CUDA and OpenCL: libcuda, the PTX JIT, the MPS binaries.
	Compute
	// Display is X11 display support; it implies Graphics' libraries.
	Display
	// Graphics is OpenGL, EGL, GLES and Vulkan.
	Graphics
	// NGX is the NVIDIA NGX library (DLSS and friends).
	NGX
	// Utility is nvidia-smi and NVML.
	Utility
	// Video is the codec SDK (NVENC, NVDEC, VDPAU); it implies Compute's
	// libraries.
	Video
)

// names is indexed by bit position, so it is in canonical order.
var names = [...]string{"compat32", "compute", "display", "graphics", "ngx", "utility", "video"}

// All is every capability class; "all" in a list means this set.
const All = Set(Compat32 | Compute | Display | Graphics | NGX | Utility | Video)

// Default is what an empty or unset capability list means under
// libnvidia-container's documented rule: utility only.
const Default = Set(Utility)

// HookDefault is what nvidia-container-runtime-hook uses when
// NVIDIA_DRIVER_CAPABILITIES is unset or empty on a non-legacy image:
// compute and utility (before it is limited to the supported set).
const HookDefault = Set(Compute | Utility)

// ErrUnknown is matched (with errors.Is) by every error about a word that is
// not a capability class.
var ErrUnknown = errors.New("unknown capability")

// ParseError reports an unknown word in a capability list.
type ParseError struct {
	Input string // the whole list as given
	Word  string // the offending item, trimmed
}

// Error reads `parsing driver capabilities "compute,foo": unknown capability "foo"`.
func (e *ParseError) Error() string {
	return fmt.Sprintf("parsing driver capabilities %q: unknown capability %q", e.Input, e.Word)
}

// Is reports whether target is [ErrUnknown].
func (e *ParseError) Is(target error) bool { return target == ErrUnknown }

// String returns the class name ("compute"), or "capability(0x..)" for a
// value that is not exactly one class.
func (c Capability) String() string {
	if bits.OnesCount8(uint8(c)) != 1 || Set(c)&^All != 0 {
		return fmt.Sprintf("capability(%#x)", uint8(c))
	}
	return names[bits.TrailingZeros8(uint8(c))]
}

// ParseCapability returns the class with the given name. Names are
// lowercase and matched exactly, as nvidia-container-runtime-hook does.
func ParseCapability(name string) (Capability, error) {
	for i, n := range names {
		if n == name {
			return Capability(1 << i), nil
		}
	}
	return 0, &ParseError{Input: name, Word: name}
}

// Set is a set of capability classes. The zero Set is empty.
type Set uint8

// Of returns the set holding caps.
func Of(caps ...Capability) Set {
	var s Set
	for _, c := range caps {
		s |= Set(c)
	}
	return s
}

// Parse reads a comma-separated list of class names. Items are trimmed of
// spaces and empty items are skipped; "all" anywhere means [All], although
// the other items must still be known. A list with no items (the empty
// string, or only commas and spaces) means [Default]. An unknown word gives
// a [*ParseError] naming it.
func Parse(list string) (Set, error) {
	s, err := parseItems(list)
	if err != nil {
		return 0, err
	}
	if s == 0 {
		return Default, nil
	}
	return s, nil
}

// parseItems parses list without applying the default; "all" sets every
// bit, so an all-only list can never come back empty.
func parseItems(list string) (Set, error) {
	var s Set
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		switch item {
		case "":
			continue
		case "all":
			s |= All
			continue
		}
		c, err := ParseCapability(item)
		if err != nil {
			return 0, &ParseError{Input: list, Word: item}
		}
		s |= Set(c)
	}
	return s, nil
}

// Has reports whether c is in s.
func (s Set) Has(c Capability) bool { return c != 0 && s&Set(c) == Set(c) }

// Union returns the classes in s or o.
func (s Set) Union(o Set) Set { return s | o }

// Intersect returns the classes in both s and o.
func (s Set) Intersect(o Set) Set { return s & o }

// Minus returns the classes in s that are not in o.
func (s Set) Minus(o Set) Set { return s &^ o }

// SubsetOf reports whether every class in s is also in o.
func (s Set) SubsetOf(o Set) bool { return s&^o == 0 }

// Len returns the number of classes in s.
func (s Set) Len() int { return bits.OnesCount8(uint8(s & All)) }

// List returns the classes in s in canonical order.
func (s Set) List() []Capability {
	out := make([]Capability, 0, s.Len())
	for i := range names {
		if c := Capability(1 << i); s.Has(c) {
			out = append(out, c)
		}
	}
	return out
}

// String returns the classes in canonical (alphabetical) order, joined by
// commas: "compute,utility". The empty set prints as "".
func (s Set) String() string {
	parts := make([]string, 0, s.Len())
	for _, c := range s.List() {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, ",")
}

// Expand returns s with the classes libnvidia-container adds when it picks
// driver libraries: Video brings Compute, Display brings Graphics. See the
// package documentation for what this does not cover.
func (s Set) Expand() Set {
	if s.Has(Video) {
		s |= Set(Compute)
	}
	if s.Has(Display) {
		s |= Set(Graphics)
	}
	return s
}

// MarshalText returns [Set.String], so a Set prints as "compute,utility"
// in JSON.
func (s Set) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses text like [Parse], except that an empty list stays
// the empty set, so MarshalText and UnmarshalText round-trip.
func (s *Set) UnmarshalText(text []byte) error {
	v, err := parseItems(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
