// Package clusteroptions manages the datacenter options
// (/etc/pve/datacenter.cfg) as the singleton pve_cluster_options.
package clusteroptions

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const (
	typeName   = "pve_cluster_options"
	resourceID = "cluster"
)

var (
	_ resource.Resource                   = (*optionsResource)(nil)
	_ resource.ResourceWithConfigure      = (*optionsResource)(nil)
	_ resource.ResourceWithImportState    = (*optionsResource)(nil)
	_ resource.ResourceWithValidateConfig = (*optionsResource)(nil)
)

// NewResource is the constructor the provider registers.
func NewResource() resource.Resource {
	return &optionsResource{framework.ResourceBase{TypeName: typeName}}
}

type optionsResource struct{ framework.ResourceBase }

var (
	macPrefixRE = regexp.MustCompile(`^(?i:[a-f0-9][02468ace](?::[a-f0-9]{2}){0,2}(?::[a-f0-9]?)?)$`)
	emailRE     = regexp.MustCompile(`^[\w+\-~]+(?:\.[\w+\-~]+)*@[a-zA-Z0-9\-]+(?:\.[a-zA-Z0-9\-]+)*$`)
	tagRE       = `[a-zA-Z0-9_][a-zA-Z0-9_\-+.]*`
	colorRE     = tagRE + `:[0-9a-fA-F]{6}(?::[0-9a-fA-F]{6})?`
	colorMapRE  = regexp.MustCompile(`^` + colorRE + `(?:;` + colorRE + `)*$`)

	keyboards = []string{"de", "de-ch", "da", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch",
		"hu", "is", "it", "ja", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "sv", "sl", "tr"}
	languages = []string{"ar", "ca", "da", "de", "en", "es", "eu", "fa", "fr", "hr", "he", "it", "ja", "ka", "kr",
		"nb", "nl", "nn", "pl", "pt_BR", "ru", "sl", "sv", "tr", "ukr", "zh_CN", "zh_TW"}
	shutdownPolicies = []string{"freeze", "failover", "conditional", "migrate"}
)

func codeList(vals []string) string { return "`" + strings.Join(vals, "`, `") + "`" }

func (r *optionsResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := clusterPolicyAttributes()
	maps.Copy(attrs, clusterInterfaceAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "The datacenter options of the cluster (`/etc/pve/datacenter.cfg`, GUI: Datacenter → Options). " +
			"There is one per cluster (or per standalone node), so declare this resource once.\n\n" +
			"The resource owns every option it has an attribute for: an option you leave out (or remove from the " +
			"configuration) is deleted from PVE, so PVE's default applies; that includes options set before the resource " +
			"was created, which is why importing first (`terraform import pve_cluster_options.this cluster`) shows what is set. " +
			"Changes made outside Terraform show up in the next plan. Destroying the resource deletes every option it manages. " +
			"Options it does not model (for example `u2f`, `webauthn`, `notify`) are left alone.\n\n" +
			"Credentials: an API token with `Sys.Modify` on `/` is enough.",
		Attributes: attrs,
	}
}

// bwLimit is a bandwidth limit of bwlimit.
func bwLimit(what string) schema.Float64Attribute {
	return schema.Float64Attribute{Optional: true, MarkdownDescription: "Bandwidth limit in KiB/s for " + what + ".",
		Validators: []validator.Float64{float64validator.AtLeast(0)}}
}

// clusterPolicyAttributes are how the cluster migrates, schedules and
// limits guests and hands out their ids.
func clusterPolicyAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": framework.IDAttribute("Always `cluster`."),
		"migration": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Cluster-wide migration settings (`migration`). Unset: `secure` over the cluster network.",
			Attributes: map[string]schema.Attribute{
				"type": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "`secure` (through an SSH tunnel) or `insecure` (plain, faster; only on a private network).",
					Validators:          []validator.String{stringvalidator.OneOf("secure", "insecure")},
				},
				"network": schema.StringAttribute{
					Optional:            true,
					MarkdownDescription: "Network used for migration traffic in CIDR notation, such as `169.254.50.0/24`.",
					Validators:          []validator.String{framework.CIDR(framework.AnyIP)},
				},
			},
		},
		"ha_shutdown_policy": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "What HA does with its services when a node shuts down (`ha: shutdown_policy`): " + codeList(shutdownPolicies) + ". PVE's default is `conditional`.",
			Validators:          []validator.String{stringvalidator.OneOf(shutdownPolicies...)},
		},
		"crs": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Cluster resource scheduling (`crs`).",
			Attributes: map[string]schema.Attribute{
				"ha": schema.StringAttribute{
					Optional:            true,
					MarkdownDescription: "Scheduler mode for HA: `basic` (PVE's default), `static`, or `dynamic` (PVE 9.1 and later).",
					Validators:          []validator.String{stringvalidator.OneOf("basic", "static", "dynamic")},
				},
				"ha_rebalance_on_start": schema.BoolAttribute{
					Optional:            true,
					MarkdownDescription: "Use the scheduler to pick a node when an HA service goes from stopped to started (`ha-rebalance-on-start`).",
				},
			},
		},
		"bwlimit": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "I/O bandwidth limits (`bwlimit`), in KiB/s.",
			Attributes: map[string]schema.Attribute{
				"clone": bwLimit("cloning disks"), "default": bwLimit("all operations without their own limit"),
				"migration": bwLimit("migrating guests"), "move": bwLimit("moving disks"), "restore": bwLimit("restoring backups"),
			},
		},
		"next_id": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Range from which PVE picks free VM ids (`next-id`). PVE's defaults are 100 and 1000000.",
			Attributes: map[string]schema.Attribute{
				"lower": schema.Int64Attribute{Optional: true, MarkdownDescription: "Lowest id handed out (inclusive).",
					Validators: []validator.Int64{int64validator.Between(100, 999999999)}},
				"upper": schema.Int64Attribute{Optional: true, MarkdownDescription: "Upper bound (exclusive); must be greater than `lower`.",
					Validators: []validator.Int64{int64validator.Between(101, 1000000000)}},
			},
		},
	}
}

// clusterInterfaceAttributes are the web interface's and the nodes'
// defaults and the datacenter notes.
func clusterInterfaceAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"tag_style": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "How the web interface shows guest tags (`tag-style`).",
			Attributes: map[string]schema.Attribute{
				"shape": schema.StringAttribute{Optional: true, MarkdownDescription: "`full`, `circle` (PVE's default), `dense` or `none`.",
					Validators: []validator.String{stringvalidator.OneOf("full", "circle", "dense", "none")}},
				"ordering": schema.StringAttribute{Optional: true, MarkdownDescription: "`config` or `alphabetical` (PVE's default).",
					Validators: []validator.String{stringvalidator.OneOf("config", "alphabetical")}},
				"case_sensitive": schema.BoolAttribute{Optional: true, MarkdownDescription: "Compare tags case-sensitively when removing duplicates."},
				"color_map": schema.StringAttribute{Optional: true,
					MarkdownDescription: "Colors per tag, `tag:RRGGBB[:RRGGBB]` separated by `;`, such as `prod:ff0000;lab:00ff00:000000`.",
					Validators:          []validator.String{stringvalidator.RegexMatches(colorMapRE, "must be tag:RRGGBB[:RRGGBB] entries separated by ';'")}},
			},
		},
		"console": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Default console viewer: `html5` (noVNC), `xtermjs` or `vv` (SPICE).",
			Validators:          []validator.String{stringvalidator.OneOf("html5", "xtermjs", "vv")},
		},
		"keyboard": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Default keyboard layout of the VNC console: " + codeList(keyboards) + ".",
			Validators:          []validator.String{stringvalidator.OneOf(keyboards...)},
		},
		"language": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Default language of the web interface: " + codeList(languages) + ".",
			Validators:          []validator.String{stringvalidator.OneOf(languages...)},
		},
		"mac_prefix": schema.StringAttribute{
			Optional: true, Computed: true,
			Default:             stringdefault.StaticString(defaultMACPrefix),
			MarkdownDescription: "Prefix of the MAC addresses PVE generates for guests, such as `BC:24:11:0`. PVE's default (and this attribute's) is `BC:24:11`, Proxmox's OUI; the first octet must be unicast (even).",
			Validators:          []validator.String{stringvalidator.RegexMatches(macPrefixRE, "must be a unicast MAC address prefix such as BC:24:11 or BC:24:11:0")},
		},
		"email_from": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Sender address of notification mails (PVE's default: `root@$hostname`).",
			Validators:          []validator.String{stringvalidator.RegexMatches(emailRE, "must be an email address")},
		},
		"http_proxy": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "HTTP proxy for downloads, `http://[user:password@]host:port/`.",
			Validators:          []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^http://.+`), "must start with http://")},
		},
		"max_workers": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "How many workers per node bulk actions (start/stop all, HA) may run at once.",
			Validators:          []validator.Int64{int64validator.AtLeast(1)},
		},
		"description": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Datacenter notes shown in the web interface (stored as the comment at the top of `datacenter.cfg`).",
			Validators:          []validator.String{stringvalidator.LengthBetween(1, 65536)},
		},
	}
}

func (r *optionsResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m optionsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	requireOne := func(o types.Object, name string, keys ...string) {
		if o.IsNull() || o.IsUnknown() {
			return
		}
		for _, k := range keys {
			if v, ok := o.Attributes()[k]; ok && !v.IsNull() {
				return
			}
		}
		resp.Diagnostics.AddAttributeError(path.Root(name), "Empty "+name,
			fmt.Sprintf("Set at least one of %s in %s, or leave %s out to use PVE's defaults.", codeList(keys), name, name))
	}
	requireOne(m.CRS, "crs", "ha", "ha_rebalance_on_start")
	requireOne(m.BWLimit, "bwlimit", "clone", "default", "migration", "move", "restore")
	requireOne(m.NextID, "next_id", "lower", "upper")
	requireOne(m.TagStyle, "tag_style", "shape", "ordering", "case_sensitive", "color_map")
	if n := objectAs[nextIDModel](ctx, m.NextID, &resp.Diagnostics); n != nil && !n.Lower.IsUnknown() && !n.Upper.IsUnknown() {
		lower, upper := int64(100), int64(1000000)
		if !n.Lower.IsNull() {
			lower = n.Lower.ValueInt64()
		}
		if !n.Upper.IsNull() {
			upper = n.Upper.ValueInt64()
		}
		if lower >= upper {
			at := path.Root("next_id").AtName("upper")
			if n.Upper.IsNull() {
				at = path.Root("next_id").AtName("lower")
			}
			resp.Diagnostics.AddAttributeError(at, "Invalid next_id range",
				fmt.Sprintf("next_id.lower (%d) must be less than next_id.upper (%d, exclusive; PVE's default is 1000000 when unset).", lower, upper))
		}
	}
}

func (r *optionsResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan optionsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	r.write(ctx, "Create", &plan, &resp.State, &resp.Diagnostics)
}

func (r *optionsResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan optionsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	r.write(ctx, "Update", &plan, &resp.State, &resp.Diagnostics)
}

type diagList = diag.Diagnostics

// stateTarget is the state a write stores its result in.
type stateTarget interface {
	Set(context.Context, any) diag.Diagnostics
}

// write sets what the plan has and deletes every managed option it leaves
// out, in one PUT, then stores what PVE reports.
func (r *optionsResource) write(ctx context.Context, action string, plan *optionsModel, st stateTarget, diags *diagList) {
	if diags.HasError() {
		return
	}
	c := r.Client(diags)
	if c == nil {
		return
	}
	set, del, d := plan.request(ctx)
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	// Absolute values and deletions, no digest: sent again on a lost answer.
	if err := c.UpdateClusterOptions(pve.Idempotent(ctx), set, del); err != nil {
		framework.AddUnable(diags, action, "cluster options", "", err)
		return
	}
	o, err := c.ClusterOptions(ctx)
	if err != nil {
		framework.AddUnable(diags, "Read", "cluster options", "", err)
		return
	}
	var state optionsModel
	diags.Append(state.fromAPI(o, plan)...)
	if diags.HasError() {
		return
	}
	diags.Append(st.Set(ctx, &state)...)
}

func (r *optionsResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	var prior optionsModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	o, err := c.ClusterOptions(ctx)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "cluster options", "", err)
		return
	}
	var state optionsModel
	resp.Diagnostics.Append(state.fromAPI(o, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete removes every option the resource manages, so PVE's defaults
// apply again.
func (r *optionsResource) Delete(ctx context.Context, _ resource.DeleteRequest, resp *resource.DeleteResponse) {
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	if err := c.UpdateClusterOptions(pve.Idempotent(ctx), nil, managedKeys); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "cluster options", "", err)
	}
}

func (r *optionsResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if req.ID != resourceID {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("pve_cluster_options is a singleton; import it with the ID %q, got %q.", resourceID, req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), resourceID)...)
}
