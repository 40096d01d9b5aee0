package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestContainerRoot(t *testing.T) {
	bundle := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(bundle, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(bundle, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("config.json", `{"ociVersion":"1.0.2","root":{"path":"rootfs"}}`)
	write("old/config.json", `{"root":{"path":"/abs/rootfs"}}`)
	noRoot := t.TempDir()
	if err := os.WriteFile(filepath.Join(noRoot, "config.json"), []byte(`{"root":{"path":""}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	slash := t.TempDir()
	if err := os.WriteFile(filepath.Join(slash, "config.json"), []byte(`{"root":{"path":"/.."}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, state, want, err string
	}{
		{"crun root wins", `{"bundle":"` + bundle + `","root":"/run/crun/rootfs"}`, "/run/crun/rootfs", ""},
		{"relative root.path", `{"bundle":"` + bundle + `"}`, filepath.Join(bundle, "rootfs"), ""},
		{"bundlePath", `{"bundlePath":"` + bundle + `/old"}`, "/abs/rootfs", ""},
		{"no bundle", `{"pid":1}`, "", `no "root" and no "bundle"`},
		{"no config.json", `{"bundle":"/nonexistent"}`, "", "loading OCI spec"},
		{"empty root.path", `{"bundle":"` + noRoot + `"}`, "", "no root.path"},
		{"root is /", `{"bundle":"/x","root":"/"}`, "", `refusing root "/"`},
		{"root.path escapes to /", `{"bundle":"` + slash + `"}`, "", `refusing root "/"`},
		{"not JSON", `pid=1`, "", "reading OCI state"},
		{"too large", `{"bundle":"` + strings.Repeat("x", maxStateSize) + `"}`, "", "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := containerRoot(strings.NewReader(tt.state))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %q, %v; want error %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestStateFromFile(t *testing.T) {
	root := libRoot(t)
	file := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(file, []byte(`{"bundle":"/x","root":"`+root+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// stdin is not a state: only the file can give the root.
	code, stderr := runHookStdin(t, "garbage", "update-ldcache", "--folder", "/opt/nv", "--container-spec", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(findInCache(t, root, "libnvtest.so.1")) != 1 {
		t.Fatal("cache not written through --container-spec")
	}
}
