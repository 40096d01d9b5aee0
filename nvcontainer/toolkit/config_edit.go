package toolkit

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// configKeyKind is the kind of a config.toml key: reflect.Bool,
// reflect.String or reflect.Slice (a list of strings).
func configKeyKind(key string) (reflect.Kind, bool) {
	for _, k := range negatedKeys {
		if key == k {
			return reflect.Bool, true
		}
	}
	t := reflect.TypeOf(Config{})
	parts := strings.Split(key, ".")
	for i, p := range parts {
		f, ok := fieldByTag(t, p)
		if !ok {
			return 0, false
		}
		if f.Type.Kind() == reflect.Struct {
			if i == len(parts)-1 {
				return 0, false // a table, not a key
			}
			t = f.Type
			continue
		}
		return f.Type.Kind(), i == len(parts)-1
	}
	return 0, false
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("toml"), ","); tag == name && tag != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// SetConfig returns config.toml (data; empty means a new file) with each
// of sets applied, as nvidia-ctk config --set takes them: "KEY=VALUE" with
// KEY a dotted path (features.allow-ldconfig-from-container); a bool key
// alone is true; a list key takes VALUE split on sep (empty: ","). The
// value is typed as the key is; an unknown key, a table or a value that
// is not of the key's type is an error, as is a result ParseConfig
// refuses. Every other key of the file is kept (comments are not); keys
// are written sorted.
func SetConfig(data []byte, sets []string, sep string) ([]byte, error) {
	if sep == "" {
		sep = ","
	}
	top, err := decodeTOML(data, ErrInvalidConfig)
	if err != nil {
		return nil, fmt.Errorf("parsing config: %w", err)
	}
	for _, s := range sets {
		key, value, hasValue := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		kind, ok := configKeyKind(key)
		if !ok {
			return nil, fmt.Errorf("--set %q: unknown config key %q: %w", s, key, ErrInvalidConfig)
		}
		v, err := configValue(kind, value, hasValue, sep)
		if err != nil {
			return nil, fmt.Errorf("--set %q: %w: %w", s, err, ErrInvalidConfig)
		}
		path := strings.Split(key, ".")
		t, err := subTable(top, ErrInvalidConfig, path[:len(path)-1]...)
		if err != nil {
			return nil, fmt.Errorf("--set %q: %w", s, err)
		}
		t[path[len(path)-1]] = v
	}
	out, err := encodeTOML(top)
	if err != nil {
		return nil, err
	}
	if _, err := ParseConfig(out); err != nil {
		return nil, err
	}
	return out, nil
}

func configValue(kind reflect.Kind, value string, hasValue bool, sep string) (any, error) {
	switch kind {
	case reflect.Bool:
		if !hasValue {
			return true, nil
		}
		b, err := strconv.ParseBool(value)
		if err != nil {
			return nil, fmt.Errorf("%q is not a bool", value)
		}
		return b, nil
	case reflect.Slice:
		if !hasValue {
			return nil, fmt.Errorf("a list needs a value")
		}
		list := []string{}
		if value != "" {
			list = strings.Split(value, sep)
		}
		return list, nil
	}
	if !hasValue {
		return nil, fmt.Errorf("a string needs a value")
	}
	return value, nil
}

// DefaultConfigTOML returns the config.toml nvidia-ctk config default
// writes: every key of [DefaultConfig], with the two keys that default to
// true spelled out.
func DefaultConfigTOML() ([]byte, error) {
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(DefaultConfig()); err != nil {
		return nil, err
	}
	return SetConfig([]byte(b.String()), []string{negatedKeys[0] + "=true", negatedKeys[1] + "=true"}, "")
}
