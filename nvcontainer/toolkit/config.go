package toolkit

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// Config is the NVIDIA Container Toolkit's config.toml
// (/etc/nvidia-container-runtime/config.toml), the file that tells the
// runtime hook how to read requests and how to call nvidia-container-cli.
// Keys are the toolkit's (api/config/v1).
//
// The zero value of every field is its default, so &Config{}, a nil
// *Config and [DefaultConfig] configure a container alike. The toolkit's
// two keys that default to true are negated fields here
// (IgnoreEnvvarUnprivileged, CLI.NoLoadKmods) that [ParseConfig] sets from
// the file's keys.
type Config struct {
	// IgnoreEnvvarUnprivileged stops unprivileged containers from
	// requesting devices and IMEX channels through the environment: the
	// toolkit's accept-nvidia-visible-devices-envvar-when-unprivileged =
	// false. False (the default): they may.
	IgnoreEnvvarUnprivileged bool `toml:"-"`
	// AcceptDeviceListAsVolumeMounts reads requests from /dev/null mounts
	// under /var/run/nvidia-container-devices first. Default false.
	AcceptDeviceListAsVolumeMounts bool `toml:"accept-nvidia-visible-devices-as-volume-mounts"`
	// DisableRequire turns requirement checks off for every container.
	DisableRequire bool `toml:"disable-require"`
	// SupportedDriverCapabilities limits NVIDIA_DRIVER_CAPABILITIES: a
	// list of classes, "all" for every class, or "none" for no class
	// (what ParseConfig stores for the file's explicit empty value, which
	// the toolkit reads as no class). Empty: every class.
	SupportedDriverCapabilities string `toml:"supported-driver-capabilities"`
	// SwarmResource lists variables (comma-separated, e.g.
	// "DOCKER_RESOURCE_GPU") read instead of NVIDIA_VISIBLE_DEVICES when the
	// container sets any of them. Default none.
	SwarmResource string `toml:"swarm-resource"`

	CLI      CLIConfig     `toml:"nvidia-container-cli"`          // [nvidia-container-cli]
	Runtime  RuntimeConfig `toml:"nvidia-container-runtime"`      // [nvidia-container-runtime]
	Hook     HookConfig    `toml:"nvidia-container-runtime-hook"` // [nvidia-container-runtime-hook]
	CTK      CTKConfig     `toml:"nvidia-ctk"`                    // [nvidia-ctk]
	Features Features      `toml:"features"`                      // [features]

	// Unknown lists the keys of the file this package does not know, as
	// dotted paths ("nvidia-container-cli.colour"), sorted. They are
	// ignored; a tool may report them.
	Unknown []string `toml:"-"`
}

// CLIConfig is [nvidia-container-cli]: the global options the hook passes.
type CLIConfig struct {
	Root        string   `toml:"root"`        // --root: driver root; "" is /
	Path        string   `toml:"path"`        // the binary; "" looks it up in PATH
	Environment []string `toml:"environment"` // extra KEY=value for its environment
	Debug       string   `toml:"debug"`       // --debug log file; "" none
	Ldcache     string   `toml:"ldcache"`     // --ldcache; "" is /etc/ld.so.cache
	NoLoadKmods bool     `toml:"-"`           // load-kmods = false: no --load-kmods; false (the default) passes it
	NoPivot     bool     `toml:"no-pivot"`    // --no-pivot
	NoCgroups   bool     `toml:"no-cgroups"`  // configure --no-cgroups
	User        string   `toml:"user"`        // --user; "" none ("root:video" on SUSE)
	// Ldconfig is configure --ldconfig: "@/sbin/ldconfig" (a host path,
	// the toolkit's default) or, with
	// features.allow-ldconfig-from-container, a path in the container. See
	// [NormalizeLDConfigPath]. Empty: no --ldconfig, so nvidia-container-cli
	// uses its own default, the same host ldconfig.
	Ldconfig string `toml:"ldconfig"`
}

// RuntimeConfig is [nvidia-container-runtime].
type RuntimeConfig struct {
	Debug    string       `toml:"debug"`     // log file; default /dev/null; empty: none
	LogLevel string       `toml:"log-level"` // default and empty: "info"
	Mode     string       `toml:"mode"`      // auto, legacy, cdi, csv, jit-cdi; default and empty: auto
	Runtimes []string     `toml:"runtimes"`  // low-level runtime candidates; default and nil: runc, crun
	Modes    RuntimeModes `toml:"modes"`     // the per-mode tables
}

// RuntimeModes are the per-mode tables of [nvidia-container-runtime.modes].
type RuntimeModes struct {
	CDI    CDIModeConfig    `toml:"cdi"`     // [nvidia-container-runtime.modes.cdi]
	CSV    CSVModeConfig    `toml:"csv"`     // [nvidia-container-runtime.modes.csv]
	JitCDI JitCDIModeConfig `toml:"jit-cdi"` // [nvidia-container-runtime.modes.jit-cdi]
	Legacy LegacyModeConfig `toml:"legacy"`  // [nvidia-container-runtime.modes.legacy]
}

// CDIModeConfig is [nvidia-container-runtime.modes.cdi].
type CDIModeConfig struct {
	AnnotationPrefixes []string `toml:"annotation-prefixes"` // default cdi.k8s.io/
	DefaultKind        string   `toml:"default-kind"`        // default nvidia.com/gpu
	SpecDirs           []string `toml:"spec-dirs"`           // default /etc/cdi, /var/run/cdi
}

// CSVModeConfig is [nvidia-container-runtime.modes.csv] (Tegra).
type CSVModeConfig struct {
	MountSpecPath       string `toml:"mount-spec-path"`       // dir of the CSV mount specs; default /etc/nvidia-container-runtime/host-files-for-container.d
	CompatContainerRoot string `toml:"compat-container-root"` // the CUDA compat libs' dir in the container; default ""
}

// JitCDIModeConfig is [nvidia-container-runtime.modes.jit-cdi].
type JitCDIModeConfig struct {
	NVCDIFeatureFlags []string `toml:"nvcdi-feature-flags"` // nvcdi feature flags for specs made at create time; default none
	NVCDIDisableHooks []string `toml:"nvcdi-disable-hooks"` // hooks left out of those specs; default none
}

// LegacyModeConfig is [nvidia-container-runtime.modes.legacy].
type LegacyModeConfig struct {
	// CUDACompatMode is ldconfig (the default; empty means it too), mount,
	// hook or disabled; see request.Request.CUDACompatMode for how it maps. Any
	// other value (ParseConfig stores the file's explicit empty value as
	// "none") is the toolkit's fallback: disabled unless
	// features.allow-cuda-compat-libs-from-container.
	CUDACompatMode string `toml:"cuda-compat-mode"`
}

// HookConfig is [nvidia-container-runtime-hook].
type HookConfig struct {
	Path              string `toml:"path"`                // default and empty: nvidia-container-runtime-hook
	SkipModeDetection bool   `toml:"skip-mode-detection"` // skip the check that the runtime mode is legacy; default false
}

// CTKConfig is [nvidia-ctk].
type CTKConfig struct {
	Path string `toml:"path"` // default and empty: nvidia-ctk
}

// Features is [features]; every flag defaults to false, and each is named
// by its key.
type Features struct {
	AllowCUDACompatLibsFromContainer bool `toml:"allow-cuda-compat-libs-from-container"` // use the image's CUDA compat libs
	AllowLDConfigFromContainer       bool `toml:"allow-ldconfig-from-container"`         // --ldconfig may name a container path
	AllowUnknownOCISpecFields        bool `toml:"allow-unknown-oci-spec-fields"`         // the runtime keeps unknown spec fields
	DisableCUDACompatLibHook         bool `toml:"disable-cuda-compat-lib-hook"`          // no enable-cuda-compat CDI hook
	DisableIMEXChannelCreation       bool `toml:"disable-imex-channel-creation"`         // --no-create-imex-channels
	IgnoreIMEXChannelRequests        bool `toml:"ignore-imex-channel-requests"`          // NVIDIA_IMEX_CHANNELS is ignored
	NoAdditionalGIDsForDeviceNodes   bool `toml:"no-additional-gids-for-device-nodes"`   // no extra GIDs for device node groups
}

// DefaultConfig returns the values `nvidia-ctk config default` writes,
// except that Ldconfig is "@/sbin/ldconfig" unnormalized (see
// [NormalizeLDConfigPath]) and User is "" (the toolkit uses "root:video"
// on SUSE). It spells out what the zero Config means.
func DefaultConfig() *Config {
	return &Config{
		SupportedDriverCapabilities: capabilities.All.String(),
		CLI:                         CLIConfig{Environment: []string{}, Ldconfig: "@/sbin/ldconfig"},
		Runtime: RuntimeConfig{
			Debug: "/dev/null", LogLevel: "info", Mode: "auto", Runtimes: []string{"runc", "crun"},
			Modes: RuntimeModes{
				CDI: CDIModeConfig{
					AnnotationPrefixes: []string{"cdi.k8s.io/"}, DefaultKind: "nvidia.com/gpu",
					SpecDirs: []string{"/etc/cdi", "/var/run/cdi"},
				},
				CSV:    CSVModeConfig{MountSpecPath: "/etc/nvidia-container-runtime/host-files-for-container.d"},
				Legacy: LegacyModeConfig{CUDACompatMode: "ldconfig"},
			},
		},
		Hook: HookConfig{Path: "nvidia-container-runtime-hook"},
		CTK:  CTKConfig{Path: "nvidia-ctk"},
	}
}

// ErrInvalidConfig is matched (with errors.Is) by errors about a config
// value.
var ErrInvalidConfig = errors.New("invalid config")

// ParseConfig reads a config.toml over [DefaultConfig]: keys the file sets
// replace the defaults, others keep them. Unknown keys are listed in
// Config.Unknown, not refused. A TOML error or a value of the wrong type is
// an error with its line; so are an unknown supported-driver-capabilities
// class and a container-side ldconfig without
// features.allow-ldconfig-from-container.
func ParseConfig(data []byte) (*Config, error) {
	cfg := DefaultConfig()
	md, err := toml.Decode(string(data), cfg)
	if err != nil {
		return nil, fmt.Errorf("parsing config: %w", err)
	}
	if err := cfg.decodeNegated(data, md); err != nil {
		return nil, fmt.Errorf("parsing config: %w", err)
	}
	for _, k := range md.Undecoded() {
		if !slices.Contains(negatedKeys, k.String()) {
			cfg.Unknown = append(cfg.Unknown, k.String())
		}
	}
	slices.Sort(cfg.Unknown)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("parsing config: %w", err)
	}
	return cfg, nil
}

// Validate checks the values the runtime hook refuses.
func (c *Config) Validate() error {
	if err := c.RequestOptions().Validate(); err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalidConfig)
	}
	if l := c.CLI.Ldconfig; l != "" && !strings.HasPrefix(l, "@") && !c.Features.AllowLDConfigFromContainer {
		return fmt.Errorf("nvidia-container-cli.ldconfig %q: a path in the container needs features.allow-ldconfig-from-container: %w",
			l, ErrInvalidConfig)
	}
	return nil
}

// negatedKeys are the toolkit keys that default to true, held by negated
// fields.
var negatedKeys = []string{"accept-nvidia-visible-devices-envvar-when-unprivileged", "nvidia-container-cli.load-kmods"}

// decodeNegated sets the negated fields from the file's keys, and stores
// an explicit empty value of a key whose empty Go value means a default as
// "none" (see the fields' docs).
func (c *Config) decodeNegated(data []byte, md toml.MetaData) error {
	var doc struct {
		Accept *bool `toml:"accept-nvidia-visible-devices-envvar-when-unprivileged"`
		CLI    struct {
			LoadKmods *bool `toml:"load-kmods"`
		} `toml:"nvidia-container-cli"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return err
	}
	if doc.Accept != nil {
		c.IgnoreEnvvarUnprivileged = !*doc.Accept
	}
	if doc.CLI.LoadKmods != nil {
		c.CLI.NoLoadKmods = !*doc.CLI.LoadKmods
	}
	if md.IsDefined("supported-driver-capabilities") && strings.Trim(c.SupportedDriverCapabilities, " ,") == "" {
		c.SupportedDriverCapabilities = "none"
	}
	if md.IsDefined("nvidia-container-runtime", "modes", "legacy", "cuda-compat-mode") && c.Runtime.Modes.Legacy.CUDACompatMode == "" {
		c.Runtime.Modes.Legacy.CUDACompatMode = "none"
	}
	return nil
}

// RequestOptions returns the settings of c that [request.New] reads.
func (c *Config) RequestOptions() *request.Options {
	return &request.Options{
		AcceptDeviceListAsVolumeMounts:   c.AcceptDeviceListAsVolumeMounts,
		IgnoreEnvvarUnprivileged:         c.IgnoreEnvvarUnprivileged,
		SwarmResource:                    c.SwarmResource,
		SupportedDriverCapabilities:      c.SupportedDriverCapabilities,
		DisableRequire:                   c.DisableRequire,
		IgnoreIMEXChannelRequests:        c.Features.IgnoreIMEXChannelRequests,
		CUDACompatMode:                   c.Runtime.Modes.Legacy.CUDACompatMode,
		AllowCUDACompatLibsFromContainer: c.Features.AllowCUDACompatLibsFromContainer,
	}
}
