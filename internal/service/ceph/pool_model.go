package ceph

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// poolModel is pve_ceph_pool's state.
type poolModel struct {
	ID                 types.String  `tfsdk:"id"`
	Name               types.String  `tfsdk:"name"`
	Node               types.String  `tfsdk:"node"`
	Size               types.Int64   `tfsdk:"size"`
	MinSize            types.Int64   `tfsdk:"min_size"`
	AllowMinSize1      types.Bool    `tfsdk:"allow_min_size_1"`
	PGNum              types.Int64   `tfsdk:"pg_num"`
	PGNumMin           types.Int64   `tfsdk:"pg_num_min"`
	PGAutoscaleMode    types.String  `tfsdk:"pg_autoscale_mode"`
	Application        types.String  `tfsdk:"application"`
	CrushRule          types.String  `tfsdk:"crush_rule"`
	TargetSize         types.String  `tfsdk:"target_size"`
	TargetSizeRatio    types.Float64 `tfsdk:"target_size_ratio"`
	AddStorages        types.Bool    `tfsdk:"add_storages"`
	DeletionProtection types.Bool    `tfsdk:"deletion_protection"`
	ForceDelete        types.Bool    `tfsdk:"force_delete"`
	PoolID             types.Int64   `tfsdk:"pool_id"`
	AutoscalePGNum     types.Int64   `tfsdk:"autoscale_pg_num"`
	UsedBytes          types.Int64   `tfsdk:"used_bytes"`
	UsedFraction       types.Float64 `tfsdk:"used_fraction"`
}

const (
	defaultPoolSize    = 3
	defaultPoolMinSize = 2
	defaultPoolPGNum   = 128 // what PVE creates when pg_num is not given
	maxPoolPGNum       = 32768
)

var (
	// poolNameRE is PVE's pool name pattern.
	poolNameRE = regexp.MustCompile(`^[^:/\s]+$`)
	// storageIDRE is PVE's storage id (parse_storage_id), which the pool
	// name must be with add_storages.
	storageIDRE = regexp.MustCompile(`^(?i:[a-z][a-z0-9\-_.]*[a-z0-9])$`)
	// targetSizeRE is PVE's target_size: bytes, or a number with K, M, G or T.
	targetSizeRE = regexp.MustCompile(`^(\d+(\.\d+)?)([KMGT])?$`)
)

func isPowerOfTwo(n int64) bool { return n > 0 && n&(n-1) == 0 }

// nearestPowersOfTwo are the powers of two around n, for error texts.
func nearestPowersOfTwo(n int64) (int64, int64) {
	lo := int64(1)
	for lo*2 <= n {
		lo *= 2
	}
	return lo, lo * 2
}

// parseTargetSize is PVE::JSONSchema::parse_size: K, M, G and T are
// binary multiples.
func parseTargetSize(s string) (int64, bool) {
	m := targetSizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	mult := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m[3]]
	if f*mult >= math.MaxInt64 {
		return 0, false // converted, it would wrap to a negative size
	}
	return int64(f * mult), true
}

// formatTargetSize renders bytes in the largest unit that is exact.
func formatTargetSize(b int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b%u.mult == 0 {
			return strconv.FormatInt(b/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10)
}

// fromAPI fills the state from what PVE reports. Values that mean the
// same as the prior ones (a target size written as 100G, an application
// among several) keep the prior spelling; attributes PVE does not know
// (deletion_protection, force_delete, add_storages, allow_min_size_1) keep
// their prior values, with safe defaults after an import.
func (m *poolModel) fromAPI(p *pve.CephPool, node string, prior *poolModel) {
	m.ID = types.StringValue(p.Name)
	m.Name = types.StringValue(p.Name)
	m.Node = types.StringValue(node)
	m.PoolID = types.Int64Value(p.ID)
	m.Size = types.Int64Value(p.Size)
	m.MinSize = types.Int64Value(p.MinSize)
	m.PGNum = types.Int64Value(pgNumTarget(p))
	m.PGNumMin = types.Int64Null()
	if p.PGNumMin > 0 {
		m.PGNumMin = types.Int64Value(p.PGNumMin)
	}
	m.PGAutoscaleMode = types.StringValue(p.PGAutoscaleMode)
	m.CrushRule = types.StringValue(p.CrushRule)
	m.Application = types.StringValue(p.Application)
	if prior != nil && !prior.Application.IsNull() && !prior.Application.IsUnknown() && slices.Contains(p.Applications, prior.Application.ValueString()) {
		m.Application = prior.Application
	}
	if len(p.Applications) == 0 {
		m.Application = types.StringNull()
	}
	m.TargetSize = types.StringNull()
	if p.TargetSize > 0 {
		m.TargetSize = types.StringValue(formatTargetSize(p.TargetSize))
		if prior != nil && !prior.TargetSize.IsNull() && !prior.TargetSize.IsUnknown() {
			if b, ok := parseTargetSize(prior.TargetSize.ValueString()); ok && b == p.TargetSize {
				m.TargetSize = prior.TargetSize
			}
		}
	}
	m.TargetSizeRatio = types.Float64Null()
	if p.TargetSizeRatio > 0 {
		m.TargetSizeRatio = types.Float64Value(p.TargetSizeRatio)
		if prior != nil && !prior.TargetSizeRatio.IsNull() && !prior.TargetSizeRatio.IsUnknown() &&
			math.Abs(prior.TargetSizeRatio.ValueFloat64()-p.TargetSizeRatio) < 1e-9 {
			m.TargetSizeRatio = prior.TargetSizeRatio
		}
	}
	m.AutoscalePGNum = types.Int64Null()
	if p.PGNumFinal > 0 {
		m.AutoscalePGNum = types.Int64Value(p.PGNumFinal)
	}
	m.UsedBytes = types.Int64Value(p.BytesUsed)
	m.UsedFraction = types.Float64Value(p.PercentUsed)

	keep := func(v types.Bool, def bool) types.Bool {
		if v.IsNull() || v.IsUnknown() {
			return types.BoolValue(def)
		}
		return v
	}
	var pr poolModel
	if prior != nil {
		pr = *prior
	} else {
		pr = poolModel{AddStorages: types.BoolNull(), DeletionProtection: types.BoolNull(), ForceDelete: types.BoolNull(), AllowMinSize1: types.BoolNull()}
	}
	m.DeletionProtection = keep(pr.DeletionProtection, true)
	m.ForceDelete = keep(pr.ForceDelete, false)
	m.AllowMinSize1 = keep(pr.AllowMinSize1, p.MinSize == 1)
	// Whether the pool has a storage is not part of the pool API; after an
	// import it stays unknown to the provider (null) until configured.
	m.AddStorages = pr.AddStorages
	if m.AddStorages.IsUnknown() {
		m.AddStorages = types.BoolNull()
	}
}

// createRequest is the POST body for the plan.
func (m *poolModel) createRequest() pve.CephPoolRequest {
	r := pve.CephPoolRequest{
		Size: int64Ptr(m.Size), MinSize: int64Ptr(m.MinSize), PGNum: int64Ptr(m.PGNum), PGNumMin: int64Ptr(m.PGNumMin),
		PGAutoscaleMode: m.PGAutoscaleMode.ValueString(), Application: m.Application.ValueString(),
		CrushRule: m.CrushRule.ValueString(), TargetSize: m.TargetSize.ValueString(), TargetSizeRatio: float64Ptr(m.TargetSizeRatio),
		AddStorages: m.AddStorages.ValueBool(),
	}
	// Ceph refuses a pg_num_min above pg_num: start at pg_num_min.
	if r.PGNum == nil && r.PGNumMin != nil && *r.PGNumMin > defaultPoolPGNum {
		n := *r.PGNumMin
		r.PGNum = &n
	}
	return r
}

func int64Ptr(v types.Int64) *int64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	n := v.ValueInt64()
	return &n
}

func float64Ptr(v types.Float64) *float64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	f := v.ValueFloat64()
	return &f
}

// powerOfTwoValidator refuses placement-group counts that are not powers
// of two.
type powerOfTwoValidator struct{}

func (powerOfTwoValidator) Description(context.Context) string {
	return "must be a power of two (1, 2, 4, ..., 32768)"
}

func (v powerOfTwoValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (powerOfTwoValidator) ValidateInt64(_ context.Context, req validator.Int64Request, resp *validator.Int64Response) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	n := req.ConfigValue.ValueInt64()
	if n < 1 || isPowerOfTwo(n) {
		return // the range validator reports values below 1
	}
	lo, hi := nearestPowersOfTwo(n)
	resp.Diagnostics.AddAttributeError(req.Path, "Placement-group count is not a power of two",
		fmt.Sprintf("%s = %d is not a power of two. Ceph spreads data unevenly over a PG count that is not a power of two "+
			"(some PGs hold twice as much as others) and raises the health warning POOL_PG_NUM_NOT_POWER_OF_TWO. Use %d or %d.",
			req.Path, n, lo, hi))
}

// pgNumTarget is the pg_num Ceph is moving the pool to: it applies pg_num
// changes gradually, so the actual pg_num lags.
func pgNumTarget(p *pve.CephPool) int64 {
	if p.PGNumTarget > 0 {
		return p.PGNumTarget
	}
	return p.PGNum
}
