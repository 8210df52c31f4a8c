package ceph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
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
	configTypeName = "pve_ceph_config"

	targetConfigDB = "config_db"
	targetCephConf = "ceph_conf"
	applyNone      = "none"
	applyRolling   = "rolling_restart"

	cephConfPath     = "/etc/pve/ceph.conf"
	cephConfLockDir  = "/etc/pve/priv/lock/file-ceph_conf"
	cephConfLockKey  = "ceph/ceph.conf"
	pendingKey       = "pending_restart"
	defaultRestartTO = 60 * time.Minute
)

// cephConfLockWait is how long the provider waits for PVE's ceph.conf lock,
// as PVE's own writers do (cfs_lock_file's default 10 s).
var cephConfLockWait = 10 * time.Second

var (
	_ resource.Resource                   = (*configResource)(nil)
	_ resource.ResourceWithConfigure      = (*configResource)(nil)
	_ resource.ResourceWithImportState    = (*configResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*configResource)(nil)
	_ resource.ResourceWithValidateConfig = (*configResource)(nil)
)

// NewConfigResource is the constructor the provider registers.
func NewConfigResource() resource.Resource {
	return &configResource{framework.ResourceBase{TypeName: configTypeName}}
}

type configResource struct{ framework.ResourceBase }

type configModel struct {
	ID                 types.String   `tfsdk:"id"`
	Node               types.String   `tfsdk:"node"`
	Who                types.String   `tfsdk:"who"`
	Target             types.String   `tfsdk:"target"`
	Settings           types.Map      `tfsdk:"settings"`
	Apply              types.String   `tfsdk:"apply"`
	WaitForActiveClean types.Bool     `tfsdk:"wait_for_active_clean"`
	PendingRestart     types.List     `tfsdk:"pending_restart"`
	Timeouts           timeouts.Value `tfsdk:"timeouts"`
}

func (r *configResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Ceph configuration settings of one section (`who`): in the monitors' configuration database " +
			"(`ceph config set`, the default) or in `/etc/pve/ceph.conf` (`target = \"ceph_conf\"`), which PVE's API can only read.",
		Attributes: map[string]schema.Attribute{
			"id": framework.IDAttribute("`<target>/<who>`, such as `config_db/osd`."),
			"node": framework.NodeAttribute("Node the provider runs `ceph` commands on: any node of the Ceph cluster (it needs the admin keyring, "+
				"which PVE shares through `/etc/pve`), such as `z2g4a`. Daemons are restarted on their own nodes.", framework.NodeInPlace),
			"who": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The section: `global`, a daemon type (`mon`, `mgr`, `osd`, `mds`, `client`) or one daemon or client " +
					"(`osd.3`, `mon.z2g4a`, `client.admin`). Changing it replaces the resource.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators: []validator.String{stringvalidator.RegexMatches(configWhoRE,
					"must be global, mon, mgr, osd, mds or client, optionally with .<id> (such as osd.3 or client.admin)")},
			},
			"target": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(targetConfigDB),
				MarkdownDescription: "Where the settings live: `config_db` (default), the monitors' configuration database, or " +
					"`ceph_conf`, the file `/etc/pve/ceph.conf` every node reads. Use `ceph_conf` for client settings that QEMU and " +
					"librbd read from the file; note that a value in ceph.conf overrides the database for daemons that read it (plan and " +
					"apply warn when a `config_db` setting is hidden that way). " +
					"Changing it replaces the resource.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{stringvalidator.OneOf(targetConfigDB, targetCephConf)},
			},
			"settings": schema.MapAttribute{
				Required: true, ElementType: types.StringType,
				MarkdownDescription: "Option name to value, such as `{ osd_memory_target = \"8589934592\", bdev_enable_discard = \"true\" }`. " +
					"Names use underscores (`osd_memory_target`, not `osd memory target`). Values are passed to Ceph as they are " +
					"(one argument, never through a shell); Ceph checks and normalizes them (`8G` is stored as `8589934592`, which " +
					"the provider treats as the same value). Known options are checked at plan time, such as `osd_memory_target` " +
					"of at least 939524096 (896 MiB). In ceph.conf values cannot contain line breaks or start or end with blanks.",
			},
			"apply": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(applyNone),
				MarkdownDescription: "What to do about daemons that must restart to use a change: `none` (default) only lists them in " +
					"`pending_restart`; `rolling_restart` restarts them host by host as described above.",
				Validators: []validator.String{stringvalidator.OneOf(applyNone, applyRolling)},
			},
			"wait_for_active_clean": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "With `rolling_restart`: after each host's OSDs are up, also wait until every placement group is " +
					"`active+clean` (slower; by default `ceph osd ok-to-stop` for the next host's OSDs is the gate).",
			},
			"pending_restart": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Daemons (`osd.3`, `mon.z2g4a`) that have not restarted since a change made by this resource that " +
					"they read only at start. Empty after a successful `rolling_restart`.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true}),
		},
	}
}

func (r *configResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m configModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Settings.IsUnknown() || m.Settings.IsNull() {
		return
	}
	conf := m.Target.ValueString() == targetCephConf
	for k, v := range m.Settings.Elements() {
		p := path.Root("settings").AtMapKey(k)
		if !configKeyRE.MatchString(k) {
			msg := fmt.Sprintf("%q is not a Ceph option name: use lower case and underscores, such as osd_memory_target", k)
			if nk := normalizeConfKey(strings.ToLower(k)); nk != k && configKeyRE.MatchString(nk) {
				msg += fmt.Sprintf(" (write %s)", nk)
			}
			resp.Diagnostics.AddAttributeError(p, "Invalid Ceph option name", msg)
			continue
		}
		s, ok := v.(types.String)
		if !ok || s.IsUnknown() || s.IsNull() {
			continue
		}
		if conf {
			if err := checkConfValue(s.ValueString()); err != nil {
				resp.Diagnostics.AddAttributeError(p, "Invalid value for ceph.conf", fmt.Sprintf("The value of %s %v.", k, err))
				continue
			}
		}
		if why := checkKnownValue(k, s.ValueString()); why != "" {
			resp.Diagnostics.AddAttributeError(p, "Invalid Ceph option value", why+".")
		}
	}
}

func (r *configResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	framework.PlanRequireNodeExec(r.PD, &resp.Diagnostics, configTypeName)
	r.checkRefs(ctx, req, resp)
	var plan configModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *configModel
	if !req.State.Raw.IsNull() {
		state = &configModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	pending := types.ListUnknown(types.StringType)
	switch {
	case plan.Apply.ValueString() == applyRolling:
		// Whatever is pending is restarted by the apply.
		pending = types.ListValueMust(types.StringType, []attr.Value{})
	case state != nil && state.Settings.Equal(plan.Settings) && !state.PendingRestart.IsNull():
		pending = state.PendingRestart
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("pending_restart"), pending)...)
	if plan.Apply.ValueString() != applyRolling {
		r.warnAtPlan(ctx, &plan, state, &resp.Diagnostics)
	}
	if state == nil || !state.Settings.Equal(plan.Settings) {
		// only for a change: a plan without one reads no file
		r.warnFileOverrides(ctx, &plan, &resp.Diagnostics)
	}
}

func (m *configModel) id() string { return m.Target.ValueString() + "/" + m.Who.ValueString() }

func (m *configModel) settings(ctx context.Context) (map[string]string, diag.Diagnostics) {
	out := map[string]string{}
	if m.Settings.IsNull() || m.Settings.IsUnknown() {
		return out, nil
	}
	diags := m.Settings.ElementsAs(ctx, &out, false)
	return out, diags
}

// ---- reading and writing the settings ----

// current returns what the section holds now: every key for config_db
// entries of exactly this section (no mask), or the section of ceph.conf.
func (r *configResource) current(ctx context.Context, m *configModel) (map[string]string, error) {
	node, who := m.Node.ValueString(), m.Who.ValueString()
	if m.Target.ValueString() == targetCephConf {
		f, err := r.readConf(ctx, node)
		if err != nil {
			return nil, err
		}
		sec, _ := f.section(who)
		return sec, nil
	}
	dump, err := cephCLI{ex: r.PD.NodeExec, node: node}.configDump(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range dump {
		if e.Section == who && e.Mask == "" {
			out[e.Name] = e.Value
		}
	}
	return out, nil
}

func (r *configResource) readConf(ctx context.Context, node string) (*confFile, error) {
	b, err := r.PD.NodeExec.ReadFile(ctx, node, cephConfPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist on node %s: Ceph is not initialised (pve_ceph_cluster creates it): %w", cephConfPath, node, err)
	}
	if err != nil {
		return nil, err
	}
	return parseConfFile(string(b)), nil
}

// same reports whether Ceph holding stored means the configured value.
func same(target, want, stored string) bool {
	if target == targetCephConf {
		return want == stored
	}
	return sameCephValue(want, stored)
}

// write sets the changed keys and removes the dropped ones.
func (r *configResource) write(ctx context.Context, m *configModel, set map[string]string, remove []string) error {
	node, who := m.Node.ValueString(), m.Who.ValueString()
	if m.Target.ValueString() == targetCephConf {
		return r.editConf(ctx, node, func(f *confFile) {
			for _, k := range sortedHosts(set) {
				f.set(who, k, set[k])
			}
			for _, k := range remove {
				f.remove(who, k)
			}
		})
	}
	cli := cephCLI{ex: r.PD.NodeExec, node: node}
	for _, k := range sortedHosts(set) {
		tflog.Info(ctx, "ceph config set", map[string]any{"who": who, "option": k})
		if _, err := cli.run(ctx, "config", "set", who, k, set[k]); err != nil {
			return err
		}
	}
	for _, k := range remove {
		tflog.Info(ctx, "ceph config rm", map[string]any{"who": who, "option": k})
		if _, err := cli.run(ctx, "config", "rm", who, k); err != nil {
			return err
		}
	}
	return nil
}

// editConf changes /etc/pve/ceph.conf under PVE's lock for it: the file is
// read, edited and replaced (a temporary file renamed over it) while
// /etc/pve/priv/lock/file-ceph_conf is held, so that no API write of PVE
// comes in between.
func (r *configResource) editConf(ctx context.Context, node string, edit func(*confFile)) error {
	unlockLocal := r.PD.NodeLocks.Lock(cephConfLockKey)
	defer unlockLocal()
	ex := r.PD.NodeExec
	deadline := time.Now().Add(cephConfLockWait)
	for {
		res, err := ex.Run(ctx, node, nodeexec.Cmd("mkdir", cephConfLockDir).AcceptExit(1))
		if err != nil {
			return fmt.Errorf("take PVE's ceph.conf lock: %w", err)
		}
		if res.ExitCode == 0 {
			break
		}
		if strings.Contains(string(res.Stderr), "No such file or directory") {
			// PVE creates its lock directory on first use.
			if _, err := ex.Run(ctx, node, nodeexec.Cmd("mkdir", "-p", "/etc/pve/priv/lock")); err != nil {
				return fmt.Errorf("take PVE's ceph.conf lock: %w", err)
			}
			continue
		}
		if !strings.Contains(string(res.Stderr), "File exists") {
			return fmt.Errorf("take PVE's ceph.conf lock on node %s: mkdir %s: %s", node, cephConfLockDir, strings.TrimSpace(string(res.Stderr)))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ceph.conf is locked: %s has existed for %s (PVE holds it while it writes the file; pmxcfs "+
				"releases a stale lock after 120 s)", cephConfLockDir, cephConfLockWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if _, err := ex.Run(cctx, node, nodeexec.Cmd("rmdir", cephConfLockDir)); err != nil {
			tflog.Warn(ctx, "could not release PVE's ceph.conf lock (pmxcfs releases it after 120 s)", map[string]any{"error": err.Error()})
		}
	}()
	f, err := r.readConf(ctx, node)
	if err != nil {
		return err
	}
	before := f.String()
	edit(f)
	after := f.String()
	if after == before {
		return nil
	}
	tflog.Info(ctx, "writing /etc/pve/ceph.conf", map[string]any{"node": node})
	return ex.WriteFile(ctx, node, nodeexec.File{Path: cephConfPath, Content: []byte(after), Mode: 0o640, Owner: "root", Group: "www-data"})
}

// ---- pending restarts ----

// pending maps a daemon to the ActiveEnterTimestamp its unit had when a
// change it reads only at start was made: it has restarted once that
// differs.
type pending map[string]string

func loadPending(ctx context.Context, get func(context.Context, string) ([]byte, diag.Diagnostics)) (pending, diag.Diagnostics) {
	b, diags := get(ctx, pendingKey)
	p := pending{}
	if len(b) > 0 {
		_ = json.Unmarshal(b, &p)
	}
	return p, diags
}

func (p pending) save(ctx context.Context, set func(context.Context, string, []byte) diag.Diagnostics) diag.Diagnostics {
	b, _ := json.Marshal(p)
	return set(ctx, pendingKey, b)
}

func (p pending) list() types.List {
	var vals []attr.Value
	if len(p) > 0 {
		for _, n := range p.names() {
			vals = append(vals, types.StringValue(n))
		}
	}
	return types.ListValueMust(types.StringType, vals)
}

func cephDaemonFromName(n string) cephDaemon {
	k, id, _ := strings.Cut(n, ".")
	return cephDaemon{Kind: k, ID: id}
}

// refresh drops daemons that restarted (or no longer exist) since they
// were recorded; it returns the others with their hosts.
func (r *configResource) refresh(ctx context.Context, node string, p pending) ([]cephDaemon, error) {
	if len(p) == 0 {
		return nil, nil
	}
	c, err := r.PD.NodeClient(ctx, node)
	if err != nil {
		return nil, err
	}
	topo, err := cephTopology(ctx, c, node)
	if err != nil {
		return nil, err
	}
	var known []cephDaemon
	for _, d := range topo {
		if _, ok := p[d.Name()]; ok {
			known = append(known, d)
		}
	}
	starts, err := daemonStarts(ctx, r.PD.NodeExec, known)
	if err != nil {
		return nil, err
	}
	keep := pending{}
	var left []cephDaemon
	for _, d := range known {
		if starts[d.Name()] == p[d.Name()] {
			keep[d.Name()] = p[d.Name()]
			left = append(left, d)
		}
	}
	for n := range p {
		delete(p, n)
	}
	for n, v := range keep {
		p[n] = v
	}
	return left, nil
}

// ---- create, read, update, delete ----

// restartKinds says whether daemons must restart to use a change of key in
// section who, and which kinds of daemons (nil: every kind).
func restartKinds(ctx context.Context, cli cephCLI, target, who, key string, cache map[string]*optionInfo) (bool, []string, error) {
	if strings.HasPrefix(who, "client") {
		return false, nil, nil // clients read it when they connect
	}
	info, ok := cache[key]
	if !ok {
		var err error
		if info, err = cli.optionHelp(ctx, key); err != nil {
			return false, nil, err
		}
		cache[key] = info
	}
	if target == targetConfigDB && (info == nil || info.observed()) {
		return false, nil, nil // the daemons apply it when the monitors send it
	}
	if info == nil || len(info.Services) == 0 {
		return true, nil, nil // ceph.conf: every daemon of the section reads it at start
	}
	var kinds []string
	for _, s := range info.Services {
		if containsString(daemonKinds, s) {
			kinds = append(kinds, s)
		}
	}
	return len(kinds) > 0, kinds, nil
}

// apply makes Ceph hold plan's settings (prior's dropped keys removed),
// records the daemons that must restart for them, and with
// rolling_restart restarts them. It returns whether anything was written.
func (r *configResource) apply(ctx context.Context, plan, prior *configModel, p pending, diags *diag.Diagnostics, action string) bool {
	id := plan.id()
	set, remove, ok := r.changes(ctx, plan, prior, diags, action)
	if !ok {
		return false
	}
	affected, ok := r.daemonsToRestart(ctx, plan, set, remove, diags, action)
	if !ok {
		return false
	}
	// When the affected units started, to tell later whether they restarted.
	starts, err := daemonStarts(ctx, r.PD.NodeExec, affected)
	if err != nil {
		framework.AddUnable(diags, action, "Ceph configuration", id, err)
		return false
	}
	if len(set) > 0 || len(remove) > 0 {
		if err := r.write(ctx, plan, set, remove); err != nil {
			framework.AddUnable(diags, action, "Ceph configuration", id, err)
			return true
		}
	}
	// Pending until it restarts after this change, whatever it restarted
	// for before.
	for _, d := range affected {
		p[d.Name()] = starts[d.Name()]
	}
	if len(affected) > 0 {
		tflog.Info(ctx, "Ceph daemons must restart to use the change", map[string]any{"daemons": daemonNames(affected)})
	}
	if plan.Apply.ValueString() != applyRolling {
		r.warnPending(ctx, plan, p.names(), diags)
		return true
	}
	if len(p) > 0 {
		r.rollingRestart(ctx, plan, p, diags, action)
	}
	return true
}

// changes are the keys to set (those Ceph does not hold with plan's
// value) and to remove (prior's keys that plan drops and Ceph holds).
func (r *configResource) changes(ctx context.Context, plan, prior *configModel, diags *diag.Diagnostics, action string) (map[string]string, []string, bool) {
	want, d := plan.settings(ctx)
	diags.Append(d...)
	old := map[string]string{}
	if prior != nil {
		old, d = prior.settings(ctx)
		diags.Append(d...)
	}
	if diags.HasError() {
		return nil, nil, false
	}
	cur, err := r.current(ctx, plan)
	if err != nil {
		framework.AddUnable(diags, action, "Ceph configuration", plan.id(), err)
		return nil, nil, false
	}
	set := map[string]string{}
	for k, v := range want {
		if c, ok := cur[k]; !ok || !same(plan.Target.ValueString(), v, c) {
			set[k] = v
		}
	}
	var remove []string
	for k := range old {
		if _, keep := want[k]; !keep {
			if _, ok := cur[k]; ok {
				remove = append(remove, k)
			}
		}
	}
	sort.Strings(remove)
	return set, remove, true
}

// daemonsToRestart are the daemons that must restart to use the change
// of the keys set and removed.
func (r *configResource) daemonsToRestart(ctx context.Context, plan *configModel, set map[string]string, remove []string,
	diags *diag.Diagnostics, action string,
) ([]cephDaemon, bool) {
	id := plan.id()
	node, who, target := plan.Node.ValueString(), plan.Who.ValueString(), plan.Target.ValueString()
	cli := cephCLI{ex: r.PD.NodeExec, node: node}
	var affected []cephDaemon
	cache := map[string]*optionInfo{}
	var topo []cephDaemon
	for _, k := range append(sortedHosts(set), remove...) {
		needs, kinds, err := restartKinds(ctx, cli, target, who, k, cache)
		if err != nil {
			framework.AddUnable(diags, action, "Ceph configuration", id, err)
			return nil, false
		}
		if !needs {
			continue
		}
		if topo == nil {
			c := r.NodeClient(ctx, node, diags)
			if c == nil {
				return nil, false
			}
			if topo, err = cephTopology(ctx, c, node); err != nil {
				framework.AddUnable(diags, action, "Ceph configuration", id, err)
				return nil, false
			}
		}
		for _, d := range affectedDaemons(topo, who, kinds) {
			if !containsDaemon(affected, d) {
				affected = append(affected, d)
			}
		}
	}
	return affected, true
}

// rollingRestart restarts the daemons of p that have not restarted since
// the change, one at a time, and drops those that did from p.
func (r *configResource) rollingRestart(ctx context.Context, plan *configModel, p pending, diags *diag.Diagnostics, action string) {
	id, node := plan.id(), plan.Node.ValueString()
	left, err := r.refresh(ctx, node, p)
	if err != nil {
		framework.AddUnable(diags, action, "Ceph configuration", id, err)
		return
	}
	if len(left) == 0 {
		return
	}
	unlock := r.PD.NodeLocks.Lock(rollingRestartLock)
	tflog.Info(ctx, "Ceph rolling restart: starting", map[string]any{"daemons": daemonNames(left)})
	restartStart := time.Now()
	steps, rerr := rollingRestartReport(ctx, r.PD.NodeExec, node, left, plan.WaitForActiveClean.ValueBool())
	unlock()
	addRestartReport(diags, id, steps, time.Since(restartStart), rerr)
	// Whatever restarted is no longer pending, whether or not all did.
	if _, err := r.refresh(context.WithoutCancel(ctx), node, p); err != nil {
		rerr = errors.Join(rerr, err)
	}
	if rerr != nil {
		framework.AddUnable(diags, action, "Ceph configuration", id, fmt.Errorf(
			"the settings are applied, but the rolling restart stopped (still to restart: %s; the next apply continues): %w",
			strings.Join(p.names(), ", "), rerr))
		return
	}
	tflog.Info(ctx, "Ceph rolling restart: done")
}

func containsDaemon(ds []cephDaemon, d cephDaemon) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

func (p pending) names() []string {
	ds := make([]cephDaemon, 0, len(p))
	for n := range p {
		ds = append(ds, cephDaemonFromName(n))
	}
	if len(ds) == 0 {
		return []string{"none"}
	}
	sortDaemons(ds)
	return daemonNames(ds)
}

// store sets m's settings from what Ceph holds: the configured spelling of
// a value Ceph stores normalized, keys that are gone dropped; with
// adoptAll (import) every key of the section.
func storeSettings(ctx context.Context, m *configModel, cur map[string]string, adoptAll bool) diag.Diagnostics {
	configured, diags := m.settings(ctx)
	out := map[string]attr.Value{}
	for k, v := range cur {
		if c, ok := configured[k]; ok && same(m.Target.ValueString(), c, v) {
			out[k] = types.StringValue(c)
		} else if ok || adoptAll {
			out[k] = types.StringValue(v)
		}
	}
	m.Settings = types.MapValueMust(types.StringType, out)
	return diags
}

// finish stores what Ceph holds after an apply. When the apply failed
// (verify false), keys of the prior state stay managed as well, so that a
// key the failed apply did not get to remove is still removed later.
func (r *configResource) finish(ctx context.Context, m, prior *configModel, p pending, verify bool, diags *diag.Diagnostics, action string) {
	cur, err := r.current(ctx, m)
	if err != nil {
		framework.AddUnable(diags, action, "Ceph configuration", m.id(), err)
		return
	}
	if verify {
		want, d := m.settings(ctx)
		diags.Append(d...)
		for _, k := range sortedHosts(want) {
			if c, ok := cur[k]; !ok || !same(m.Target.ValueString(), want[k], c) {
				framework.AddUnable(diags, action, "Ceph configuration", m.id(), fmt.Errorf(
					"after setting %s = %q, Ceph reports %q for it", k, want[k], c))
			}
		}
	}
	if !verify && prior != nil {
		merged, d := prior.settings(ctx)
		diags.Append(d...)
		want, d := m.settings(ctx)
		diags.Append(d...)
		for k, v := range want {
			merged[k] = v
		}
		vals := map[string]attr.Value{}
		for k, v := range merged {
			vals[k] = types.StringValue(v)
		}
		m.Settings = types.MapValueMust(types.StringType, vals)
	}
	diags.Append(storeSettings(ctx, m, cur, false)...)
	m.ID = types.StringValue(m.id())
	m.PendingRestart = p.list()
}

func (r *configResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan configModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, configTypeName) {
		return
	}
	to, d := plan.Timeouts.Create(ctx, defaultRestartTO)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	p := pending{}
	wrote := r.apply(ctx, &plan, nil, p, &resp.Diagnostics, "Create")
	if resp.Diagnostics.HasError() && !wrote {
		return
	}
	r.finish(context.WithoutCancel(ctx), &plan, nil, p, !resp.Diagnostics.HasError(), &resp.Diagnostics, "Create")
	r.warnFileOverrides(ctx, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(p.save(ctx, resp.Private.SetKey)...)
}

func (r *configResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state configModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, configTypeName) {
		return
	}
	to, d := plan.Timeouts.Update(ctx, defaultRestartTO)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	p, d := loadPending(ctx, req.Private.GetKey)
	resp.Diagnostics.Append(d...)
	wrote := r.apply(ctx, &plan, &state, p, &resp.Diagnostics, "Update")
	if resp.Diagnostics.HasError() && !wrote {
		return
	}
	r.finish(context.WithoutCancel(ctx), &plan, &state, p, !resp.Diagnostics.HasError(), &resp.Diagnostics, "Update")
	if !plan.Settings.Equal(state.Settings) {
		r.warnFileOverrides(ctx, &plan, &resp.Diagnostics)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(p.save(ctx, resp.Private.SetKey)...)
}

func (r *configResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state configModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, configTypeName) {
		return
	}
	if state.Target.IsNull() {
		state.Target = types.StringValue(targetConfigDB)
	}
	if state.Apply.IsNull() {
		state.Apply = types.StringValue(applyNone)
	}
	if state.WaitForActiveClean.IsNull() {
		state.WaitForActiveClean = types.BoolValue(false)
	}
	cur, err := r.current(ctx, &state)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "RADOS object not found") {
			tflog.Warn(ctx, "Ceph is gone: removing its configuration from the state", map[string]any{"error": err.Error()})
			resp.State.RemoveResource(ctx)
			return
		}
		framework.AddUnable(&resp.Diagnostics, "Read", "Ceph configuration", state.id(), err)
		return
	}
	resp.Diagnostics.Append(storeSettings(ctx, &state, cur, state.Settings.IsNull())...)
	p, d := loadPending(ctx, req.Private.GetKey)
	resp.Diagnostics.Append(d...)
	if _, err := r.refresh(ctx, state.Node.ValueString(), p); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "Ceph configuration", state.id(), err)
		return
	}
	state.ID = types.StringValue(state.id())
	state.PendingRestart = p.list()
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(p.save(ctx, resp.Private.SetKey)...)
}

// Delete removes the managed keys. Daemons that read them only at start
// keep using them until they restart.
func (r *configResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state configModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, configTypeName) {
		return
	}
	cur, err := r.current(ctx, &state)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph configuration", state.id(), err)
		return
	}
	managed, d := state.settings(ctx)
	resp.Diagnostics.Append(d...)
	var remove []string
	for k := range managed {
		if _, ok := cur[k]; ok {
			remove = append(remove, k)
		}
	}
	sort.Strings(remove)
	if len(remove) == 0 {
		return
	}
	if err := r.write(ctx, &state, nil, remove); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph configuration", state.id(), err)
	}
}

// ImportState takes `<node>/<target>/<who>`, such as z2g4a/config_db/osd;
// every key of the section becomes managed, or with the option `keys`
// (comma-separated) only those: [global] of ceph.conf also holds fsid and
// mon_host, which PVE writes. The options `apply` and
// `wait_for_active_clean` after `?` record the provider's own settings,
// which Ceph cannot report, so that a configuration setting them plans no
// update after the import (issue #12).
func (r *configResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, opts, err := framework.SplitImportOptions(req.ID, map[string][]string{
		"apply":                 {applyNone, applyRolling},
		"wait_for_active_clean": {"true", "false"},
		"keys":                  nil,
	})
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import %s %q: %v.", configTypeName, req.ID, err))
		return
	}
	parts := strings.Split(id, "/")
	if len(parts) != 3 || !framework.IsNodeName(parts[0]) || (parts[1] != targetConfigDB && parts[1] != targetCephConf) ||
		!configWhoRE.MatchString(parts[2]) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf(
			"Import %s as <node>/<target>/<who>, such as z2g4a/config_db/osd or z2g4a/ceph_conf/client, optionally followed by "+
				"?apply=rolling_restart (and &wait_for_active_clean=true, &keys=<option>,<option>); got %q.", configTypeName, req.ID))
		return
	}
	for attrName, v := range map[string]string{"node": parts[0], "target": parts[1], "who": parts[2], "id": parts[1] + "/" + parts[2]} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attrName), v)...)
	}
	if a, ok := opts["apply"]; ok {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("apply"), a)...)
	}
	if w, ok := opts["wait_for_active_clean"]; ok {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("wait_for_active_clean"), w == "true")...)
	}
	if ks, ok := opts["keys"]; ok {
		// Managed keys with no value yet: Read fills in what Ceph holds
		// and drops the ones it does not have.
		keys := map[string]attr.Value{}
		for _, k := range strings.Split(ks, ",") {
			if !configKeyRE.MatchString(k) {
				resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf(
					"Import %s %q: keys=%q: %q is not a Ceph option name (lower case and underscores, such as osd_memory_target; "+
						"separate names with commas).", configTypeName, req.ID, ks, k))
				return
			}
			keys[k] = types.StringValue("")
		}
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("settings"), types.MapValueMust(types.StringType, keys))...)
	}
}
