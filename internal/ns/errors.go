package ns

import (
	"errors"
	"fmt"
)

// ErrNotMountNamespace is matched by the error of opening a file that is not
// a mount namespace.
var ErrNotMountNamespace = errors.New("not a mount namespace")

// ErrGoexit is returned by Run when the function called runtime.Goexit
// (t.FailNow and t.SkipNow do) instead of returning.
var ErrGoexit = errors.New("function called runtime.Goexit")

// PanicError is the value Run re-panics with, on the caller's goroutine,
// when the function panicked on the confined thread. It keeps the original
// value and the confined goroutine's stack, which the re-panic would lose.
type PanicError struct {
	// Value is what the function panicked with.
	Value any
	// Stack is the confined goroutine's stack at the panic.
	Stack []byte
}

// Error describes the panic and where it happened.
func (p *PanicError) Error() string {
	return fmt.Sprintf("panic in namespace: %v\n\n%s", p.Value, p.Stack)
}

// Unwrap returns Value when it is an error.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}
