package clusteroptions

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// optionsModel is the resource's state. Options made of several keys are
// nested objects (migration, crs, bwlimit, next_id, tag_style); the one-key
// HA property string is the flat ha_shutdown_policy.
type optionsModel struct {
	ID               types.String `tfsdk:"id"`
	Migration        types.Object `tfsdk:"migration"`
	HAShutdownPolicy types.String `tfsdk:"ha_shutdown_policy"`
	CRS              types.Object `tfsdk:"crs"`
	BWLimit          types.Object `tfsdk:"bwlimit"`
	NextID           types.Object `tfsdk:"next_id"`
	TagStyle         types.Object `tfsdk:"tag_style"`
	Console          types.String `tfsdk:"console"`
	Keyboard         types.String `tfsdk:"keyboard"`
	Language         types.String `tfsdk:"language"`
	MACPrefix        types.String `tfsdk:"mac_prefix"`
	EmailFrom        types.String `tfsdk:"email_from"`
	HTTPProxy        types.String `tfsdk:"http_proxy"`
	MaxWorkers       types.Int64  `tfsdk:"max_workers"`
	Description      types.String `tfsdk:"description"`
}

type migrationModel struct {
	Type    types.String `tfsdk:"type"`
	Network types.String `tfsdk:"network"`
}

type crsModel struct {
	HA                 types.String `tfsdk:"ha"`
	HARebalanceOnStart types.Bool   `tfsdk:"ha_rebalance_on_start"`
}

type bwlimitModel struct {
	Clone     types.Float64 `tfsdk:"clone"`
	Default   types.Float64 `tfsdk:"default"`
	Migration types.Float64 `tfsdk:"migration"`
	Move      types.Float64 `tfsdk:"move"`
	Restore   types.Float64 `tfsdk:"restore"`
}

type nextIDModel struct {
	Lower types.Int64 `tfsdk:"lower"`
	Upper types.Int64 `tfsdk:"upper"`
}

type tagStyleModel struct {
	Shape         types.String `tfsdk:"shape"`
	Ordering      types.String `tfsdk:"ordering"`
	CaseSensitive types.Bool   `tfsdk:"case_sensitive"`
	ColorMap      types.String `tfsdk:"color_map"`
}

var (
	migrationAttrs = map[string]attr.Type{"type": types.StringType, "network": types.StringType}
	crsAttrs       = map[string]attr.Type{"ha": types.StringType, "ha_rebalance_on_start": types.BoolType}
	bwlimitAttrs   = map[string]attr.Type{"clone": types.Float64Type, "default": types.Float64Type, "migration": types.Float64Type,
		"move": types.Float64Type, "restore": types.Float64Type}
	nextIDAttrs   = map[string]attr.Type{"lower": types.Int64Type, "upper": types.Int64Type}
	tagStyleAttrs = map[string]attr.Type{"shape": types.StringType, "ordering": types.StringType,
		"case_sensitive": types.BoolType, "color_map": types.StringType}
)

// The PVE keys this resource owns. Destroy deletes them; create and update
// delete those the configuration leaves out.
var managedKeys = []string{"migration", "ha", "crs", "bwlimit", "next-id", "tag-style", "console", "keyboard",
	"language", "mac_prefix", "email_from", "http_proxy", "max_workers", "description"}

const defaultMACPrefix = "BC:24:11"

func objectAs[T any](ctx context.Context, o types.Object, diags *diag.Diagnostics) *T {
	if o.IsNull() || o.IsUnknown() {
		return nil
	}
	var v T
	diags.Append(o.As(ctx, &v, basetypes.ObjectAsOptions{})...)
	if diags.HasError() {
		return nil
	}
	return &v
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// request renders the plan as PVE option values; keys the plan leaves
// null are returned for deletion.
func (m *optionsModel) request(ctx context.Context) (map[string]string, []string, diag.Diagnostics) {
	var diags diag.Diagnostics
	set := map[string]string{}
	str := func(key string, v types.String) {
		if !v.IsNull() && !v.IsUnknown() && v.ValueString() != "" {
			set[key] = v.ValueString()
		}
	}
	if mg := objectAs[migrationModel](ctx, m.Migration, &diags); mg != nil {
		set["migration"] = pve.FormatPropertyString("type", map[string]string{"type": mg.Type.ValueString(), "network": mg.Network.ValueString()})
	}
	if !m.HAShutdownPolicy.IsNull() {
		set["ha"] = "shutdown_policy=" + m.HAShutdownPolicy.ValueString()
	}
	if c := objectAs[crsModel](ctx, m.CRS, &diags); c != nil {
		kv := map[string]string{"ha": c.HA.ValueString()}
		if !c.HARebalanceOnStart.IsNull() {
			kv["ha-rebalance-on-start"] = boolStr(c.HARebalanceOnStart.ValueBool())
		}
		if s := pve.FormatPropertyString("", kv); s != "" {
			set["crs"] = s
		}
	}
	if b := objectAs[bwlimitModel](ctx, m.BWLimit, &diags); b != nil {
		kv := map[string]string{}
		for k, v := range map[string]types.Float64{"clone": b.Clone, "default": b.Default, "migration": b.Migration, "move": b.Move, "restore": b.Restore} {
			if !v.IsNull() {
				kv[k] = fmtFloat(v.ValueFloat64())
			}
		}
		if s := pve.FormatPropertyString("", kv); s != "" {
			set["bwlimit"] = s
		}
	}
	if n := objectAs[nextIDModel](ctx, m.NextID, &diags); n != nil {
		kv := map[string]string{}
		if !n.Lower.IsNull() {
			kv["lower"] = strconv.FormatInt(n.Lower.ValueInt64(), 10)
		}
		if !n.Upper.IsNull() {
			kv["upper"] = strconv.FormatInt(n.Upper.ValueInt64(), 10)
		}
		if s := pve.FormatPropertyString("", kv); s != "" {
			set["next-id"] = s
		}
	}
	if ts := objectAs[tagStyleModel](ctx, m.TagStyle, &diags); ts != nil {
		kv := map[string]string{"shape": ts.Shape.ValueString(), "ordering": ts.Ordering.ValueString(), "color-map": ts.ColorMap.ValueString()}
		if !ts.CaseSensitive.IsNull() {
			kv["case-sensitive"] = boolStr(ts.CaseSensitive.ValueBool())
		}
		if s := pve.FormatPropertyString("", kv); s != "" {
			set["tag-style"] = s
		}
	}
	str("console", m.Console)
	str("keyboard", m.Keyboard)
	str("language", m.Language)
	str("email_from", m.EmailFrom)
	str("http_proxy", m.HTTPProxy)
	str("description", m.Description)
	if !m.MaxWorkers.IsNull() && !m.MaxWorkers.IsUnknown() {
		set["max_workers"] = strconv.FormatInt(m.MaxWorkers.ValueInt64(), 10)
	}
	// PVE does not store its default prefix; deleting says the same.
	if mp := m.MACPrefix.ValueString(); mp != "" && !strings.EqualFold(mp, defaultMACPrefix) {
		set["mac_prefix"] = mp
	}
	var del []string
	for _, k := range managedKeys {
		if _, ok := set[k]; !ok {
			del = append(del, k)
		}
	}
	return set, del, diags
}

func optString(o map[string]string, k string) types.String {
	if v, ok := o[k]; ok && v != "" {
		return types.StringValue(v)
	}
	return types.StringNull()
}

func optBool(o map[string]string, k string) types.Bool {
	if v, ok := o[k]; ok && v != "" {
		return types.BoolValue(v == "1" || strings.EqualFold(v, "true"))
	}
	return types.BoolNull()
}

func optFloat(o map[string]string, k string, diags *diag.Diagnostics) types.Float64 {
	v, ok := o[k]
	if !ok || v == "" {
		return types.Float64Null()
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		diags.AddError("Unexpected value from PVE", fmt.Sprintf("bwlimit %s = %q is not a number.", k, v))
		return types.Float64Null()
	}
	return types.Float64Value(f)
}

func optInt(v string, what string, diags *diag.Diagnostics) types.Int64 {
	if v == "" {
		return types.Int64Null()
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		diags.AddError("Unexpected value from PVE", fmt.Sprintf("%s = %q is not an integer.", what, v))
		return types.Int64Null()
	}
	return types.Int64Value(n)
}

func objectOf(attrs map[string]attr.Type, values map[string]attr.Value, diags *diag.Diagnostics) types.Object {
	allNull := true
	for _, v := range values {
		if !v.IsNull() {
			allNull = false
		}
	}
	if allNull {
		return types.ObjectNull(attrs)
	}
	o, d := types.ObjectValue(attrs, values)
	diags.Append(d...)
	return o
}

// fromAPI sets the model from GET /cluster/options. prior (may be nil)
// keeps the configured spelling of the description, which PVE returns
// with a newline after every line.
func (m *optionsModel) fromAPI(o *pve.ClusterOptions, prior *optionsModel) diag.Diagnostics {
	var diags diag.Diagnostics
	m.ID = types.StringValue(resourceID)
	if mg := o.Object("migration", "type"); mg != nil {
		m.Migration = objectOf(migrationAttrs, map[string]attr.Value{"type": optString(mg, "type"), "network": optString(mg, "network")}, &diags)
	} else {
		m.Migration = types.ObjectNull(migrationAttrs)
	}
	m.HAShutdownPolicy = optString(o.Object("ha", "shutdown_policy"), "shutdown_policy")
	c := o.Object("crs", "")
	m.CRS = objectOf(crsAttrs, map[string]attr.Value{"ha": optString(c, "ha"), "ha_rebalance_on_start": optBool(c, "ha-rebalance-on-start")}, &diags)
	b := o.Object("bwlimit", "")
	m.BWLimit = objectOf(bwlimitAttrs, map[string]attr.Value{
		"clone": optFloat(b, "clone", &diags), "default": optFloat(b, "default", &diags), "migration": optFloat(b, "migration", &diags),
		"move": optFloat(b, "move", &diags), "restore": optFloat(b, "restore", &diags),
	}, &diags)
	n := o.Object("next-id", "")
	m.NextID = objectOf(nextIDAttrs, map[string]attr.Value{
		"lower": optInt(n["lower"], "next-id lower", &diags), "upper": optInt(n["upper"], "next-id upper", &diags),
	}, &diags)
	ts := o.Object("tag-style", "")
	m.TagStyle = objectOf(tagStyleAttrs, map[string]attr.Value{
		"shape": optString(ts, "shape"), "ordering": optString(ts, "ordering"),
		"case_sensitive": optBool(ts, "case-sensitive"), "color_map": optString(ts, "color-map"),
	}, &diags)
	plain := func(k string) types.String {
		if s := o.String(k); s != "" {
			return types.StringValue(s)
		}
		return types.StringNull()
	}
	m.Console = plain("console")
	m.Keyboard = plain("keyboard")
	m.Language = plain("language")
	m.EmailFrom = plain("email_from")
	m.HTTPProxy = plain("http_proxy")
	m.MaxWorkers = optInt(o.String("max_workers"), "max_workers", &diags)
	m.MACPrefix = types.StringValue(defaultMACPrefix)
	if s := o.String("mac_prefix"); s != "" {
		m.MACPrefix = types.StringValue(s)
	}
	desc := o.String("description")
	switch {
	case desc == "":
		m.Description = types.StringNull()
	case prior != nil && !prior.Description.IsNull() && strings.TrimRight(prior.Description.ValueString(), "\n") == strings.TrimRight(desc, "\n"):
		m.Description = prior.Description
	default:
		// As PVE reports it: a heredoc in the configuration (ending in a
		// newline) matches after import.
		m.Description = types.StringValue(desc)
	}
	return diags
}
