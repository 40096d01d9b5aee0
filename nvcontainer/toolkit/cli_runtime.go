package toolkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// RuntimeArgs is what a wrapper around a low-level OCI runtime (runc,
// crun) needs from the command line it was given.
type RuntimeArgs struct {
	// Command is the subcommand ("create", "run", "start", "delete", …);
	// empty when there is none (runc --version).
	Command string
	// Bundle is the bundle directory of create and run (--bundle, -b),
	// as given; empty means the current directory, as for runc.
	Bundle string
	// Log and LogFormat are the global --log and --log-format options:
	// the file the runtime's errors go to, which containerd's shim reads
	// back ("text" or "json"; empty: text).
	Log, LogFormat string
}

// runtimeValueFlags are the global options of runc and crun that take a
// value as the next word.
var runtimeValueFlags = map[string]bool{
	"root": true, "log": true, "log-format": true, "log-level": true,
	"criu": true, "rootless": true, "cgroup-manager": true,
}

// ParseRuntimeArgs finds the subcommand and, for create and run, the
// bundle in a runc or crun command line (without argv[0]). Options are
// read as runc's flag parser reads them: one or two dashes, the value
// after "=" or as the next word.
func ParseRuntimeArgs(args []string) RuntimeArgs {
	var ra RuntimeArgs
	i := skipOptions(args, runtimeValueFlags)
	ra.Log, ra.LogFormat = optionValue(args[:i], "log"), optionValue(args[:i], "log-format")
	if i >= len(args) {
		return ra
	}
	ra.Command = args[i]
	if ra.IsCreate() {
		ra.Bundle = findBundle(args[i+1:])
	}
	return ra
}

// IsCreate reports whether the command creates a container: create or run.
func (a RuntimeArgs) IsCreate() bool { return a.Command == "create" || a.Command == "run" }

// skipOptions returns the index of the first word that is not an option
// or an option's value.
func skipOptions(args []string, valued map[string]bool) int {
	for i := 0; i < len(args); i++ {
		name, ok := optionName(args[i])
		if !ok {
			return i
		}
		if valued[name] && !strings.Contains(args[i], "=") {
			i++
		}
	}
	return len(args)
}

func optionName(arg string) (string, bool) {
	if len(arg) < 2 || arg[0] != '-' || arg == "--" {
		return "", false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name, true
}

// optionValue returns the value of the last option name among the global
// options args, as --name=value or --name value; "" when absent.
func optionValue(args []string, name string) string {
	v := ""
	for i := 0; i < len(args); i++ {
		n, ok := optionName(args[i])
		if !ok || !runtimeValueFlags[n] {
			continue
		}
		value, inline := "", false
		if _, value, inline = strings.Cut(args[i], "="); !inline && i+1 < len(args) {
			i++
			value = args[i]
		}
		if n == name {
			v = value
		}
	}
	return v
}

// RuntimeLogEntry is msg as an error line of runc's log (--log), in
// format "json" ({"level":"error","msg":…,"time":…}, what containerd's
// shim reads back and reports) or else text, at time now.
func RuntimeLogEntry(format, msg string, now time.Time) []byte {
	ts := now.UTC().Format(time.RFC3339Nano)
	if format == "json" {
		b, _ := json.Marshal(struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
			Time  string `json:"time"`
		}{"error", msg, ts})
		return append(b, '\n')
	}
	return fmt.Appendf(nil, "time=%q level=error msg=%q\n", ts, msg)
}

// findBundle returns the value of the last --bundle or -b option.
func findBundle(args []string) string {
	bundle := ""
	for i := 0; i < len(args); i++ {
		name, ok := optionName(args[i])
		if !ok || (name != "bundle" && name != "b") {
			continue
		}
		if _, v, found := strings.Cut(args[i], "="); found {
			bundle = v
		} else if i+1 < len(args) {
			i++
			bundle = args[i]
		}
	}
	return bundle
}

// AddHook returns the runtime spec configJSON with hook appended to the
// hooks of stage ("prestart", "createRuntime", …) and reports whether it
// changed it: a stage that already has a hook with the same path is left
// as it is. Every other member of the document, including ones this
// module's runtime-spec version does not know, is kept as it was; members
// are written back in sorted order.
func AddHook(configJSON []byte, stage string, hook specs.Hook) ([]byte, bool, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(configJSON, &doc); err != nil {
		return nil, false, fmt.Errorf("adding %s hook to runtime spec: %w", stage, err)
	}
	hooks := map[string]json.RawMessage{}
	if err := unmarshalMember(doc["hooks"], &hooks); err != nil {
		return nil, false, fmt.Errorf("adding %s hook to runtime spec: hooks: %w", stage, err)
	}
	var list []specs.Hook
	if err := unmarshalMember(hooks[stage], &list); err != nil {
		return nil, false, fmt.Errorf("adding %s hook to runtime spec: hooks.%s: %w", stage, stage, err)
	}
	for _, h := range list {
		if h.Path == hook.Path {
			return configJSON, false, nil
		}
	}
	var raw []json.RawMessage
	_ = unmarshalMember(hooks[stage], &raw) // checked above as []specs.Hook
	h, _ := json.Marshal(hook)
	hooks[stage], _ = json.Marshal(append(raw, h))
	doc["hooks"], _ = json.Marshal(hooks)
	out, err := json.MarshalIndent(doc, "", "\t")
	return out, err == nil, err
}

// unmarshalMember decodes a member that may be absent or null.
func unmarshalMember(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}
