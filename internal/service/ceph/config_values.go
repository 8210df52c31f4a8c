package ceph

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Values of Ceph options: what Ceph stores for what the configuration
// says (it normalizes: "8G" becomes 8589934592, "1" true for a bool), and
// the checks the provider can make at plan time for options it knows.

var (
	// configWhoRE: global, a daemon type, or a type with an id. Masks
	// (osd/class:ssd) are not supported.
	configWhoRE = regexp.MustCompile(`^(global|mon|mgr|osd|mds|client)(\.[A-Za-z0-9_][A-Za-z0-9_.-]*)?$`)
	// configKeyRE: Ceph's option names (lower case with underscores) and
	// manager module options (mgr/<module>/<option>).
	configKeyRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$`)
)

// parseIECSize parses Ceph's size syntax: an integer with an optional K,
// M, G, T, P or E suffix (optionally "i", "B"), in powers of 1024.
func parseIECSize(v string) (int64, bool) {
	num := strings.TrimRight(v, "KMGTPEiB")
	unit := strings.TrimSuffix(strings.TrimSuffix(v[len(num):], "B"), "i")
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	shift, ok := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40, "P": 50, "E": 60}[unit]
	if !ok || (shift > 0 && n > math.MaxInt64>>shift) {
		return 0, false
	}
	return n << shift, true
}

// parseCephBool parses a bool as Ceph does: true/false in any case, or an
// integer (non-zero is true).
func parseCephBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n != 0, err == nil
}

// sameCephValue reports whether Ceph storing stored for a configured
// value want means the same setting: equal strings, or equal once read as
// a bool, a size or a number. Ceph stores the normalized form of typed
// options and string options verbatim, so this never hides a real change.
func sameCephValue(want, stored string) bool {
	if want == stored {
		return true
	}
	if s, ok := parseCephBool(stored); ok && (stored == "true" || stored == "false") {
		if w, ok := parseCephBool(want); ok {
			return w == s
		}
	}
	if s, err := strconv.ParseInt(stored, 10, 64); err == nil {
		if w, ok := parseIECSize(want); ok {
			return w == s
		}
	}
	if s, err := strconv.ParseFloat(stored, 64); err == nil {
		if w, err := strconv.ParseFloat(want, 64); err == nil {
			return w == s
		}
	}
	return false
}

// knownOption is what the provider checks at plan time for an option it
// knows; Ceph checks everything again when the value is set.
type knownOption struct {
	typ string // bool, size, uint, float
	min int64  // for size
}

var knownOptions = map[string]knownOption{
	"osd_memory_target":                     {typ: "size", min: 939524096},
	"osd_memory_base":                       {typ: "size"},
	"osd_memory_cache_min":                  {typ: "size"},
	"bdev_enable_discard":                   {typ: "bool"},
	"osd_memory_target_autotune":            {typ: "bool"},
	"rbd_cache":                             {typ: "bool"},
	"rbd_cache_writethrough_until_flush":    {typ: "bool"},
	"rbd_cache_size":                        {typ: "size"},
	"rbd_cache_max_dirty":                   {typ: "size"},
	"mon_allow_pool_size_one":               {typ: "bool"},
	"mon_allow_pool_delete":                 {typ: "bool"},
	"mon_warn_on_pool_no_redundancy":        {typ: "bool"},
	"osd_mclock_override_recovery_settings": {typ: "bool"},
	"osd_max_backfills":                     {typ: "uint"},
	"osd_recovery_max_active":               {typ: "uint"},
	"osd_recovery_max_active_hdd":           {typ: "uint"},
	"osd_recovery_max_active_ssd":           {typ: "uint"},
	"osd_recovery_op_priority":              {typ: "uint"},
	"osd_recovery_sleep":                    {typ: "float"},
	"osd_recovery_sleep_hdd":                {typ: "float"},
	"osd_recovery_sleep_ssd":                {typ: "float"},
	"osd_recovery_sleep_hybrid":             {typ: "float"},
}

// checkKnownValue returns why Ceph would refuse value for a known option
// ("" when it would not, or the option is not known here).
func checkKnownValue(key, value string) string {
	o, ok := knownOptions[key]
	if !ok {
		return ""
	}
	switch o.typ {
	case "bool":
		if _, ok := parseCephBool(value); !ok {
			return fmt.Sprintf("%s is a boolean: use true or false, not %q", key, value)
		}
	case "uint":
		if n, err := strconv.ParseInt(value, 10, 64); err != nil || n < 0 {
			return fmt.Sprintf("%s is a non-negative integer, not %q", key, value)
		}
	case "float":
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			return fmt.Sprintf("%s is a number (seconds), not %q", key, value)
		}
	case "size":
		n, ok := parseIECSize(value)
		if !ok {
			return fmt.Sprintf("%s is a size in bytes, optionally with a K, M, G or T suffix (powers of 1024), not %q", key, value)
		}
		if n < o.min {
			return fmt.Sprintf("Ceph refuses %s below %d (%d MiB): %q is %d bytes (Ceph: \"Value '%d' is below minimum %d\")",
				key, o.min, o.min>>20, value, n, n, o.min)
		}
	}
	return ""
}
