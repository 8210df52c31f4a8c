// Package apt manages a node's APT repositories: pve_apt_repository.
package apt

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const typeName = "pve_apt_repository"

var (
	_ resource.Resource                     = (*repoResource)(nil)
	_ resource.ResourceWithConfigure        = (*repoResource)(nil)
	_ resource.ResourceWithImportState      = (*repoResource)(nil)
	_ resource.ResourceWithConfigValidators = (*repoResource)(nil)
)

// NewResource is the constructor the provider registers.
func NewResource() resource.Resource {
	return &repoResource{framework.ResourceBase{TypeName: typeName}}
}

type repoResource struct{ framework.ResourceBase }

type repoModel struct {
	ID          types.String `tfsdk:"id"`
	Node        types.String `tfsdk:"node"`
	Handle      types.String `tfsdk:"handle"`
	Path        types.String `tfsdk:"path"`
	Index       types.Int64  `tfsdk:"index"`
	Enabled     types.Bool   `tfsdk:"enabled"`
	Name        types.String `tfsdk:"name"`
	Description types.String `tfsdk:"description"`
}

var (
	handleRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	aptPathRE = regexp.MustCompile(`^/etc/apt/(?:sources\.list|sources\.list\.d/[^/]+\.(?:list|sources))$`)
)

func (r *repoResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "One APT repository of a node, either a standard Proxmox repository by `handle` " +
			"(`no-subscription`, `ceph-squid-no-subscription`, ... — whatever the node offers for its release) or an existing entry " +
			"of a file in `/etc/apt` by `path` and `index`, enabled or disabled.",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("`node/handle`, or `node/path:index` for an entry given by path."),
			"node": framework.NodeAttribute("", framework.NodeReplaces),
			"handle": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Standard repository handle, such as `no-subscription`, `enterprise`, `test` or `ceph-squid-no-subscription`. " +
					"Checked at apply against the handles the node reports. Conflicts with `path`.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{stringvalidator.RegexMatches(handleRE, "must be a repository handle such as no-subscription or ceph-squid-no-subscription")},
			},
			"path": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "File of the entry, such as `/etc/apt/sources.list.d/pve-enterprise.sources`. Set it with `index` to manage an " +
					"existing entry; with `handle` it is computed: the file the standard repository is in.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplaceIfConfigured()},
				Validators: []validator.String{
					stringvalidator.RegexMatches(aptPathRE, "must be /etc/apt/sources.list or a .list or .sources file in /etc/apt/sources.list.d"),
					stringvalidator.AlsoRequires(path.MatchRoot("index")),
				},
			},
			"index": schema.Int64Attribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Position of the entry in its file, from 0. Set it with `path`; with `handle` it is computed.",
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown(), int64planmodifier.RequiresReplaceIfConfigured()},
				Validators:          []validator.Int64{int64validator.AtLeast(0), int64validator.AlsoRequires(path.MatchRoot("path"))},
			},
			"enabled": schema.BoolAttribute{
				Optional: true, Computed: true,
				Default:             booldefault.StaticBool(true),
				MarkdownDescription: "Whether the repository is enabled. Default `true`.",
			},
			"name": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Name of the standard repository, such as `No-Subscription` (null for an entry given by path).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"description": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "PVE's description of the standard repository (null for an entry given by path).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
		},
	}
}

func (r *repoResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{
		resourcevalidator.ExactlyOneOf(path.MatchRoot("handle"), path.MatchRoot("path")),
	}
}

func (m *repoModel) id() string {
	if !m.Handle.IsNull() && m.Handle.ValueString() != "" {
		return m.Node.ValueString() + "/" + m.Handle.ValueString()
	}
	return m.Node.ValueString() + "/" + m.Path.ValueString() + ":" + strconv.FormatInt(m.Index.ValueInt64(), 10)
}

// before is what the repository looked like before the resource was
// created, kept in private state so destroy can put it back.
type before struct {
	Configured bool `json:"configured"`
	Enabled    bool `json:"enabled"`
}

const beforeKey = "before"

func readCacheKey(node string) string { return "apt/" + node }

// read returns the node's repositories through the per-command cache, so
// refreshing several repositories of a node costs one GET.
func (r *repoResource) read(ctx context.Context, c *pve.Client, node string) (*pve.APTRepositories, error) {
	return framework.CachedRead(ctx, r.PD.Reads, readCacheKey(node), func(ctx context.Context) (*pve.APTRepositories, error) {
		return c.APTRepositories(ctx, node)
	})
}

func (r *repoResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan repoModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.NodeClient(ctx, plan.Node.ValueString(), &resp.Diagnostics)
	if c == nil {
		return
	}
	prev, err := r.apply(ctx, c, &plan, true)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "APT repository", plan.id(), err)
		return
	}
	b, _ := json.Marshal(prev)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, beforeKey, b)...)
	r.finish(ctx, c, "Create", &plan, &resp.State, &resp.Diagnostics)
}

func (r *repoResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan repoModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.NodeClient(ctx, plan.Node.ValueString(), &resp.Diagnostics)
	if c == nil {
		return
	}
	if _, err := r.apply(ctx, c, &plan, true); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Update", "APT repository", plan.id(), err)
		return
	}
	r.finish(ctx, c, "Update", &plan, &resp.State, &resp.Diagnostics)
}

// apply makes the node match the plan: add a missing standard repository
// (unless addMissing is false, as on destroy), then enable or disable. It
// returns what was there before.
func (r *repoResource) apply(ctx context.Context, c *pve.Client, plan *repoModel, addMissing bool) (*before, error) {
	node := plan.Node.ValueString()
	unlock := r.PD.NodeLocks.Lock(readCacheKey(node))
	defer unlock()
	defer r.PD.Reads.Invalidate(readCacheKey(node))
	r.PD.Reads.Invalidate(readCacheKey(node))
	repos, err := c.APTRepositories(ctx, node)
	if err != nil {
		return nil, err
	}
	want := plan.Enabled.ValueBool()
	if plan.Handle.IsNull() {
		p, idx := plan.Path.ValueString(), plan.Index.ValueInt64()
		e, ok := entryAt(repos, p, idx)
		if !ok {
			return nil, fmt.Errorf("node %s has no APT entry %d in %s; it has: %s", node, idx, p, describeFiles(repos))
		}
		prev := &before{Configured: true, Enabled: e.Enabled}
		if e.Enabled != want {
			if err := setEnabled(ctx, c, node, p, idx, want, repos.Digest); err != nil {
				return nil, err
			}
		}
		return prev, nil
	}
	handle := plan.Handle.ValueString()
	std := repos.Standard(handle)
	if std == nil {
		return nil, fmt.Errorf("node %s offers no standard repository %q; it offers: %s", node, handle, handleList(repos))
	}
	prev := &before{Configured: std.Status != nil, Enabled: std.Status != nil && *std.Status}
	if std.Status != nil && *std.Status == want || std.Status == nil && !addMissing {
		return prev, nil
	}
	if want || std.Status == nil {
		// PVE adds the repository, or enables it where it is configured.
		if err := addStandard(ctx, c, node, handle, repos.Digest); err != nil {
			return nil, err
		}
		if want {
			return prev, nil
		}
		if repos, err = c.APTRepositories(ctx, node); err != nil {
			return nil, err
		}
	}
	return prev, disableHandle(ctx, c, node, handle, repos)
}

// disableHandle disables every entry of handle (PVE reports a standard
// repository as enabled while any of its entries is).
func disableHandle(ctx context.Context, c *pve.Client, node, handle string, repos *pve.APTRepositories) error {
	match, ok := handleMatcher(handle)
	if !ok {
		return fmt.Errorf("cannot tell which entry of node %s is the standard repository %q; manage it by path and index instead", node, handle)
	}
	digest := repos.Digest
	for _, e := range entriesOf(repos, match) {
		if !e.Enabled {
			continue
		}
		if err := setEnabled(ctx, c, node, e.Path, e.Index, false, digest); err != nil {
			return err
		}
		fresh, err := c.APTRepositories(ctx, node)
		if err != nil {
			return err
		}
		digest = fresh.Digest
	}
	return nil
}

// The APT writes carry the digest of the last read: one whose answer was
// lost is read back rather than sent again blindly (had PVE done it, the
// digest changed and a second one is refused).

// setEnabled enables or disables the entry at index of the file at path.
func setEnabled(ctx context.Context, c *pve.Client, node, path string, index int64, want bool, digest string) error {
	return c.WriteVerified(ctx, fmt.Sprintf("APT entry %d of %s on %s", index, path, node), func() error {
		return c.SetAPTRepositoryEnabled(ctx, node, path, index, want, digest)
	}, func() (bool, error) {
		repos, err := c.APTRepositories(ctx, node)
		if err != nil {
			return false, err
		}
		e, ok := entryAt(repos, path, index)
		return ok && e.Enabled == want, nil
	})
}

// addStandard adds the standard repository handle, or enables it.
func addStandard(ctx context.Context, c *pve.Client, node, handle, digest string) error {
	return c.WriteVerified(ctx, "APT repository "+handle+" on "+node, func() error {
		return c.AddStandardAPTRepository(ctx, node, handle, digest)
	}, func() (bool, error) {
		repos, err := c.APTRepositories(ctx, node)
		if err != nil {
			return false, err
		}
		std := repos.Standard(handle)
		return std != nil && std.Status != nil && *std.Status, nil
	})
}

func handleList(repos *pve.APTRepositories) string {
	var hs []string
	for _, s := range repos.StandardRepos {
		hs = append(hs, s.Handle)
	}
	if len(hs) == 0 {
		return "none"
	}
	return strings.Join(hs, ", ")
}

func describeFiles(repos *pve.APTRepositories) string {
	var parts []string
	for _, f := range repos.Files {
		parts = append(parts, fmt.Sprintf("%s (%d entries)", f.Path, len(f.Repositories)))
	}
	if len(parts) == 0 {
		return "no repository files"
	}
	return strings.Join(parts, ", ")
}

// finish reads back what the node has and stores it.
func (r *repoResource) finish(ctx context.Context, c *pve.Client, action string, plan *repoModel, st stateTarget, diags *diag.Diagnostics) {
	state, found, err := r.load(ctx, c, plan)
	if err != nil {
		framework.AddUnable(diags, action, "APT repository", plan.id(), err)
		return
	}
	if !found {
		diags.AddError("Unable to "+action+" APT repository "+plan.id(), "PVE accepted the change but the node no longer lists the repository.")
		return
	}
	if state.Enabled.ValueBool() != plan.Enabled.ValueBool() {
		diags.AddError("Unable to "+action+" APT repository "+plan.id(),
			fmt.Sprintf("PVE accepted the change but reports the repository as enabled=%t.", state.Enabled.ValueBool()))
		return
	}
	diags.Append(st.Set(ctx, state)...)
}

type stateTarget interface {
	Set(context.Context, any) diag.Diagnostics
}

// load reads the repository as the node reports it; found is false when
// it is gone (a standard repository no longer configured, an entry no
// longer in its file).
func (r *repoResource) load(ctx context.Context, c *pve.Client, prior *repoModel) (*repoModel, bool, error) {
	node := prior.Node.ValueString()
	repos, err := r.read(ctx, c, node)
	if err != nil {
		return nil, false, err
	}
	m := &repoModel{Node: prior.Node, Handle: prior.Handle, Name: types.StringNull(), Description: types.StringNull()}
	if prior.Handle.IsNull() {
		e, ok := entryAt(repos, prior.Path.ValueString(), prior.Index.ValueInt64())
		if !ok {
			return nil, false, nil
		}
		m.Path, m.Index, m.Enabled = prior.Path, prior.Index, types.BoolValue(e.Enabled)
		m.ID = types.StringValue(m.id())
		return m, true, nil
	}
	handle := prior.Handle.ValueString()
	std := repos.Standard(handle)
	if std == nil {
		return nil, false, fmt.Errorf("node %s offers no standard repository %q; it offers: %s", node, handle, handleList(repos))
	}
	if std.Status == nil {
		return nil, false, nil
	}
	m.Enabled = types.BoolValue(*std.Status)
	m.Name, m.Description = types.StringValue(std.Name), types.StringValue(std.Description)
	m.Path, m.Index = types.StringNull(), types.Int64Null()
	if !prior.Path.IsUnknown() && !prior.Path.IsNull() {
		m.Path, m.Index = prior.Path, prior.Index
	}
	if match, ok := handleMatcher(handle); ok {
		if entries := entriesOf(repos, match); len(entries) > 0 {
			pick := entries[0]
			for _, e := range entries {
				if e.Enabled == *std.Status {
					pick = e
					break
				}
			}
			m.Path, m.Index = types.StringValue(pick.Path), types.Int64Value(pick.Index)
		}
	}
	m.ID = types.StringValue(m.id())
	return m, true, nil
}

func (r *repoResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var prior repoModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.NodeClient(ctx, prior.Node.ValueString(), &resp.Diagnostics)
	if c == nil {
		return
	}
	state, found, err := r.load(ctx, c, &prior)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "APT repository", prior.id(), err)
		return
	}
	if !found {
		tflog.Warn(ctx, "APT repository no longer configured; removing it from state", map[string]any{"id": prior.id()})
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// Delete puts back the state from before the resource was created. PVE
// cannot remove entries, so a repository the resource added is disabled.
func (r *repoResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var prior repoModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	raw, d := req.Private.GetKey(ctx, beforeKey)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if len(raw) == 0 {
		tflog.Info(ctx, "APT repository was imported; leaving it as it is", map[string]any{"id": prior.id()})
		return
	}
	var prev before
	if err := json.Unmarshal(raw, &prev); err != nil {
		resp.Diagnostics.AddError("Unable to Delete APT repository "+prior.id(), "Private state is unreadable: "+err.Error())
		return
	}
	target := prior
	target.Enabled = types.BoolValue(prev.Configured && prev.Enabled)
	c := r.NodeClient(ctx, target.Node.ValueString(), &resp.Diagnostics)
	if c == nil {
		return
	}
	if _, err := r.apply(ctx, c, &target, false); err != nil {
		if pve.IsNotFound(err) || strings.Contains(err.Error(), "has no APT entry") {
			return
		}
		framework.AddUnable(&resp.Diagnostics, "Delete", "APT repository", prior.id(), err)
	}
}

// ImportState accepts node/handle and node/path:index.
func (r *repoResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, rest, ok := strings.Cut(req.ID, "/")
	bad := func() {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf(
			"Expected NODE/HANDLE (such as z2g4a/no-subscription) or NODE/PATH:INDEX (such as z2g4a//etc/apt/sources.list.d/ceph.sources:0); got %q.", req.ID))
	}
	if !ok || node == "" || rest == "" {
		bad()
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
	if !strings.HasPrefix(rest, "/") {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("handle"), rest)...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
		return
	}
	i := strings.LastIndex(rest, ":")
	if i < 0 {
		bad()
		return
	}
	idx, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil || idx < 0 {
		bad()
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("path"), rest[:i])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("index"), idx)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
