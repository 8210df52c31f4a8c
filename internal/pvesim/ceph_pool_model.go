package pvesim

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Pool settings as PVE applies them (PVE::Ceph::Tools::set_pool) on top
// of Ceph's `osd pool set` checks (OSDMonitor), the pg_autoscaler, and the
// RBD images PVE looks for before it destroys a pool.

const (
	cephAutoscaleInterval = 60.0  // pg_autoscaler sleep_interval, seconds
	cephTargetPGPerOSD    = 100   // mon_target_pg_per_osd
	cephAutoscaleMinPGs   = 32    // the autoscaler's PG_NUM_MIN
	cephAutoscaleFactor   = 3.0   // threshold: adjust only when off by this factor
	cephMaxPoolPGNum      = 65536 // mon_max_pool_pg_num
)

// poolGetAll is what `osd pool get <pool> all` reports, as strings: the
// values PVE's set_pool compares a request against.
func (p *cephPool) poolGetAll() map[string]string {
	out := map[string]string{
		"size": strconv.Itoa(p.Size), "min_size": strconv.Itoa(p.MinSize), "pg_num": strconv.Itoa(p.PGNum),
		"pgp_num": strconv.Itoa(p.PGNum), "crush_rule": p.CrushRule, "pg_autoscale_mode": p.Autoscale,
	}
	if p.PGNumMin > 0 {
		out["pg_num_min"] = strconv.Itoa(p.PGNumMin)
	}
	if p.TargetSize > 0 {
		out["target_size_bytes"] = strconv.FormatInt(p.TargetSize, 10)
	}
	if p.TargetRatio > 0 {
		out["target_size_ratio"] = strconv.FormatFloat(p.TargetRatio, 'f', -1, 64)
	}
	return out
}

// defaultMinSize is Ceph's get_osd_pool_default_min_size(size).
func (cs *cephState) defaultMinSize(size int) int {
	if v, _ := strconv.Atoi(cs.configValue("global", "osd_pool_default_min_size")); v > 0 {
		return min(v, size)
	}
	return size - size/2
}

// osdPoolSet is one `osd pool set` (or `osd pool application enable`) with
// Ceph's checks; PVE never passes --yes-i-really-mean-it.
func (cs *cephState) osdPoolSet(p *cephPool, key, val string) error {
	n, interr := strconv.Atoi(val)
	intErr := func() error { return fmt.Errorf("error parsing integer value '%s'", val) }
	switch key {
	case "size":
		if interr != nil {
			return intErr()
		}
		if n <= 0 || n > 10 {
			return fmt.Errorf("pool size must be between 1 and 10")
		}
		if n == 1 {
			if cs.configValue("global", "mon_allow_pool_size_one") != "true" {
				return fmt.Errorf("configuring pool size as 1 is disabled by default.") //nolint:staticcheck // Ceph's text
			}
			return fmt.Errorf("WARNING: setting pool size 1 could lead to data loss without recovery. If you are *ABSOLUTELY CERTAIN* that is what you want, pass the flag --yes-i-really-mean-it.") //nolint:staticcheck // Ceph's text
		}
		// Since Octopus a new size always recalculates min_size.
		p.Size, p.MinSize = n, cs.defaultMinSize(n)
	case "min_size":
		if interr != nil {
			return intErr()
		}
		if n < 1 || n > p.Size {
			return fmt.Errorf("pool min_size must be between 1 and size, which is set to %d", p.Size)
		}
		p.MinSize = n
	case "pg_num":
		if interr != nil {
			return intErr()
		}
		if n <= 0 || n > cephMaxPoolPGNum {
			return fmt.Errorf("'pg_num' must be greater than 0 and less than or equal to %d (you may adjust 'mon max pool pg num' for higher values)", cephMaxPoolPGNum)
		}
		if n < p.PGNumMin {
			return fmt.Errorf("specified pg_num %d < pg_num_min %d", n, p.PGNumMin)
		}
		// Since Nautilus this sets pg_num_target; pg_num follows
		// (stepPGNum), and `osd pool get pg_num` says where it is.
		if n != p.target() {
			p.PGNumTarget, p.MergeCredit = n, 0
		}
	case "pg_num_min":
		if interr != nil {
			return intErr()
		}
		if n > p.target() {
			return fmt.Errorf("specified pg_num_min %d > pg_num %d", n, p.target())
		}
		p.PGNumMin = max(n, 0)
	case "pg_autoscale_mode":
		if val != "on" && val != "off" && val != "warn" {
			return fmt.Errorf("specified invalid mode %s", val)
		}
		p.Autoscale = val
	case "application":
		if p.Application != "" && p.Application != val {
			return fmt.Errorf("Are you SURE? Pool '%s' already has an enabled application; pass --yes-i-really-mean-it to proceed anyway", p.Name) //nolint:staticcheck // Ceph's text
		}
		p.Application = val
	case "crush_rule":
		if !slices.Contains(cephCrushRules, val) {
			return fmt.Errorf("crush rule %s does not exist", val)
		}
		p.CrushRule = val
	case "target_size_bytes":
		if interr != nil {
			return intErr()
		}
		p.TargetSize = int64(n)
	case "target_size_ratio":
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return fmt.Errorf("error parsing floating point value '%s'", val)
		}
		if f < 0 {
			return fmt.Errorf("target_size_ratio cannot be negative")
		}
		p.TargetRatio = f
	default:
		return fmt.Errorf("unrecognized variable '%s'", key)
	}
	return nil
}

// pveSetPool is PVE::Ceph::Tools::set_pool: size first, then the other
// keys sorted; a value equal to what `osd pool get all` reported before
// the first change is skipped (so a size change that resets min_size can
// leave min_size at Ceph's default). Failed keys make the task fail with
// "Could not set: <keys>".
func (cs *cephState) pveSetPool(p *cephPool, params map[string]string, log *[]string) error {
	err := setPool(p.Name, p.poolGetAll(), params, log, func(k, v string) error { return cs.osdPoolSet(p, k, v) })
	cs.Epoch++
	cs.settle()
	return err
}

// setPool is set_pool's order and bookkeeping over one `osd pool set`
// (set): current is what `osd pool get <name> all` said before.
func setPool(name string, current, params map[string]string, log *[]string, set func(k, v string) error) error {
	keys := make([]string, 0, len(params))
	for k := range params {
		if k != "size" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if _, ok := params["size"]; ok {
		keys = append([]string{"size"}, keys...)
	}
	var failed []string
	for _, k := range keys {
		v := params[k]
		if cur, ok := current[k]; ok && cur == v {
			*log = append(*log, fmt.Sprintf("skipping '%s', did not change", k))
			continue
		}
		*log = append(*log, fmt.Sprintf("pool %s: applying %s = %s", name, k, v))
		if err := set(k, v); err != nil {
			*log = append(*log, "mon_command failed - "+err.Error())
			failed = append(failed, k)
		}
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		return fmt.Errorf("Could not set: %s", strings.Join(failed, ", ")) //nolint:staticcheck // PVE's text
	}
	return nil
}

// poolParams turns API parameters into set_pool's: target_size becomes
// target_size_bytes (PVE::JSONSchema::parse_size); node and name go.
func poolParams(in map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range []string{"size", "min_size", "pg_num", "pg_num_min", "pg_autoscale_mode", "application", "crush_rule", "target_size_ratio"} {
		if v, ok := in[k]; ok {
			out[k] = v
		}
	}
	if v, ok := in["target_size"]; ok {
		out["target_size_bytes"] = strconv.FormatInt(parseTargetSize(v), 10)
	}
	return out
}

// nearestPowerOfTwo is the pg_autoscaler's nearest_power_of_two: the
// power of two at or above int(n), or the one below when n is closer to it.
func nearestPowerOfTwo(n float64) int {
	i := int(n)
	if i <= 0 {
		return 0
	}
	v := 1
	for v < i {
		v <<= 1
	}
	x := v >> 1
	if float64(v)-n > n-float64(x) {
		return x
	}
	return v
}

// autoscaleTarget is the pg_autoscaler's pg_num_final for a pool and
// whether it would change pg_num (off by more than the threshold).
func (cs *cephState) autoscaleTarget(p *cephPool) (int, bool) {
	capacity := float64(cs.rawCapacity())
	osds := 0
	for _, o := range cs.OSDs {
		if o.In {
			osds++
		}
	}
	if capacity <= 0 || osds == 0 || p.Size == 0 {
		return p.target(), false
	}
	ratio := float64(max(p.Stored, p.TargetSize)*int64(p.Size)) / capacity
	if p.TargetRatio > 0 {
		total := 0.0
		for _, q := range cs.Pools {
			total += q.TargetRatio
		}
		ratio = math.Max(ratio, p.TargetRatio/total) // ratios are relative to each other
	}
	target := ratio * float64(osds*cephTargetPGPerOSD) / float64(p.Size)
	floor := cephAutoscaleMinPGs
	if p.PGNumMin > 0 {
		floor = p.PGNumMin
	}
	final := max(floor, nearestPowerOfTwo(target))
	adjust := float64(final) > float64(p.target())*cephAutoscaleFactor || float64(final) < float64(p.target())/cephAutoscaleFactor
	return final, adjust
}

// autoscaleTick runs the pg_autoscaler when its interval has passed.
func (cs *cephState) autoscaleTick() {
	if cs.Clock-cs.LastAutoscale < cephAutoscaleInterval {
		return
	}
	cs.LastAutoscale = cs.Clock
	cs.autoscale()
}

// autoscale is one pg_autoscaler pass: pools in mode "on" get the pg_num
// it computes.
func (cs *cephState) autoscale() {
	changed := false
	for _, p := range cs.Pools {
		if p.Autoscale != "on" {
			continue
		}
		if final, adjust := cs.autoscaleTarget(p); adjust {
			p.PGNumTarget, p.MergeCredit = final, 0 // pg_num follows (stepPGNum)
			changed = true
		}
	}
	if changed {
		cs.Epoch++
		cs.settle()
	}
}
