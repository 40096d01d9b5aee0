package nvcli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-nvc/nvc/nvcontainer"
)

// Prefix is what nvidia-container-cli prints before an error, after its
// program name.
type Prefix string

// The prefixes nvidia-container-cli prints errors under. A
// *nvcontainer.PlanError carries its own ("device error", "requirement
// error", …).
const (
	// PrefixInput: the command line or the container (ROOTFS, --pid).
	PrefixInput Prefix = "input error"
	// PrefixIMEX: an --imex-channel value.
	PrefixIMEX Prefix = "error parsing IMEX info"
	// PrefixPermission: configure without root.
	PrefixPermission Prefix = "permission error"
	// PrefixInitialization: opening the driver or the devices, loading
	// the kernel modules.
	PrefixInitialization Prefix = "initialization error"
	// PrefixDetection: reading the driver's files.
	PrefixDetection Prefix = "detection error"
	// PrefixLDCache: writing the container's loader cache.
	PrefixLDCache Prefix = "ldcache error"
	// PrefixMount: any other step of configuring the container.
	PrefixMount Prefix = "mount error"
)

// Error is an error as nvidia-container-cli prints it after its program
// name: "<Prefix>: <Err>".
type Error struct {
	// Prefix is one of the Prefix constants.
	Prefix Prefix
	// Err is the cause.
	Err error
}

// Error returns "<Prefix>: <Err>".
func (e *Error) Error() string { return string(e.Prefix) + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// ErrorFor returns an error of [nvcontainer.NewPlan], [List] or
// [nvcontainer.Plan.Apply] as nvidia-container-cli prints it: a
// *nvcontainer.PlanError is already the CLI's line ("<stage> error: …", a
// refused device ID first), and so is an *Error; an
// *nvcontainer.ApplyError is a [PrefixLDCache] error for the loader cache
// step and a [PrefixMount] error otherwise; anything else is a
// [PrefixDetection] error. nil stays nil.
func ErrorFor(err error) error {
	var ae *nvcontainer.ApplyError
	switch {
	case err == nil, errors.As(err, new(*nvcontainer.PlanError)), errors.As(err, new(*Error)):
		return err
	case errors.As(err, &ae) && ae.Step == nvcontainer.StepLDCache:
		return &Error{PrefixLDCache, err}
	case errors.As(err, &ae):
		return &Error{PrefixMount, err}
	}
	return &Error{PrefixDetection, err}
}

// wrap returns err as a prefix error; nil stays nil.
func wrap(prefix Prefix, err error) error {
	if err == nil {
		return nil
	}
	return &Error{prefix, err}
}

// UsageError is a command line argp refuses. Its Error method is what
// argp prints on stderr, without the final newline: getopt's complaint
// ("nvidia-container-cli list: unrecognized option '--x'"), argp's
// ("nvidia-container-cli info: Too many arguments") or the short usage
// ("Usage: nvidia-container-cli [OPTION...] COMMAND [ARG...]"), then
// "Try `… --help' or `… --usage' for more information.".
type UsageError struct{ msg string }

// Error returns argp's lines.
func (e *UsageError) Error() string { return strings.TrimSuffix(e.msg, "\n") }

// ExitFailure is nvidia-container-cli's exit status after any error,
// usage errors included: libnvidia-container sets argp_err_exit_status
// to EXIT_FAILURE.
const ExitFailure = 1

// Report prints err on w as nvidia-container-cli does and returns the
// exit status: nothing and 0 for nil; argp's lines for a *[UsageError];
// otherwise "<prog>: <err>" (prog is [Command.Prog]). It returns
// [ExitFailure] for an error.
func Report(w io.Writer, prog string, err error) int {
	var ue *UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintln(w, ue.Error())
	default:
		fmt.Fprintf(w, "%s: %v\n", prog, err)
	}
	return ExitFailure
}
