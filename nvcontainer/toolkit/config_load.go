package toolkit

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/go-nvc/nvc/internal/oci"
)

// Where the runtime hook looks for its config.
const (
	// ConfigFileEnv names a config file that must exist.
	ConfigFileEnv = "NVIDIA_CTK_CONFIG_FILE_PATH"
	// DefaultConfigPath is the system config file.
	DefaultConfigPath = "/etc/nvidia-container-runtime/config.toml"
	// maxConfigSize bounds a config file.
	maxConfigSize = 1 << 20
)

// ConfigPath returns the config file the runtime hook reads and whether it
// must exist, in the hook's order: flag (its -config value), then
// NVIDIA_CTK_CONFIG_FILE_PATH in env (both required), then
// $XDG_CONFIG_HOME/nvidia-container-runtime/config.toml, else
// [DefaultConfigPath] (optional: a missing file means the defaults). env is
// a "KEY=value" list; ConfigPath never reads the process environment.
func ConfigPath(flag string, env []string) (file string, required bool) {
	if flag != "" {
		return flag, true
	}
	vars := lookupEnv(env)
	if p := vars[ConfigFileEnv]; p != "" {
		return p, true
	}
	if xdg := vars["XDG_CONFIG_HOME"]; xdg != "" {
		return path.Join(xdg, "nvidia-container-runtime/config.toml"), false
	}
	return DefaultConfigPath, false
}

// lookupEnv is parseEnv without errors: entries without "=" are skipped.
func lookupEnv(env []string) map[string]string {
	vars := make(map[string]string)
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	return vars
}

// LoadConfig reads and parses the config file at file (at most 1 MiB).
func LoadConfig(file string) (*Config, error) {
	return loadConfigFile(file, ParseConfig)
}

// loadConfigFile reads file (at most maxConfigSize bytes) and parses it;
// errors name the file.
func loadConfigFile[T any](file string, parse func([]byte) (*T, error)) (*T, error) {
	data, err := oci.ReadFile(file, maxConfigSize)
	if err != nil {
		return nil, fmt.Errorf("loading config: %w", err)
	}
	v, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("loading config %s: %w", file, err)
	}
	return v, nil
}

// FindConfig loads the config the runtime hook would use (see
// [ConfigPath]) and returns it with the path it came from. A missing
// optional file gives [DefaultConfig] and an empty path; a missing required
// one is an error matching fs.ErrNotExist.
func FindConfig(flag string, env []string) (*Config, string, error) {
	file, required := ConfigPath(flag, env)
	cfg, err := LoadConfig(file)
	switch {
	case err == nil:
		return cfg, file, nil
	case errors.Is(err, fs.ErrNotExist) && !required:
		return DefaultConfig(), "", nil
	}
	return nil, "", err
}
