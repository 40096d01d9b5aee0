package nvcontainer

import (
	"errors"

	"github.com/go-nvc/nvc/devices"
)

// CLIError is an error as nvidia-container-cli prints it after its
// program name: "<Prefix>: <Err>".
type CLIError struct {
	// Prefix is one of the CLI's prefixes: "detection error", "device
	// error", "ldcache error", "mount error", …
	Prefix string
	// Err is the cause.
	Err error
}

// Error returns "<Prefix>: <Err>".
func (e *CLIError) Error() string { return e.Prefix + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *CLIError) Unwrap() error { return e.Err }

// CLIErrorFor returns an error of [NewPlan], [List] or [Plan.Apply] as
// nvidia-container-cli prints it: a *PlanError keeps its own line ("<stage>
// error: …"), except that a refused device ID prints as "<stage> error:
// <ID>: <reason>"; an *ApplyError is an "ldcache error" for the loader
// cache step and a "mount error" otherwise; anything else is a "detection
// error". nil stays nil.
func CLIErrorFor(err error) error {
	var pe *PlanError
	var ae *ApplyError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae) && ae.Step == StepLDCache:
		return &CLIError{"ldcache error", err}
	case errors.As(err, &ae):
		return &CLIError{"mount error", err}
	case !errors.As(err, &pe):
		return &CLIError{"detection error", err}
	}
	var de *devices.DeviceIDError
	if errors.As(pe.Err, &de) {
		return &CLIError{pe.Stage + " error", idFirst{de}}
	}
	return err
}

// idFirst prints a refused device ID before the reason, as
// nvidia-container-cli does.
type idFirst struct{ *devices.DeviceIDError }

func (e idFirst) Error() string { return e.ID + ": " + e.Reason }
func (e idFirst) Unwrap() error { return e.DeviceIDError }
