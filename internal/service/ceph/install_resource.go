package ceph

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

const (
	installTypeName       = "pve_ceph_install"
	installDefaultTimeout = 30 * time.Minute
)

var (
	_ resource.Resource                = (*installResource)(nil)
	_ resource.ResourceWithConfigure   = (*installResource)(nil)
	_ resource.ResourceWithImportState = (*installResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*installResource)(nil)
)

// cephMajors maps Ceph release names to their major version, in order.
var cephMajors = map[string]int{
	"octopus": 15, "pacific": 16, "quincy": 17, "reef": 18, "squid": 19, "tentacle": 20, "umbrella": 21,
}

func cephCodenames() []string {
	out := make([]string, 0, len(cephMajors))
	for n := range cephMajors {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return cephMajors[out[i]] < cephMajors[out[j]] })
	return out
}

// codenameOf is the release name of a Ceph major version ("" if unknown).
func codenameOf(major int) string {
	for n, m := range cephMajors {
		if m == major {
			return n
		}
	}
	return ""
}

// NewInstallResource is the constructor the provider registers.
func NewInstallResource() resource.Resource {
	return &installResource{framework.ResourceBase{TypeName: installTypeName}}
}

type installResource struct{ framework.ResourceBase }

type installModel struct {
	ID             types.String   `tfsdk:"id"`
	Node           types.String   `tfsdk:"node"`
	Version        types.String   `tfsdk:"version"`
	Repository     types.String   `tfsdk:"repository"`
	PackageVersion types.String   `tfsdk:"package_version"`
	Timeouts       timeouts.Value `tfsdk:"timeouts"`
}

func (r *installResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Ceph packages of one node, installed with `pveceph install` (GUI: Ceph > Install Ceph) if the " +
			"node does not have them yet. Every PVE node has the Ceph client; monitors, managers and OSDs need the daemons " +
			"this installs, and until then PVE answers every Ceph call on the node with `binary not installed: " +
			"/usr/bin/ceph-mon`. Put `depends_on` on it in `pve_ceph_cluster`, `pve_ceph_monitor`, `pve_ceph_manager` and " +
			"OSD resources of the node.",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("The node name."),
			"node": framework.NodeAttribute("Node name, such as `z2g4a`. Changing it installs Ceph on the other node (nothing is removed from this one).", framework.NodeReplaces),
			"version": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Ceph release: " + strings.Join(cephCodenames(), ", ") + " - as far as the node's PVE offers " +
					"it (PVE 9.1: `squid`, later 9.x also `tentacle`; PVE 8: `quincy`, `reef`, `squid`). Without it a node " +
					"that has Ceph keeps its release, and a node without Ceph gets `pveceph install`'s default, which is " +
					"`squid` on PVE 9.1 but `quincy` on PVE 8 - set it. A newer release upgrades, an older one is refused.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				Validators:    []validator.String{stringvalidator.OneOf(cephCodenames()...)},
			},
			"repository": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString("no-subscription"),
				MarkdownDescription: "Ceph repository `pveceph install` configures and installs from: `no-subscription` (the " +
					"default here, for labs without a subscription), `enterprise` (needs a subscription; PVE's own default), " +
					"`test`, or `manual` (PVE 9: use the Ceph repository already configured, for example an offline mirror). " +
					"Used when the provider installs or upgrades; a change runs `pveceph install` again, which rewrites " +
					"`/etc/apt/sources.list.d/ceph.sources` (`ceph.list` on PVE 8). To manage the repositories otherwise " +
					"use `pve_apt_repository`.",
				Validators: []validator.String{stringvalidator.OneOf("no-subscription", "enterprise", "test", "manual")},
			},
			"package_version": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The installed `ceph-mon` package version, such as `19.2.3-pve2`.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true}),
		},
	}
}

// cephDaemonPkgs are the packages whose presence means "Ceph installed":
// PVE checks for /usr/bin/ceph-mon, ceph-mgr, ceph-osd and
// /usr/sbin/ceph-volume.
var cephDaemonPkgs = []string{"ceph-mon", "ceph-mgr", "ceph-osd", "ceph-volume"}

// installed is what Ceph a node has.
type installed struct {
	ok       bool
	codename string // squid
	major    int
	version  string // 19.2.3-pve2 (ceph-mon's)
	missing  []string
}

func (i installed) String() string {
	if !i.ok {
		return "no Ceph daemons (missing " + strings.Join(i.missing, ", ") + ")"
	}
	return fmt.Sprintf("Ceph %s (%s)", i.release(), i.version)
}

func (i installed) release() string {
	if i.codename != "" {
		return i.codename
	}
	return strconv.Itoa(i.major)
}

// readInstalled asks dpkg which Ceph daemons node has.
func readInstalled(ctx context.Context, ex *nodeexec.Pool, node string) (installed, error) {
	cmd := nodeexec.Cmd("dpkg-query", "-W", "-f", `${Package}\t${Version}\t${db:Status-Status}\n`).Arg(cephDaemonPkgs...).AcceptExit(1)
	res, err := ex.Run(ctx, node, cmd)
	if err != nil {
		return installed{}, err
	}
	got := map[string][2]string{}
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		f := strings.Split(line, "\t")
		if len(f) == 3 {
			got[f[0]] = [2]string{f[1], f[2]}
		}
	}
	var in installed
	for _, p := range cephDaemonPkgs {
		v, ok := got[p]
		if !ok || v[1] != "installed" {
			in.missing = append(in.missing, p)
			continue
		}
		major, err := strconv.Atoi(strings.SplitN(v[0], ".", 2)[0])
		if err != nil {
			return installed{}, fmt.Errorf("node %s: unexpected version %q of %s", node, v[0], p)
		}
		if p == "ceph-mon" {
			in.version, in.major = v[0], major
		}
	}
	in.ok = len(in.missing) == 0
	if in.ok {
		in.codename = codenameOf(in.major)
	}
	return in, nil
}

func (r *installResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	framework.PlanRequireNodeExec(r.PD, &resp.Diagnostics, installTypeName)
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, installTypeName)
	if req.State.Raw.IsNull() {
		return
	}
	var plan, state installModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || plan.Version.IsUnknown() || plan.Version.IsNull() || state.Version.IsNull() ||
		plan.Node.ValueString() != state.Node.ValueString() {
		return
	}
	want, have := plan.Version.ValueString(), state.Version.ValueString()
	wm, ok1 := cephMajors[want]
	hm, ok2 := cephMajors[have]
	if !ok2 {
		hm, ok2 = majorOf(state.PackageVersion.ValueString())
	}
	if ok1 && ok2 && wm < hm {
		resp.Diagnostics.AddAttributeError(path.Root("version"), "Ceph cannot be downgraded",
			fmt.Sprintf("Node %s runs Ceph %s (%s); version = %q is older. Ceph daemons do not start on data a newer release "+
				"wrote, and apt never downgrades on its own (pveceph install would report success and change nothing). "+
				"Set version = %q, or remove the attribute to keep what the node has.", state.Node.ValueString(), have,
				state.PackageVersion.ValueString(), want, have))
	}
}

func majorOf(pkgVersion string) (int, bool) {
	n, err := strconv.Atoi(strings.SplitN(pkgVersion, ".", 2)[0])
	return n, err == nil && pkgVersion != ""
}

// ensure installs or upgrades Ceph on the plan's node unless it has the
// wanted release already, then records what is installed.
func (r *installResource) ensure(ctx context.Context, m *installModel, prior *installModel, action string, diags *diag.Diagnostics) {
	node := m.Node.ValueString()
	if r.Client(diags) == nil || !framework.RequireNodeExec(r.PD, diags, installTypeName) {
		return
	}
	ex := r.PD.NodeExec
	unlock, err := ex.Lock(ctx, node)
	if err != nil {
		framework.AddUnable(diags, action, "Ceph packages on node", node, err)
		return
	}
	defer unlock()
	have, err := readInstalled(ctx, ex, node)
	if err != nil {
		framework.AddUnable(diags, action, "Ceph packages on node", node, err)
		return
	}
	want := ""
	if !m.Version.IsUnknown() && !m.Version.IsNull() {
		want = m.Version.ValueString()
	}
	repoChanged := prior != nil && prior.Repository.ValueString() != m.Repository.ValueString()
	switch {
	case have.ok && want != "" && cephMajors[want] < have.major:
		framework.AddUnable(diags, action, "Ceph packages on node", node, fmt.Errorf(
			"version = %q, but the node has %s: Ceph cannot be downgraded; set version = %q or remove the attribute", want, have, have.release()))
		return
	case have.ok && (want == "" || want == have.codename) && !repoChanged:
		tflog.Info(ctx, "the node has the Ceph release already; not running pveceph install", map[string]any{"node": node, "installed": have.String()})
	default:
		if want == "" && have.ok {
			want = have.codename // a repository change keeps the release
		}
		r.install(ctx, node, want, m.Repository.ValueString(), have, diags, action)
		if diags.HasError() {
			return
		}
		if have, err = readInstalled(ctx, ex, node); err != nil {
			framework.AddUnable(diags, action, "Ceph packages on node", node, err)
			return
		}
		if !have.ok || (want != "" && have.codename != want) {
			framework.AddUnable(diags, action, "Ceph packages on node", node, fmt.Errorf(
				"pveceph install reported success, but dpkg reports %s, not Ceph %s", have, orDefault(want)))
			return
		}
	}
	m.ID = types.StringValue(node)
	m.Version = types.StringValue(have.release())
	m.PackageVersion = types.StringValue(have.version)
}

func orDefault(v string) string {
	if v == "" {
		return "(pveceph's default release)"
	}
	return v
}

// install runs pveceph install; the timeout is the resource's.
func (r *installResource) install(ctx context.Context, node, version, repo string, have installed, diags *diag.Diagnostics, action string) {
	cmd := nodeexec.Cmd("pveceph", "install")
	if version != "" {
		cmd.Arg("--version", version)
	}
	cmd.Arg("--repository", repo)
	if dl, ok := ctx.Deadline(); ok {
		cmd.WithTimeout(time.Until(dl))
	}
	tflog.Info(ctx, "installing Ceph with pveceph install", map[string]any{"node": node, "version": orDefault(version),
		"repository": repo, "installed": have.String()})
	res, err := r.PD.NodeExec.Run(ctx, node, cmd)
	if err != nil {
		hint := ""
		if res != nil && repo == "enterprise" && strings.Contains(string(res.Stderr), "401") {
			hint = "\n\nThe enterprise repository needs a subscription on the node; without one use repository = \"no-subscription\"."
		}
		if res != nil && strings.Contains(string(res.Stderr), "does not have a value in the enumeration") {
			hint = "\n\nThe node's PVE release does not offer that Ceph release (the enumeration lists those it offers)."
		}
		framework.AddUnable(diags, action, "Ceph packages on node", node, fmt.Errorf("%w%s", err, hint))
		return
	}
	tflog.Debug(ctx, "pveceph install output", map[string]any{"node": node, "stdout": string(res.Stdout)})
}

func (r *installResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan installModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, installDefaultTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.ensure(ctx, &plan, nil, "Create", &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *installResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state installModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, installDefaultTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.ensure(ctx, &plan, &state, "Update", &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *installResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state installModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, installTypeName) {
		return
	}
	node := state.Node.ValueString()
	have, err := readInstalled(ctx, r.PD.NodeExec, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "Ceph packages on node", node, err)
		return
	}
	if !have.ok {
		tflog.Warn(ctx, "Ceph is no longer installed on the node; the next apply installs it", map[string]any{"node": node, "dpkg": have.String()})
		resp.State.RemoveResource(ctx)
		return
	}
	state.ID = types.StringValue(node)
	state.Version = types.StringValue(have.release())
	state.PackageVersion = types.StringValue(have.version)
	if state.Repository.IsNull() || state.Repository.IsUnknown() {
		state.Repository = r.configuredRepository(ctx, node, have.release())
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// configuredRepository finds the enabled Proxmox Ceph repository of a
// release in the node's APT sources (for import); "no-subscription" when
// the API does not show one.
func (r *installResource) configuredRepository(ctx context.Context, node, codename string) types.String {
	c, err := r.PD.NodeClient(ctx, node)
	if err == nil {
		repos, err := c.APTRepositories(ctx, node)
		if err == nil {
			for _, repo := range []string{"no-subscription", "enterprise", "test"} {
				if sr := repos.Standard("ceph-" + codename + "-" + repo); sr != nil && sr.Status != nil && *sr.Status {
					return types.StringValue(repo)
				}
			}
		}
		if err != nil {
			tflog.Warn(ctx, "cannot read the APT repositories; assuming no-subscription", map[string]any{"node": node, "error": err.Error()})
		}
	}
	return types.StringValue("no-subscription")
}

// Delete leaves Ceph installed: see the resource description.
func (r *installResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state installModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := state.Node.ValueString()
	tflog.Info(ctx, "no longer managing the Ceph packages; they stay installed", map[string]any{"node": node})
	resp.Diagnostics.AddWarning("Ceph stays installed on node "+node,
		fmt.Sprintf("Removing %s does not uninstall Ceph %s from %s: uninstalling (pveceph purge) destroys the node's Ceph "+
			"data and configuration and is never done by this provider. Terraform no longer manages the packages.",
			installTypeName, state.Version.ValueString(), node))
}

func (r *installResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !framework.IsNodeName(req.ID) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import %s with the node name, such as z2g4a; got %q.", installTypeName, req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), req.ID)...)
}
