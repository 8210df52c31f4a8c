package ceph

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
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
			for _, d := range topo {
				hosts[d.Name()] = d.Host
			}
		} else {
			tflog.Debug(ctx, "listing the Ceph daemons for the restart advice", map[string]any{"error": err.Error()})
		}
	}
	diags.AddAttributeWarning(path.Root("apply"), fmt.Sprintf("%d Ceph daemon(s) wait for a restart: %s %s", len(names), configTypeName, m.id()),
		pendingAdvice(m.id(), names, hosts))
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
