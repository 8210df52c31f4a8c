package ceph

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// Ceph takes a daemon's options from, in rising precedence, the compiled
// defaults, the monitors' configuration database, the local ceph.conf, the
// environment, the command line and runtime overrides. On PVE every daemon
// reads /etc/pve/ceph.conf, so a key set there for a daemon's section (its
// own, its type's or global) hides the database's value for that daemon:
// `ceph config set` succeeds and nothing changes. Real Ceph 16 (make
// testlab) shows it in `ceph config show`: source "file", not "mon".

// fileSectionOverlaps reports whether the ceph.conf section sec holds
// options for some daemon that the database section who configures.
func fileSectionOverlaps(sec, who string) bool {
	if sec == "global" || who == "global" {
		return true
	}
	st, sid, _ := strings.Cut(sec, ".")
	wt, wid, _ := strings.Cut(who, ".")
	return st == wt && (sid == "" || wid == "" || sid == wid)
}

// fileOverride is one key of a config_db resource that ceph.conf also sets.
type fileOverride struct {
	key, section, value string
}

// fileOverrides lists, per configured key, the ceph.conf sections that set
// it for daemons of who with another value.
func fileOverrides(f *confFile, who string, want map[string]string) []fileOverride {
	var out []fileOverride
	var sections []string
	seen := map[string]bool{}
	for _, l := range f.lines {
		if l.header && !seen[l.section] {
			seen[l.section] = true
			sections = append(sections, l.section)
		}
	}
	for _, k := range sortedHosts(want) {
		for _, sec := range sections {
			if !fileSectionOverlaps(sec, who) {
				continue
			}
			vals, _ := f.section(sec)
			for fk, fv := range vals {
				if normalizeConfKey(fk) == normalizeConfKey(k) && !sameCephValue(want[k], fv) {
					out = append(out, fileOverride{key: k, section: sec, value: fv})
				}
			}
		}
	}
	return out
}

// warnFileOverrides warns about each setting of a config_db resource that
// ceph.conf overrides, at plan and after apply: the database takes the
// value, the daemons keep the file's.
func (r *configResource) warnFileOverrides(ctx context.Context, m *configModel, diags *diag.Diagnostics) {
	if m.Target.ValueString() != targetConfigDB || m.Node.IsUnknown() || m.Who.IsUnknown() || m.Settings.IsUnknown() {
		return
	}
	want, d := m.settings(ctx)
	if d.HasError() || len(want) == 0 {
		return
	}
	f, err := r.readConf(ctx, m.Node.ValueString())
	if err != nil {
		tflog.Debug(ctx, "reading ceph.conf for keys that override the database", map[string]any{"error": err.Error()})
		return
	}
	who := m.Who.ValueString()
	for _, o := range fileOverrides(f, who, want) {
		diags.AddAttributeWarning(path.Root("settings").AtMapKey(o.key),
			fmt.Sprintf("ceph.conf overrides %s for %s", o.key, who),
			fmt.Sprintf("%s sets %s = %s in [%s]. A value in ceph.conf takes precedence over the configuration database for every "+
				"daemon that reads the file, so those daemons keep %q and not the database's %q (`ceph config show` reports its source "+
				"as \"file\"). Remove the line from ceph.conf, or manage it there with a pve_ceph_config with target = \"ceph_conf\" "+
				"and who = %q.", cephConfPath, o.key, o.value, o.section, o.value, want[o.key], o.section))
	}
}
