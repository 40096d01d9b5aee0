//go:build !cgo

package main

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// eofReader is stdin that records whether it was read to its end.
type eofReader struct {
	r   io.Reader
	eof bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.eof = true
	}
	return n, err
}

// Every way out of the program reads stdin to its end first: a runtime
// (crun) writing the state into a pipe the hook already closed reports
// the hook as failed. The state here is followed by more than the state
// reader's limit, so no path reaches EOF by parsing alone.
func TestStdinReadToEnd(t *testing.T) {
	root := libRoot(t)
	state := `{"bundle":"/x","root":"` + root + `"}`
	big := strings.Repeat(" ", 2<<20)
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
	}{
		{"success", []string{"update-ldcache", "--folder", "/opt/nv"}, state, 0},
		{"state too large", []string{"update-ldcache"}, state + big, 1},
		{"unknown hook", []string{"update-application-profile", "--x"}, state + big, 0},
		{"unknown flag", []string{"update-ldcache", "--new"}, state + big, 0},
		{"unknown global flag", []string{"--new", "noop"}, state + big, 0},
		{"help", []string{"--help"}, state + big, 0},
		{"no command", nil, state + big, 1},
		{"noop", []string{"noop"}, state + big, 0},
		{"stray argument", []string{"create-symlinks", "x"}, state + big, 0},
		{"state from a file", []string{"noop", "--container-spec", "/nonexistent"}, state + big, 0},
		{"failing hook", []string{"create-symlinks", "--link", "bad"}, state + big, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &eofReader{r: strings.NewReader(tt.stdin)}
			var stderr strings.Builder
			code := run(tt.args, in, &stderr, "")
			assert.Equal(t, tt.code, code, "exit status: %s", stderr.String())
			assert.True(t, in.eof, "returned without reading stdin to its end")
		})
	}
}
