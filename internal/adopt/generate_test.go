package adopt

import (
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func str(s string) tftypes.Value   { return tftypes.NewValue(tftypes.String, s) }
func num(n int64) tftypes.Value    { return tftypes.NewValue(tftypes.Number, new(big.Float).SetInt64(n)) }
func nullStr() tftypes.Value       { return tftypes.NewValue(tftypes.String, nil) }
func boolean(b bool) tftypes.Value { return tftypes.NewValue(tftypes.Bool, b) }

// testRun is a run with no source, for the generator alone.
func testRun() *run {
	return &run{res: &Result{Files: map[string]*hclwrite.File{}}, byAddr: map[string]*group{}}
}

func addGroup(r *run, g Group, specs map[string]*attrSpec, inst ...*instance) {
	if g.Local == "" {
		g.Local = strings.TrimPrefix(g.Type, "pve_") + "_" + g.Name
	}
	grp := &group{Group: g, specs: specs, instances: inst}
	r.groups = append(r.groups, grp)
	r.byAddr[grp.address()] = grp
}

func render(t *testing.T, r *run, file string) string {
	t.Helper()
	r.generate()
	out := string(r.res.Render()[file])
	if _, diags := hclsyntax.ParseConfig([]byte(out), file, hcl.InitialPos); diags.HasErrors() {
		t.Fatalf("generated %s does not parse: %s\n%s", file, diags.Error(), out)
	}
	return out
}

// A group keyed by node: node = each.key, values every instance shares in
// the block, the others from the locals map (null where an instance has
// none), computed-only attributes, ids and values at their default left
// out, an import block per key.
func TestGenerateForEachGroup(t *testing.T) {
	def := str("none")
	specs := map[string]*attrSpec{
		"id":      {configurable: false},
		"node":    {configurable: true},
		"profile": {configurable: true},
		"mode":    {configurable: true, def: &def},
		"mtu":     {configurable: true},
		"status":  {configurable: false},
	}
	r := testRun()
	addGroup(r, Group{File: "node.tf", Type: "pve_node_x", Name: "lab", Comment: "What x is."}, specs,
		&instance{key: "a", id: "a", state: State{"id": str("a"), "node": str("a"), "profile": str("p"), "mode": str("none"), "mtu": num(9000), "status": str("up")}},
		&instance{key: "b", id: "b", state: State{"id": str("b"), "node": str("b"), "profile": str("p"), "mode": str("none"), "mtu": tftypes.NewValue(tftypes.Number, nil), "status": str("up")}},
	)
	out := render(t, r, "node.tf")
	for _, want := range []string{
		"# What x is.\nresource \"pve_node_x\" \"lab\" {\n  for_each = local.node_x_lab\n",
		"  node    = each.key\n",
		"  mtu     = each.value.mtu\n",
		"  profile = \"p\"\n",
		"node_x_lab = {\n",
		"mtu = 9000",
		"mtu = null",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("node.tf lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"status", "mode", "id ="} {
		if strings.Contains(out, unwanted) {
			t.Errorf("node.tf has %q (computed, id or default):\n%s", unwanted, out)
		}
	}
	imports := string(r.res.Render()["imports.tf"])
	for _, want := range []string{"to = pve_node_x.lab[\"a\"]\n  id = \"a\"", "to = pve_node_x.lab[\"b\"]\n  id = \"b\""} {
		if !strings.Contains(imports, want) {
			t.Errorf("imports.tf lacks %q:\n%s", want, imports)
		}
	}
}

// Instances that differ only in their key need no locals: for_each over
// the keys.
func TestGenerateForEachWithoutLocals(t *testing.T) {
	specs := map[string]*attrSpec{"node": {configurable: true}, "version": {configurable: true}}
	r := testRun()
	addGroup(r, Group{File: "ceph.tf", Type: "pve_ceph_install", Name: "lab"}, specs,
		&instance{key: "a", id: "a", state: State{"node": str("a"), "version": str("squid")}},
		&instance{key: "b", id: "b", state: State{"node": str("b"), "version": str("squid")}},
	)
	out := render(t, r, "ceph.tf")
	if !strings.Contains(out, `for_each = toset(["a", "b"])`) || strings.Contains(out, "locals") {
		t.Errorf("want for_each over the keys and no locals:\n%s", out)
	}
}

// A single object is a plain block; a multi-line value (a PEM, a unit
// file) is a heredoc with template sequences escaped; a sensitive value is
// a variable, never a literal; depends_on names only generated groups.
func TestGenerateSingleHeredocSensitive(t *testing.T) {
	specs := map[string]*attrSpec{"content": {configurable: true}, "token": {configurable: true, sensitive: true}, "enabled": {configurable: true}}
	r := testRun()
	addGroup(r, Group{File: "node.tf", Type: "pve_cluster", Name: "lab"}, map[string]*attrSpec{"name": {configurable: true}},
		&instance{id: "z", state: State{"name": str("z")}})
	addGroup(r, Group{File: "node.tf", Type: "pve_node_file", Name: "conf", DependsOn: []string{"pve_cluster.lab", "pve_ceph_cluster.lab"}}, specs,
		&instance{id: "n:/etc/x", state: State{"content": str("[A]\nx = ${HOME}\n"), "token": str("s3cret"), "enabled": boolean(true)}})
	out := render(t, r, "node.tf")
	for _, want := range []string{`content += <<EOT\n\[A\]\nx = \$\$\{HOME\}\nEOT\n`, `token += var\.node_file_conf_token\n`, `depends_on += \[pve_cluster\.lab\]\n`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("node.tf lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Errorf("a sensitive value was written:\n%s", out)
	}
	main := string(r.res.Render()["main.tf"])
	if !regexp.MustCompile(`variable "node_file_conf_token" \{[^}]*type += string\n +sensitive += true`).MatchString(main) {
		t.Errorf("main.tf lacks the sensitive variable:\n%s", main)
	}
	_ = nullStr
}

// Nested attributes: only what a configuration may set, not at defaults.
func TestGenerateNestedAttributes(t *testing.T) {
	def := boolean(false)
	nested := map[string]*attrSpec{"cidr": {configurable: true}, "active": {configurable: false}, "autostart": {configurable: true, def: &def}}
	specs := map[string]*attrSpec{"interfaces": {configurable: true, nested: nested}}
	objT := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"cidr": tftypes.String, "active": tftypes.Bool, "autostart": tftypes.Bool}}
	ifaces := tftypes.NewValue(tftypes.Map{ElementType: objT}, map[string]tftypes.Value{
		"bridge0.60": tftypes.NewValue(objT, map[string]tftypes.Value{"cidr": str("10.0.0.1/24"), "active": boolean(true), "autostart": boolean(false)}),
	})
	r := testRun()
	addGroup(r, Group{File: "network.tf", Type: "pve_node_network_config", Name: "lab"}, specs, &instance{id: "n", state: State{"interfaces": ifaces}})
	out := render(t, r, "network.tf")
	if !strings.Contains(out, `"bridge0.60" = {`) || !strings.Contains(out, `cidr = "10.0.0.1/24"`) {
		t.Errorf("nested map not written:\n%s", out)
	}
	if strings.Contains(out, "active") || strings.Contains(out, "autostart") {
		t.Errorf("computed or default nested attribute written:\n%s", out)
	}
}

func TestAllowSSHReadsOnly(t *testing.T) {
	for _, argv := range [][]string{{"cat", "--", "/etc/x"}, {"systemctl", "show", "-p", "DropInPaths", "x.service"}, {"tuned-adm", "active"}, {"ethtool", "-g", "eth0"}, {"ceph", "config", "dump", "--format", "json"}} {
		if err := allowSSH(argv); err != nil {
			t.Errorf("%v refused: %v", argv, err)
		}
	}
	for _, argv := range [][]string{{"rm", "-f", "/etc/x"}, {"install", "-m", "0644", "/dev/stdin", "/etc/x"}, {"systemctl", "restart", "x"}, {"systemctl", "--now", "enable", "x"}, {"tuned-adm", "profile", "x"}, {"ethtool", "-G", "eth0", "rx", "1"}, {"ceph", "config", "set", "osd", "a", "b"}, {"ceph", "osd", "out", "1"}, {"mv", "a", "b"}, {}} {
		if err := allowSSH(argv); err == nil {
			t.Errorf("%v allowed", argv)
		}
	}
}
