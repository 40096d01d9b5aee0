package nvcli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// DebugEnv is the variable libnvidia-container reads its debug log's
// path from; --debug sets it.
const DebugEnv = "NVC_DEBUG_FILE"

// debugHeader starts each run's part of a debug log, as
// libnvidia-container writes it.
const debugHeader = "\n-- WARNING, the following logs are for debugging purposes only --\n\n"

// DebugFile is the debug log's path: --debug, else getenv(DebugEnv)
// (getenv nil: os.Getenv); "": no log.
func (g *Global) DebugFile(getenv func(string) string) string {
	if g.Debug != "" {
		return g.Debug
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	return getenv(DebugEnv)
}

// OpenDebugLog opens the debug log at path as libnvidia-container does:
// appended to (created 0644 if missing), after its warning header, one
// line per record in its format (see [NewLogHandler]). It returns the
// logger and the file to close.
func OpenDebugLog(path string) (*slog.Logger, io.Closer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("opening debug log %s: %w", path, err)
	}
	if _, err := io.WriteString(f, debugHeader); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("writing debug log %s: %w", path, err)
	}
	return slog.New(&logHandler{mu: &sync.Mutex{}, w: f}), f, nil
}

// logHandler writes each record as one line of libnvidia-container's
// debug log: the level letter (I for debug and info, W for warnings, E
// for errors), the UTC time as MMDD HH:MM:SS.usec, the process id (the C
// library prints its thread's), the caller's file:line ("???:0" when
// unknown), "] " and the message, then the attributes as key=value.
type logHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	attrs string // " key=value" of WithAttrs
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	letter := 'I'
	switch {
	case r.Level >= slog.LevelError:
		letter = 'E'
	case r.Level >= slog.LevelWarn:
		letter = 'W'
	}
	file, line := "???", 0
	if r.PC != 0 {
		f, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
		file, line = filepath.Base(f.File), f.Line
	}
	t := r.Time.UTC()
	var b strings.Builder
	fmt.Fprintf(&b, "%c%s.%06d %d %s:%d] ", letter, t.Format("0102 15:04:05"), t.Nanosecond()/1000, os.Getpid(), file, line)
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(formatAttr(a))
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	for _, a := range attrs {
		c.attrs += formatAttr(a)
	}
	return &c
}

func (h *logHandler) WithGroup(string) slog.Handler { return h }

func formatAttr(a slog.Attr) string {
	v := a.Value.Resolve().String()
	if strings.ContainsAny(v, " \t\n\"") || v == "" {
		v = fmt.Sprintf("%q", v)
	}
	return " " + a.Key + "=" + v
}
