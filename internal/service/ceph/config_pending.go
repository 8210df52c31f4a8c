package ceph

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// Pending restarts are planned work (issue #13): with rolling_restart the
// plan sets pending_restart to empty, so a non-empty list in the state is
// an update that restarts them; with apply = "none" nothing will restart
// them, and every plan and apply says so in a warning rather than "No
// changes".

// warnPending adds the warning for daemons that still wait for a restart
// to use m's settings while apply is none. names are the waiting daemons.
func (r *configResource) warnPending(ctx context.Context, m *configModel, names []string, diags *diag.Diagnostics) {
	if len(names) == 0 || (len(names) == 1 && names[0] == "none") {
		return
	}
	hosts := map[string]string{}
	if c, err := r.PD.NodeClient(ctx, m.Node.ValueString()); err == nil {
		if topo, err := cephTopology(ctx, c, m.Node.ValueString()); err == nil {
			hosts = daemonHosts(topo)
		} else {
			tflog.Debug(ctx, "listing the Ceph daemons for the restart advice", map[string]any{"error": err.Error()})
		}
	}
	diags.AddAttributeWarning(path.Root("apply"), fmt.Sprintf("%d Ceph daemon(s) wait for a restart: %s %s", len(names), configTypeName, m.id()),
		pendingAdvice(m.id(), names, hosts))
}

func daemonHosts(topo []cephDaemon) map[string]string {
	hosts := make(map[string]string, len(topo))
	for _, d := range topo {
		hosts[d.Name()] = d.Host
	}
	return hosts
}

// warnAtPlan is the plan's part of pending work with apply = "none": the
// daemons that already wait (pending_restart in state) and those this
// plan's change of settings will leave waiting, judged as the apply judges
// them (restartKinds: `ceph config help` per changed key, the daemons from
// PVE's lists), with the reads cached per command. Without it the plan
// said "1 to change" and only the apply warned. A change that cannot be
// judged now (unknown settings, Ceph not readable yet) warns only for what
// already waits; the apply warns for the rest.
func (r *configResource) warnAtPlan(ctx context.Context, plan, state *configModel, diags *diag.Diagnostics) {
	var waiting []string
	if state != nil {
		waiting = listStrings(state)
	}
	changed := r.restartingAtPlan(ctx, plan, state)
	if len(changed.daemons) == 0 {
		r.warnPending(ctx, plan, waiting, diags)
		return
	}
	all := changed.daemons
	for _, n := range waiting {
		if n != "none" && !slices.Contains(daemonNames(all), n) {
			all = append(all, cephDaemonFromName(n))
		}
	}
	sortDaemons(all)
	names := daemonNames(all)
	diags.AddAttributeWarning(path.Root("apply"),
		fmt.Sprintf("%d Ceph daemon(s) will wait for a restart after this apply: %s %s", len(names), configTypeName, plan.id()),
		fmt.Sprintf("This plan changes %s, which Ceph reads only when a daemon starts, and apply = \"none\" restarts nothing. After the apply, %s",
			framework.Quoted(changed.keys), pendingAdvice(plan.id(), names, daemonHosts(changed.topo))))
}

// plannedRestart is what a planned change of settings will leave waiting.
type plannedRestart struct {
	keys    []string // the changed keys that need a restart
	daemons []cephDaemon
	topo    []cephDaemon
}

// restartingAtPlan says which daemons the plan's settings change will
// leave waiting for a restart; empty when nothing can be judged.
func (r *configResource) restartingAtPlan(ctx context.Context, plan, state *configModel) plannedRestart {
	var out plannedRestart
	pd := r.PD
	if pd == nil || pd.Client == nil || pd.NodeExec == nil || plan.Node.IsUnknown() || plan.Settings.IsUnknown() ||
		plan.Who.IsUnknown() || plan.Target.IsUnknown() {
		return out
	}
	want, d := plan.settings(ctx)
	if d.HasError() {
		return out
	}
	old := map[string]string{}
	if state != nil {
		if old, d = state.settings(ctx); d.HasError() {
			return out
		}
	}
	var keys []string
	for k, v := range want {
		if o, ok := old[k]; !ok || o != v {
			keys = append(keys, k)
		}
	}
	for k := range old {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return out
	}
	sort.Strings(keys)
	node, who, target := plan.Node.ValueString(), plan.Who.ValueString(), plan.Target.ValueString()
	cli := cephCLI{ex: pd.NodeExec, node: node}
	var kindsNeeded [][]string
	for _, k := range keys {
		info, err := framework.CachedRead(ctx, pd.Reads, "ceph/config-help/"+node+"/"+k, func(ctx context.Context) (*optionInfo, error) {
			return cli.optionHelp(ctx, k)
		})
		if err != nil {
			tflog.Debug(ctx, "Ceph option help not readable at plan; restarts are judged at apply", map[string]any{"key": k, "error": err.Error()})
			return plannedRestart{}
		}
		needs, kinds, _ := restartKinds(ctx, cli, target, who, k, map[string]*optionInfo{k: info})
		if needs {
			out.keys = append(out.keys, k)
			kindsNeeded = append(kindsNeeded, kinds)
		}
	}
	if len(out.keys) == 0 {
		return out
	}
	topo, err := framework.CachedRead(ctx, pd.Reads, "ceph/topology/"+node, func(ctx context.Context) ([]cephDaemon, error) {
		c, err := pd.NodeClient(ctx, node)
		if err != nil {
			return nil, err
		}
		return cephTopology(ctx, c, node)
	})
	if err != nil {
		tflog.Debug(ctx, "Ceph daemons not readable at plan; restarts are judged at apply", map[string]any{"node": node, "error": err.Error()})
		return plannedRestart{}
	}
	out.topo = topo
	for _, kinds := range kindsNeeded {
		for _, d := range affectedDaemons(topo, who, kinds) {
			if !containsDaemon(out.daemons, d) {
				out.daemons = append(out.daemons, d)
			}
		}
	}
	return out
}

// pendingAdvice says which daemons wait and how to restart them: the
// provider with rolling_restart, or by hand one host at a time with the
// commands the provider's own restart runs.
func pendingAdvice(id string, names []string, hosts map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s still run without settings of %s that Ceph reads only when a daemon starts (pending_restart). "+
		"With apply = \"none\" the provider does not restart them. Either set apply = \"rolling_restart\" and apply again "+
		"(the provider restarts them one host at a time behind ok-to-stop, with noout on that host only), or restart them "+
		"yourself, one host at a time, waiting until each host's daemons are back before the next:",
		strings.Join(names, ", "), id)
	type group struct {
		host string
		osds []string
	}
	var groups []*group
	byHost := map[string]*group{}
	for _, n := range names {
		d := cephDaemonFromName(n)
		host := hosts[n]
		where := host
		if where == "" {
			where = "the node that runs " + n
		}
		if d.Kind != "osd" {
			fmt.Fprintf(&b, "\n  - on %s: systemctl restart %s", where, d.Unit())
			if d.Kind == "mon" {
				b.WriteString(" (after `ceph mon ok-to-stop " + d.ID + "`)")
			}
			continue
		}
		g := byHost[host]
		if g == nil {
			g = &group{host: host}
			byHost[host] = g
			groups = append(groups, g)
		}
		g.osds = append(g.osds, d.ID)
	}
	for _, g := range groups {
		units := make([]string, len(g.osds))
		for i, id := range g.osds {
			units[i] = "ceph-osd@" + id
		}
		if g.host == "" {
			fmt.Fprintf(&b, "\n  - on the node of each: ceph osd ok-to-stop %s && systemctl restart %s",
				strings.Join(g.osds, " "), strings.Join(units, " "))
			continue
		}
		fmt.Fprintf(&b, "\n  - on %s: ceph osd ok-to-stop %s && ceph osd set-group noout %s && systemctl restart %s; "+
			"once `ceph osd stat` shows them up: ceph osd unset-group noout %s",
			g.host, strings.Join(g.osds, " "), g.host, strings.Join(units, " "), g.host)
	}
	return b.String()
}

// listStrings returns a list attribute's strings.
func listStrings(m *configModel) []string {
	if m.PendingRestart.IsNull() || m.PendingRestart.IsUnknown() {
		return nil
	}
	var out []string
	for _, v := range m.PendingRestart.Elements() {
		if s, ok := v.(types.String); ok && s.ValueString() != "" {
			out = append(out, s.ValueString())
		}
	}
	return out
}
