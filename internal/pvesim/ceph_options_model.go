package pvesim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// cephOption is one Ceph configuration option as `ceph config help`
// describes it (src/common/options/*.yaml.in, Squid). Only options the
// reference lab uses and their common neighbours are known; any other name
// is "unrecognized", as an unknown name is to Ceph.
type cephOption struct {
	name     string
	typ      string // uint, int, str, float, bool, addr, addrvec, uuid, size, secs
	level    string // basic, advanced, dev
	desc     string
	def      string // default as Ceph prints it (Option::to_str)
	min, max string // "" when unbounded
	enum     []string
	services []string // daemon types that use it; empty: every kind
	runtime  bool     // can_update_at_runtime
	// flags beyond runtime: startup, no_mon_update, cluster_create
	flags []string
}

// cephOptions are the known options by name: a read-only table.
var cephOptions = indexCephOptions([]*cephOption{
	// BlueStore and OSD memory (global.yaml.in).
	{name: "osd_memory_target", typ: "size", level: "basic", def: "4294967296", min: "939524096", services: []string{"osd"}, runtime: true,
		desc: "When tcmalloc and cache autotuning is enabled, try to keep this many bytes mapped in memory."},
	{name: "osd_memory_target_autotune", typ: "bool", level: "advanced", def: "false", services: []string{"osd"}, runtime: true,
		desc: "If enabled, allow orchestrator to automatically tune osd_memory_target"},
	{name: "osd_memory_base", typ: "size", level: "dev", def: "805306368", services: []string{"osd"}, runtime: true,
		desc: "When tcmalloc and cache autotuning is enabled, estimate the minimum amount of memory in bytes the OSD will need."},
	{name: "osd_memory_cache_min", typ: "size", level: "dev", def: "134217728", services: []string{"osd"}, runtime: true,
		desc: "When tcmalloc and cache autotuning is enabled, set the minimum amount of memory used for caches."},
	// Read when the OSD opens its block device.
	{name: "bdev_enable_discard", typ: "bool", level: "advanced", def: "false", services: []string{"osd"},
		desc: "send discards to the block device"},
	{name: "bdev_async_discard_threads", typ: "uint", level: "advanced", def: "0", services: []string{"osd"},
		desc: "number of discard threads used to issue discards to the device"},
	{name: "bluestore_cache_autotune", typ: "bool", level: "dev", def: "true", services: []string{"osd"}, runtime: true,
		desc: "Automatically tune the ratio of caches while respecting min values."},
	// Recovery and backfill (osd.yaml.in).
	{name: "osd_max_backfills", typ: "uint", level: "advanced", def: "1", services: []string{"osd"}, runtime: true,
		desc: "Maximum number of concurrent local and remote backfills or recoveries per OSD"},
	{name: "osd_recovery_max_active", typ: "uint", level: "advanced", def: "0", services: []string{"osd"}, runtime: true,
		desc: "Number of simultaneous active recovery operations per OSD (overrides _ssd and _hdd if non-zero)"},
	{name: "osd_recovery_max_active_hdd", typ: "uint", level: "advanced", def: "3", services: []string{"osd"}, runtime: true,
		desc: "Number of simultaneous active recovery operations per OSD (for rotational devices)"},
	{name: "osd_recovery_max_active_ssd", typ: "uint", level: "advanced", def: "10", services: []string{"osd"}, runtime: true,
		desc: "Number of simultaneous active recovery operations per OSD (for non-rotational solid state devices)"},
	{name: "osd_recovery_sleep", typ: "float", level: "advanced", def: "0.000000", services: []string{"osd"}, runtime: true,
		desc: "Time in seconds to sleep before next recovery or backfill op. This setting overrides _ssd, _hdd, and _hybrid if non-zero."},
	{name: "osd_recovery_sleep_hdd", typ: "float", level: "advanced", def: "0.100000", services: []string{"osd"}, runtime: true,
		desc: "Time in seconds to sleep before next recovery or backfill op for HDDs"},
	{name: "osd_recovery_sleep_ssd", typ: "float", level: "advanced", def: "0.000000", services: []string{"osd"}, runtime: true,
		desc: "Time in seconds to sleep before next recovery or backfill op for SSDs"},
	{name: "osd_recovery_sleep_hybrid", typ: "float", level: "advanced", def: "0.025000", services: []string{"osd"}, runtime: true,
		desc: "Time in seconds to sleep before next recovery or backfill op when data is on HDD and journal is on SSD"},
	{name: "osd_recovery_op_priority", typ: "uint", level: "advanced", def: "3", services: []string{"osd"}, runtime: true,
		desc: "Priority to use for recovery operations if not specified for the pool"},
	{name: "osd_mclock_profile", typ: "str", level: "advanced", def: "balanced", enum: []string{"balanced", "high_recovery_ops", "high_client_ops", "custom"},
		services: []string{"osd"}, runtime: true, desc: "Which mclock profile to use"},
	{name: "osd_mclock_override_recovery_settings", typ: "bool", level: "advanced", def: "false", services: []string{"osd"}, runtime: true,
		desc: "Setting this option enables the override of recovery/backfill limits for the mClock scheduler."},
	{name: "osd_op_queue", typ: "str", level: "advanced", def: "mclock_scheduler", enum: []string{"wpq", "mclock_scheduler", "debug_random"},
		services: []string{"osd"}, flags: []string{"startup"}, desc: "which operation priority queue algorithm to use"},
	{name: "osd_scrub_begin_hour", typ: "int", level: "advanced", def: "0", min: "0", max: "23", services: []string{"osd"}, runtime: true,
		desc: "Restrict scrubbing to this hour of the day or later"},
	{name: "osd_scrub_end_hour", typ: "int", level: "advanced", def: "0", min: "0", max: "23", services: []string{"osd"}, runtime: true,
		desc: "Restrict scrubbing to hours of the day earlier than this"},
	{name: "osd_crush_update_on_start", typ: "bool", level: "advanced", def: "true", services: []string{"osd"},
		desc: "update OSD CRUSH location on startup"},
	// Read when a monitor or manager starts.
	{name: "mon_compact_on_start", typ: "bool", level: "advanced", def: "false", services: []string{"mon"}, flags: []string{"startup"},
		desc: "compact the monitor store on start"},
	{name: "mgr_standby_modules", typ: "bool", level: "advanced", def: "true", services: []string{"mgr"}, flags: []string{"startup"},
		desc: "Start modules in standby (redirect) mode when mgr is standby"},
	// Pools and monitors.
	{name: "osd_pool_default_size", typ: "uint", level: "advanced", def: "3", min: "0", max: "10", services: []string{"mon"}, runtime: true,
		desc: "the number of copies of an object for new replicated pools"},
	{name: "osd_pool_default_min_size", typ: "uint", level: "advanced", def: "0", min: "0", max: "255", services: []string{"mon"}, runtime: true,
		desc: "the minimal number of copies allowed to write to a degraded pool for new replicated pools"},
	{name: "osd_pool_default_pg_num", typ: "uint", level: "advanced", def: "32", services: []string{"mon"}, runtime: true,
		desc: "number of PGs for new pools"},
	{name: "osd_pool_default_pg_autoscale_mode", typ: "str", level: "advanced", def: "on", enum: []string{"off", "warn", "on"},
		services: []string{"mon"}, runtime: true, desc: "Default PG autoscaling behavior for new pools"},
	{name: "mon_allow_pool_size_one", typ: "bool", level: "advanced", def: "false", services: []string{"mon"}, runtime: true,
		desc: "allow configuring pool with no replicas"},
	{name: "mon_allow_pool_delete", typ: "bool", level: "advanced", def: "false", services: []string{"mon"}, runtime: true,
		desc: "allow pool deletions"},
	{name: "mon_osd_down_out_interval", typ: "int", level: "advanced", def: "600", services: []string{"mon"}, runtime: true,
		desc: "number of seconds after which down OSDs are marked out automatically"},
	{name: "mon_max_pg_per_osd", typ: "uint", level: "advanced", def: "250", min: "1", services: []string{"mgr", "mon"}, runtime: true,
		desc: "Max number of PGs per OSD the cluster will allow"},
	{name: "mon_warn_on_pool_no_redundancy", typ: "bool", level: "advanced", def: "true", services: []string{"mon"}, runtime: true,
		desc: "Issue a health warning if any pool is configured with no replicas"},
	// Networks and addresses: read when a daemon binds.
	{name: "public_network", typ: "str", level: "advanced", def: "", services: []string{"mon", "mds", "osd", "mgr"}, flags: []string{"startup"},
		desc: "Network(s) from which to choose a public address to bind to"},
	{name: "cluster_network", typ: "str", level: "advanced", def: "", services: []string{"osd"}, flags: []string{"startup"},
		desc: "Network(s) from which to choose a cluster address to bind to"},
	{name: "ms_bind_ipv4", typ: "bool", level: "advanced", def: "true", flags: []string{"startup"}, desc: "Bind servers to IPv4 address(es)"},
	{name: "ms_bind_ipv6", typ: "bool", level: "advanced", def: "false", flags: []string{"startup"}, desc: "Bind servers to IPv6 address(es)"},
	{name: "public_addr", typ: "addr", level: "basic", def: "-", services: []string{"mon", "mds", "osd", "mgr"}, flags: []string{"startup"},
		desc: "public-facing address to bind to"},
	{name: "host", typ: "str", level: "basic", def: "", flags: []string{"no_mon_update"}, desc: "local hostname"},
	{name: "mon_host", typ: "str", level: "basic", def: "", flags: []string{"no_mon_update", "startup"},
		desc: "list of hosts or addresses to search for a monitor"},
	{name: "fsid", typ: "uuid", level: "basic", def: "00000000-0000-0000-0000-000000000000", flags: []string{"no_mon_update", "startup"},
		desc: "cluster fsid (uuid)"},
	{name: "keyring", typ: "str", level: "advanced", def: "$osd_data/keyring,/etc/ceph/$cluster.$name.keyring,/etc/ceph/$cluster.keyring,/etc/ceph/keyring,/etc/ceph/keyring.bin",
		flags: []string{"no_mon_update", "startup"}, desc: "Path to a keyring file."},
	{name: "auth_cluster_required", typ: "str", level: "advanced", def: "cephx", flags: []string{"startup"},
		desc: "authentication methods required by the cluster"},
	{name: "auth_service_required", typ: "str", level: "advanced", def: "cephx", flags: []string{"startup"},
		desc: "authentication methods required by service daemons"},
	{name: "auth_client_required", typ: "str", level: "advanced", def: "cephx, none", flags: []string{"startup"},
		desc: "authentication methods allowed by clients"},
	// librbd (rbd.yaml.in): read when an image is opened (QEMU reads
	// [client] of ceph.conf when it opens a guest's disk).
	{name: "rbd_cache", typ: "bool", level: "advanced", def: "true", services: []string{"rbd"},
		desc: "whether to enable caching (writeback unless rbd_cache_max_dirty is 0)"},
	{name: "rbd_cache_writethrough_until_flush", typ: "bool", level: "advanced", def: "true", services: []string{"rbd"},
		desc: "whether to make writeback caching writethrough until flush is called, to be sure the user of librbd will send flushes so that writeback is safe"},
	{name: "rbd_cache_policy", typ: "str", level: "advanced", def: "writearound", enum: []string{"writethrough", "writeback", "writearound"},
		services: []string{"rbd"}, desc: "cache policy for handling writes."},
	{name: "rbd_cache_size", typ: "size", level: "advanced", def: "33554432", services: []string{"rbd"}, desc: "cache size in bytes"},
	{name: "rbd_cache_max_dirty", typ: "size", level: "advanced", def: "25165824", services: []string{"rbd"},
		desc: "dirty limit in bytes - set to 0 for write-through caching"},
	// Logging.
	{name: "log_file", typ: "str", level: "basic", def: "", runtime: true, desc: "path to log file"},
	{name: "debug_osd", typ: "str", level: "advanced", def: "1/5", runtime: true, desc: "Debug level for osd"},
	{name: "debug_ms", typ: "str", level: "advanced", def: "0/0", runtime: true, desc: "Debug level for ms"},
})

func indexCephOptions(opts []*cephOption) map[string]*cephOption {
	m := make(map[string]*cephOption, len(opts))
	for _, o := range opts {
		m[o.name] = o
	}
	cephOptionList = opts
	return m
}

// normalizeKeyName is ConfFile::normalize_key_name: spaces and dashes are
// underscores.
func normalizeKeyName(k string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(k)
}

// parseIEC parses Ceph's size values (strict_iec_cast): an integer with an
// optional K, M, G, T, P or E suffix (optionally followed by "i" and "B"),
// powers of 1024.
func parseIEC(v string) (int64, string) {
	s := strings.TrimSpace(v)
	if s == "" {
		return 0, "strict_iecstrtoll: value not specified"
	}
	num := strings.TrimRight(s, "KMGTPEiB")
	unit := s[len(num):]
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Sprintf("strict_iecstrtoll: expected integer, got: '%s'", num)
	}
	if n < 0 {
		return 0, "strict_iecstrtoll: value should not be negative"
	}
	shift := map[string]uint{"": 0, "B": 0, "K": 10, "M": 20, "G": 30, "T": 40, "P": 50, "E": 60}
	u := strings.TrimSuffix(strings.TrimSuffix(unit, "B"), "i")
	sh, ok := shift[u]
	if !ok || (strings.HasSuffix(strings.TrimSuffix(unit, "B"), "i") && u == "") {
		return 0, fmt.Sprintf("strict_iecstrtoll: unit prefix not recognized: '%s'", unit)
	}
	if sh > 0 && n > math.MaxInt64>>sh {
		return 0, "strict_iecstrtoll: the value is too big"
	}
	return n << sh, ""
}

// parseValue is Option::parse_value: it checks value against the option's
// type, range and enum and returns the normalized string Ceph stores, or
// the error text after "error parsing value: ".
func (o *cephOption) parseValue(v string) (string, string) {
	var norm string
	var num float64
	numeric := false
	switch o.typ {
	case "bool":
		switch {
		case strings.EqualFold(v, "false"):
			norm = "false"
		case strings.EqualFold(v, "true"):
			norm = "true"
		default:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return "", fmt.Sprintf("strict_strtol: expected integer, got: '%s'", v)
			}
			norm = strconv.FormatBool(n != 0)
		}
	case "size":
		n, msg := parseIEC(v)
		if msg != "" {
			return "", msg
		}
		norm, num, numeric = strconv.FormatInt(n, 10), float64(n), true
	case "int", "uint", "secs":
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return "", fmt.Sprintf("strict_sistrtoll: expected integer, got: '%s'", v)
		}
		if o.typ == "uint" && n < 0 {
			return "", "strict_sistrtoll: value should not be negative"
		}
		norm, num, numeric = strconv.FormatInt(n, 10), float64(n), true
	case "float":
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return "", fmt.Sprintf("strict_strtod: expected double, got: '%s'", v)
		}
		norm, num, numeric = strconv.FormatFloat(f, 'f', 6, 64), f, true
	case "uuid":
		if !uuidRE.MatchString(v) {
			return "", "malformed uuid '" + v + "'"
		}
		norm = strings.ToLower(v)
	default:
		norm = v
	}
	if numeric {
		if o.min != "" {
			if m, _ := strconv.ParseFloat(o.min, 64); num < m {
				return "", fmt.Sprintf("Value '%s' is below minimum %s", norm, o.min)
			}
		}
		if o.max != "" {
			if m, _ := strconv.ParseFloat(o.max, 64); num > m {
				return "", fmt.Sprintf("Value '%s' exceeds maximum %s", norm, o.max)
			}
		}
	}
	if len(o.enum) > 0 && !containsStr(o.enum, norm) {
		return "", fmt.Sprintf("'%s' is not one of the permitted values: %s", norm, strings.Join(o.enum, ", "))
	}
	return norm, ""
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// helpJSON is `ceph config help <opt> -f json` (Option::dump).
func (o *cephOption) helpJSON() map[string]any {
	services := o.services
	if services == nil {
		services = []string{}
	}
	flags := append([]string(nil), o.flags...)
	if o.runtime {
		flags = append([]string{"runtime"}, flags...)
	}
	if flags == nil {
		flags = []string{}
	}
	out := map[string]any{
		"name": o.name, "type": o.typ, "level": o.level, "desc": o.desc, "long_desc": "",
		"default": o.jsonValue(o.def), "daemon_default": "", "tags": []string{}, "services": services, "see_also": []string{},
		"can_update_at_runtime": o.runtime, "flags": flags,
	}
	if o.typ == "str" {
		enum := o.enum
		if enum == nil {
			enum = []string{}
		}
		out["enum_values"] = enum
	}
	if o.min != "" {
		out["min"] = o.jsonValue(o.min)
	}
	if o.max != "" {
		out["max"] = o.jsonValue(o.max)
	}
	return out
}

func (o *cephOption) jsonValue(v string) any {
	switch o.typ {
	case "bool":
		return v == "true"
	case "uint", "int", "size", "secs":
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil {
			return n
		}
	case "float":
		f, err := strconv.ParseFloat(v, 64)
		if err == nil {
			return f
		}
	}
	return v
}

// helpText is `ceph config help <opt>` (Option::print).
func (o *cephOption) helpText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s - %s\n  (%s, %s)\n", o.name, o.desc, o.typ, o.level)
	fmt.Fprintf(&b, "  Default: %s\n", o.def)
	if len(o.enum) > 0 {
		fmt.Fprintf(&b, "  Possible values:  %s\n", strings.Join(o.enum, " "))
	}
	if o.min != "" {
		fmt.Fprintf(&b, "  Minimum: %s\n", o.min)
	}
	if o.max != "" {
		fmt.Fprintf(&b, "  Maximum: %s\n", o.max)
	}
	fmt.Fprintf(&b, "  Can update at runtime: %v\n", o.runtime)
	if len(o.services) > 0 {
		fmt.Fprintf(&b, "  Services: [%s]\n", strings.Join(o.services, ","))
	}
	return b.String()
}
