package toolkit_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/nvcontainer/toolkit"
	"github.com/opencontainers/runtime-spec/specs-go"
)

func TestParseRuntimeArgs(t *testing.T) {
	tests := []struct {
		args            string
		command, bundle string
	}{
		{"", "", ""},
		{"--version", "", ""},
		{"run --bundle /b id", "run", "/b"},
		{"create -b /b id", "create", "/b"},
		{"create --bundle=/b id", "create", "/b"},
		{"create -bundle /b id", "create", "/b"},
		{"create -b=/b --pid-file /p id", "create", "/b"},
		{"create id", "create", ""},
		{"--root /run/x --log /l --log-format json create --bundle /b id", "create", "/b"},
		{"--root=/run/x --debug --systemd-cgroup run id", "run", ""},
		{"--cgroup-manager cgroupfs run -b rel id", "run", "rel"},
		{"start id", "start", ""},
		{"delete --force -b /notabundle id", "delete", ""},
		{"exec -b /b id sh", "exec", ""},
	}
	for _, tc := range tests {
		got := toolkit.ParseRuntimeArgs(strings.Fields(tc.args))
		if got.Command != tc.command || got.Bundle != tc.bundle {
			t.Errorf("ParseRuntimeArgs(%q) = %+v, want command %q bundle %q", tc.args, got, tc.command, tc.bundle)
		}
		if got.IsCreate() != (tc.command == "create" || tc.command == "run") {
			t.Errorf("ParseRuntimeArgs(%q).IsCreate() = %v", tc.args, got.IsCreate())
		}
	}
}

func TestAddHook(t *testing.T) {
	hook := specs.Hook{Path: "/usr/bin/nvidia-container-runtime-hook", Args: []string{"nvidia-container-runtime-hook", "prestart"}, Env: []string{"PATH=/bin"}}
	in := `{"ociVersion":"1.0.2","process":{"args":["sh"],"x-unknown":1},"root":{"path":"rootfs"},
		"hooks":{"prestart":[{"path":"/first","x-hook-field":"kept"}],"poststop":[{"path":"/p"}]},"x-top":{"a":[1,2]}}`
	out, changed, err := toolkit.AddHook([]byte(in), "prestart", hook)
	if err != nil || !changed {
		t.Fatalf("AddHook: changed %v, %v", changed, err)
	}
	var doc struct {
		Process map[string]any              `json:"process"`
		Hooks   map[string][]map[string]any `json:"hooks"`
		XTop    map[string][]int            `json:"x-top"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	pre := doc.Hooks["prestart"]
	if len(pre) != 2 || pre[0]["path"] != "/first" || pre[0]["x-hook-field"] != "kept" || pre[1]["path"] != hook.Path {
		t.Errorf("prestart hooks = %v, want /first (with its unknown field) then ours", pre)
	}
	if env, _ := pre[1]["env"].([]any); len(env) != 1 || env[0] != "PATH=/bin" {
		t.Errorf("our hook's env = %v, want explicit [PATH=/bin]", pre[1]["env"])
	}
	if len(doc.Hooks["poststop"]) != 1 || doc.Process["x-unknown"] != float64(1) || len(doc.XTop["a"]) != 2 {
		t.Errorf("other members not kept: %s", out)
	}
	again, changed, err := toolkit.AddHook(out, "prestart", hook)
	if err != nil || changed || string(again) != string(out) {
		t.Errorf("second AddHook: changed %v, %v; want unchanged", changed, err)
	}
	for _, noHooks := range []string{`{"ociVersion":"1.0.2"}`, `{"hooks":null}`, `{"hooks":{"prestart":null}}`} {
		out, changed, err := toolkit.AddHook([]byte(noHooks), "createRuntime", hook)
		var spec specs.Spec
		if err == nil {
			err = json.Unmarshal(out, &spec)
		}
		if err != nil || !changed || spec.Hooks == nil || len(spec.Hooks.CreateRuntime) != 1 || spec.Hooks.CreateRuntime[0].Path != hook.Path {
			t.Errorf("AddHook(%s): %s, changed %v, %v", noHooks, out, changed, err)
		}
	}
	for _, bad := range []string{`[]`, `{"hooks":[]}`, `{"hooks":{"prestart":{}}}`, `{"hooks":{"prestart":[{"path":1}]}}`, `not json`} {
		if _, _, err := toolkit.AddHook([]byte(bad), "prestart", hook); err == nil || !strings.Contains(err.Error(), "adding prestart hook") {
			t.Errorf("AddHook(%s) error = %v, want one naming the step", bad, err)
		}
	}
}
