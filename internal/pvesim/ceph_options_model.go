package pvesim

import (
	"errors"
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
	// runtime is Ceph's FLAG_RUNTIME: running daemons observe a change.
	// Without it a change takes effect at the next start, although Ceph
	// may still call the option updatable (canUpdateAtRuntime).
	runtime bool
	// flags beyond runtime: startup, no_mon_update, cluster_create, create, mgr

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

// The parsers below are Ceph's common/strtol.cc, texts included: Option::
// parse_value reads bools with strict_strtob, int and uint with
// strict_si_cast (powers of 1000), sizes with strict_iec_cast (powers of
// 1024) and floats with strict_strtod. Real Ceph 16 agreed on every text
// but one (make testlab): for a size with an unknown unit it omits the
// unit ("unit prefix not recognized"); the newer text, with the unit, is
// kept here.

// strictStrtoll is strict_strtoll in base 10.
func strictStrtoll(v string) (int64, string) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, "The option value '" + v + "' seems to be invalid"
		}
		return 0, "Expected option value to be integer, got '" + v + "'"
	}
	return n, ""
}

// parseIEC is strict_iec_cast<uint64_t>: an integer with an optional K, M,
// G, T, P or E (or Ki, Mi, ...; a trailing B is dropped) suffix.
func parseIEC(v string) (int64, string) {
	if v == "" {
		return 0, "strict_iecstrtoll: value not specified"
	}
	num, m := v, uint(0)
	if u := strings.IndexFunc(v, func(r rune) bool { return !strings.ContainsRune("0123456789-+", r) }); u >= 0 {
		num = v[:u]
		unit := v[u:]
		if len(unit) > 1 && strings.HasSuffix(unit, "B") {
			unit = unit[:len(unit)-1]
		}
		if len(unit) > 2 {
			return 0, "strict_iecstrtoll: illegal prefix (length > 2)"
		}
		if !strings.HasSuffix(unit, "i") && len(unit) != 1 {
			return 0, "strict_iecstrtoll: illegal prefix '" + unit + "' "
		}
		if strings.HasSuffix(unit, "i") && unit[0] == 'B' {
			return 0, `strict_iecstrtoll: illegal prefix "Bi"`
		}
		shift := map[byte]uint{'K': 10, 'M': 20, 'G': 30, 'T': 40, 'P': 50, 'E': 60, 'B': 0}
		sh, ok := shift[unit[0]]
		if !ok {
			return 0, "strict_iecstrtoll: unit prefix not recognized '" + unit + "' "
		}
		m = sh
	}
	n, msg := strictStrtoll(num)
	switch {
	case msg != "":
		return 0, msg
	case n < 0:
		return 0, "strict_iecstrtoll: value should not be negative"
	case m > 0 && n > math.MaxInt64>>m:
		// Ceph's limit is uint64's (15E); values are int64 here, and
		// nobody sizes anything in exabytes.
		return 0, "strict_iecstrtoll: value seems to be too large"
	}
	return n << m, ""
}

// parseSI is strict_si_cast: an integer with an optional K, M, G, T, P or
// E suffix, powers of 1000. Any other non-digit makes the last character
// the unit; "B" is no unit, so "10B" fails as an integer.
func parseSI(v string, signed bool) (int64, string) {
	if v == "" {
		return 0, "strict_sistrtoll: value not specified"
	}
	num, m := v, 0
	if strings.IndexFunc(v, func(r rune) bool { return !strings.ContainsRune("0123456789+-", r) }) >= 0 {
		exp := map[byte]int{'K': 3, 'M': 6, 'G': 9, 'T': 12, 'P': 15, 'E': 18, 'B': 0}
		e, ok := exp[v[len(v)-1]]
		if !ok {
			return 0, "strict_si_cast: unit prefix not recognized"
		}
		if m = e; m >= 3 {
			num = v[:len(v)-1]
		}
	}
	n, msg := strictStrtoll(num)
	if msg != "" {
		return 0, msg
	}
	if n < 0 && !signed {
		return 0, "strict_sistrtoll: value should not be negative"
	}
	coef := int64(math.Pow10(m))
	if n > math.MaxInt64/coef || n < math.MinInt64/coef {
		return 0, "strict_sistrtoll: value out of range"
	}
	return n * coef, ""
}

// parseStrtod is strict_strtod: strtod must take the whole string.
func parseStrtod(v string) (float64, string) {
	f, err := strconv.ParseFloat(v, 64)
	if err == nil {
		return f, ""
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, "strict_strtod: floating point overflow or underflow parsing '" + v + "'"
	}
	for i := len(v) - 1; i > 0; i-- {
		if _, err := strconv.ParseFloat(v[:i], 64); err == nil {
			return 0, "strict_strtod: garbage at end of string. got: '" + v + "'"
		}
	}
	return 0, "strict_strtod: expected double, got: '" + v + "'"
}

// parseValue is Option::parse_value: it checks value against the option's
// type, range and enum and returns the normalized string Ceph stores, or
// the error text after "error parsing value: ".
func (o *cephOption) parseValue(v string) (string, string) {
	var norm string
	var num float64
	numeric := false
	switch o.typ {
	case "bool": // strict_strtob
		switch {
		case strings.EqualFold(v, "false"):
			norm = "false"
		case strings.EqualFold(v, "true"):
			norm = "true"
		default:
			n, msg := strictStrtoll(v)
			if msg == "" && (n < math.MinInt32 || n > math.MaxInt32) {
				msg = "The option value '" + v + "' seems to be invalid"
			}
			if msg != "" {
				return "", msg
			}
			norm = strconv.FormatBool(n != 0)
		}
	case "size":
		n, msg := parseIEC(v)
		if msg != "" {
			return "", msg
		}
		norm, num, numeric = strconv.FormatInt(n, 10), float64(n), true
	case "int", "uint":
		n, msg := parseSI(v, o.typ == "int")
		if msg != "" {
			return "", msg
		}
		norm, num, numeric = strconv.FormatInt(n, 10), float64(n), true
	case "secs":
		n, msg := strictStrtoll(strings.TrimSpace(v))
		if msg != "" {
			return "", msg
		}
		norm, num, numeric = strconv.FormatInt(n, 10), float64(n), true
	case "float":
		f, msg := parseStrtod(v)
		if msg != "" {
			return "", msg
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
		"can_update_at_runtime": o.canUpdateAtRuntime(), "flags": flags,
	}
	if o.typ == "str" {
		enum := o.enum
		if enum == nil {
			enum = []string{}
		}
		out["enum_values"] = enum
	}
	// Option::dump_value: an unset bound is "" (the Formatter has no null).
	out["min"], out["max"] = "", ""
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
	case "uint", "int": // size and secs are streamed: strings
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

// canUpdateAtRuntime is Option::can_update_at_runtime, what `config dump`
// and `config help` print as can_update_at_runtime (and the dump's RO
// column): every number and bool qualifies unless it is a startup or
// creation option, whether or not a daemon observes the change. Real Ceph
// says true for bdev_enable_discard, which takes effect only when the OSD
// restarts (make testlab, TestRealCephCLIConformance); whether a restart
// is needed is FLAG_RUNTIME, the "runtime" entry of flags.
func (o *cephOption) canUpdateAtRuntime() bool {
	numeric := false
	switch o.typ {
	case "bool", "int", "uint", "float", "size", "secs":
		numeric = true
	}
	return (o.runtime || (numeric && !containsStr(o.flags, "mgr"))) &&
		!containsStr(o.flags, "startup") && !containsStr(o.flags, "cluster_create") && !containsStr(o.flags, "create")
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
	fmt.Fprintf(&b, "  Can update at runtime: %v\n", o.canUpdateAtRuntime())
	if len(o.services) > 0 {
		fmt.Fprintf(&b, "  Services: [%s]\n", strings.Join(o.services, ","))
	}
	return b.String()
}
