package toolkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// DefaultDockerConfig is Docker's daemon configuration file.
const DefaultDockerConfig = "/etc/docker/daemon.json"

// DefaultRuntimePath is the runtime Docker is told to run for the nvidia
// runtime: the runc wrapper, looked up in dockerd's PATH.
const DefaultRuntimePath = "nvidia-container-runtime"

// DockerRuntime is what `nvidia-ctk runtime configure --runtime=docker`
// registers in Docker's daemon.json.
type DockerRuntime struct {
	// Name is the runtime's name (docker run --runtime=NAME); empty means
	// [DockerRuntimeName].
	Name string
	// Path is the runtime program; empty means [DefaultRuntimePath].
	Path string
	// SetAsDefault makes it Docker's default-runtime.
	SetAsDefault bool
	// CDIEnabled turns on Docker's CDI feature (features.cdi).
	CDIEnabled bool
}

// ErrDockerConfig is returned for a daemon.json that is not a JSON object
// (or whose runtimes or features member is not one).
var ErrDockerConfig = errors.New("invalid docker daemon config")

// ConfigureDocker returns daemon.json (data; empty or only white space
// means {}) with the runtime registered as runtimes.NAME = {"path": PATH,
// "args": []}, as dockerd 20.10 and later read it. Every other member the
// file had is kept with its value as written, including the members of an
// existing runtimes.NAME other than path; default-runtime is set only with
// SetAsDefault, features.cdi only with CDIEnabled. The output is indented
// with four spaces, members sorted, and ends in a newline.
func ConfigureDocker(data []byte, rt DockerRuntime) ([]byte, error) {
	if rt.Name == "" {
		rt.Name = DockerRuntimeName
	}
	if rt.Path == "" {
		rt.Path = DefaultRuntimePath
	}
	top, err := objectMembers(data, "daemon.json")
	if err != nil {
		return nil, err
	}
	runtimes, err := objectMembers(top["runtimes"], "runtimes")
	if err != nil {
		return nil, err
	}
	entry, err := objectMembers(runtimes[rt.Name], "runtimes."+rt.Name)
	if err != nil {
		return nil, err
	}
	entry["path"] = mustJSON(rt.Path)
	if _, ok := entry["args"]; !ok {
		entry["args"] = json.RawMessage("[]")
	}
	runtimes[rt.Name] = mustJSON(entry)
	top["runtimes"] = mustJSON(runtimes)
	if rt.SetAsDefault {
		top["default-runtime"] = mustJSON(rt.Name)
	}
	if rt.CDIEnabled {
		features, err := objectMembers(top["features"], "features")
		if err != nil {
			return nil, err
		}
		features["cdi"] = json.RawMessage("true")
		top["features"] = mustJSON(features)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, mustJSON(top), "", "    "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// objectMembers decodes a JSON object keeping each member's value as
// written; nil, empty or white space is an empty object, null too.
func objectMembers(raw []byte, what string) (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: %s is not a JSON object: %w", ErrDockerConfig, what, err)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	return m, nil
}

// mustJSON marshals values that cannot fail (strings, maps of raw JSON
// already validated).
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
