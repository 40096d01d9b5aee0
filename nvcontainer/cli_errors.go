package nvcontainer

import "errors"

// CLIError is an error as nvidia-container-cli prints it after its
// program name: "<Prefix>: <Err>".
type CLIError struct {
	// Prefix is one of the CLI's prefixes: "input error",
	// "initialization error", "detection error", "ldcache error", "mount
	// error", "permission error", …
	Prefix string
	// Err is the cause.
	Err error
}

// Error returns "<Prefix>: <Err>".
func (e *CLIError) Error() string { return e.Prefix + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *CLIError) Unwrap() error { return e.Err }

// CLIErrorFor returns an error of [NewPlan], [List] or [Plan.Apply] as
// nvidia-container-cli prints it: a *PlanError is already the CLI's line
// ("<stage> error: …", a refused device ID first); an *ApplyError is an
// "ldcache error" for the loader cache step and a "mount error" otherwise;
// anything else is a "detection error". nil stays nil.
func CLIErrorFor(err error) error {
	var ae *ApplyError
	switch {
	case err == nil, errors.As(err, new(*PlanError)):
		return err
	case errors.As(err, &ae) && ae.Step == StepLDCache:
		return &CLIError{"ldcache error", err}
	case errors.As(err, &ae):
		return &CLIError{"mount error", err}
	}
	return &CLIError{"detection error", err}
}
