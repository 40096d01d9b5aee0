package toolkit_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

func TestParseRuntimeArgs(t *testing.T) {
	tests := []struct {
		args            string
		command, bundle string
		log, format     string
	}{
		{"", "", "", "", ""},
		{"--version", "", "", "", ""},
		{"run --bundle /b id", "run", "/b", "", ""},
		{"create -b /b id", "create", "/b", "", ""},
		{"create --bundle=/b id", "create", "/b", "", ""},
		{"create -bundle /b id", "create", "/b", "", ""},
		{"create -b=/b --pid-file /p id", "create", "/b", "", ""},
		{"create id", "create", "", "", ""},
		{"--root /run/x --log /l --log-format json create --bundle /b id", "create", "/b", "/l", "json"},
		{"--log=/l1 --log /l2 --root=/log run --log /not id", "run", "", "/l2", ""},
		{"--root=/run/x --debug --systemd-cgroup run id", "run", "", "", ""},
		{"--cgroup-manager cgroupfs run -b rel id", "run", "rel", "", ""},
		{"start id", "start", "", "", ""},
		{"delete --force -b /notabundle id", "delete", "", "", ""},
		{"exec -b /b id sh", "exec", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.args, func(t *testing.T) {
			got := toolkit.ParseRuntimeArgs(strings.Fields(tc.args))
			assert.Equal(t, tc.command, got.Command, "command")
			assert.Equal(t, tc.bundle, got.Bundle, "bundle")
			assert.Equal(t, tc.log, got.Log, "log")
			assert.Equal(t, tc.format, got.LogFormat, "log format")
			assert.Equal(t, tc.command == "create" || tc.command == "run", got.IsCreate(), "IsCreate")
		})
	}
}

// A runtime log entry is one line containerd's shim reads back: JSON
// with level, msg and time, or runc's text form.
func TestRuntimeLogEntry(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	assert.Equal(t, `{"level":"error","msg":"requirement error: \"x\"","time":"2026-01-02T03:04:05Z"}`+"\n",
		string(toolkit.RuntimeLogEntry("json", `requirement error: "x"`, now)))
	assert.Equal(t, `time="2026-01-02T03:04:05Z" level=error msg="bad"`+"\n", string(toolkit.RuntimeLogEntry("", "bad", now)))
}

func TestAddHook(t *testing.T) {
	hook := specs.Hook{Path: "/usr/bin/nvidia-container-runtime-hook", Args: []string{"nvidia-container-runtime-hook", "prestart"}, Env: []string{"PATH=/bin"}}
	in := `{"ociVersion":"1.0.2","process":{"args":["sh"],"x-unknown":1},"root":{"path":"rootfs"},
		"hooks":{"prestart":[{"path":"/first","x-hook-field":"kept"}],"poststop":[{"path":"/p"}]},"x-top":{"a":[1,2]}}`
	out, changed, err := toolkit.AddHook([]byte(in), "prestart", hook)
	require.NoError(t, err)
	require.True(t, changed, "AddHook: changed")
	var doc struct {
		Process map[string]any              `json:"process"`
		Hooks   map[string][]map[string]any `json:"hooks"`
		XTop    map[string][]int            `json:"x-top"`
	}
	require.NoError(t, json.Unmarshal(out, &doc))
	pre := doc.Hooks["prestart"]
	require.Len(t, pre, 2, "prestart hooks: /first (with its unknown field) then ours")
	assert.Equal(t, "/first", pre[0]["path"])
	assert.Equal(t, "kept", pre[0]["x-hook-field"])
	assert.Equal(t, hook.Path, pre[1]["path"])
	assert.Equal(t, []any{"PATH=/bin"}, pre[1]["env"], "our hook's env, explicit")
	assert.Len(t, doc.Hooks["poststop"], 1, "other members not kept: %s", out)
	assert.Equal(t, float64(1), doc.Process["x-unknown"], "other members not kept: %s", out)
	assert.Len(t, doc.XTop["a"], 2, "other members not kept: %s", out)

	t.Run("again: unchanged", func(t *testing.T) {
		again, changed, err := toolkit.AddHook(out, "prestart", hook)
		require.NoError(t, err)
		assert.False(t, changed)
		assert.Equal(t, string(out), string(again))
	})
	for _, noHooks := range []string{`{"ociVersion":"1.0.2"}`, `{"hooks":null}`, `{"hooks":{"prestart":null}}`} {
		t.Run(noHooks, func(t *testing.T) {
			out, changed, err := toolkit.AddHook([]byte(noHooks), "createRuntime", hook)
			require.NoError(t, err)
			assert.True(t, changed)
			var spec specs.Spec
			require.NoError(t, json.Unmarshal(out, &spec), "%s", out)
			require.NotNil(t, spec.Hooks, "%s", out)
			require.Len(t, spec.Hooks.CreateRuntime, 1, "%s", out)
			assert.Equal(t, hook.Path, spec.Hooks.CreateRuntime[0].Path)
		})
	}
	for _, bad := range []string{`[]`, `{"hooks":[]}`, `{"hooks":{"prestart":{}}}`, `{"hooks":{"prestart":[{"path":1}]}}`, `not json`} {
		t.Run(bad, func(t *testing.T) {
			_, _, err := toolkit.AddHook([]byte(bad), "prestart", hook)
			assert.ErrorContains(t, err, "adding prestart hook", "the error names the step")
		})
	}
}
