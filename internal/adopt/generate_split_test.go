package adopt

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A Split attribute (a map of objects) is written in the block as the
// structure every instance shares, the values that differ as references
// into the locals map, which holds only those; keys that are not
// identifiers are indexed.
func TestGenerateSplitNestedMap(t *testing.T) {
	nested := map[string]*attrSpec{"cidr": {configurable: true}, "type": {configurable: true}}
	specs := map[string]*attrSpec{"node": {configurable: true}, "interfaces": {configurable: true, nested: nested}}
	objT := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"cidr": tftypes.String, "type": tftypes.String}}
	ifaces := func(host string) tftypes.Value {
		return tftypes.NewValue(tftypes.Map{ElementType: objT}, map[string]tftypes.Value{
			"bond0":      tftypes.NewValue(objT, map[string]tftypes.Value{"cidr": nullStr(), "type": str("bond")}),
			"bridge0.60": tftypes.NewValue(objT, map[string]tftypes.Value{"cidr": str("10.0.0." + host + "/24"), "type": str("vlan")}),
		})
	}
	r := testRun()
	addGroup(r, Group{File: "network.tf", Type: "pve_node_network_config", Name: "lab", Split: []string{"interfaces"}}, specs,
		&instance{key: "a", id: "a", state: State{"node": str("a"), "interfaces": ifaces("1")}},
		&instance{key: "b", id: "b", state: State{"node": str("b"), "interfaces": ifaces("2")}},
	)
	out := render(t, r, "network.tf")
	for _, want := range []string{
		`cidr = each.value.interfaces["bridge0.60"].cidr`,
		`type = "vlan"`,
		`bond0 = { type = "bond" }`,
		`"bridge0.60" = { cidr = "10.0.0.1/24" }`,
		`cidr = "10.0.0.2/24"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("network.tf lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, `type = "vlan"`) != 1 || strings.Contains(out, "interfaces = each.value.interfaces") {
		t.Errorf("shared values repeated per instance, or the whole map from the locals:\n%s", out)
	}
}

// Where the instances' keys differ the whole value comes from the locals
// map, as without Split.
func TestGenerateSplitDifferentKeys(t *testing.T) {
	specs := map[string]*attrSpec{"node": {configurable: true}, "options": {configurable: true}}
	mt := tftypes.Map{ElementType: tftypes.String}
	r := testRun()
	addGroup(r, Group{File: "x.tf", Type: "pve_x", Name: "lab", Split: []string{"options"}}, specs,
		&instance{key: "a", id: "a", state: State{"node": str("a"), "options": tftypes.NewValue(mt, map[string]tftypes.Value{"k": str("1")})}},
		&instance{key: "b", id: "b", state: State{"node": str("b"), "options": tftypes.NewValue(mt, map[string]tftypes.Value{"j": str("1")})}},
	)
	out := render(t, r, "x.tf")
	if !strings.Contains(out, "options = each.value.options") {
		t.Errorf("want the whole map from the locals:\n%s", out)
	}
}

// An instance at an attribute's default has no value for it; where the
// attribute varies, its locals entry gives the default, not null.
func TestGenerateLocalsDefaultNotNull(t *testing.T) {
	def := boolean(true)
	specs := map[string]*attrSpec{"node": {configurable: true}, "enabled": {configurable: true, def: &def}}
	r := testRun()
	addGroup(r, Group{File: "x.tf", Type: "pve_x", Name: "lab"}, specs,
		&instance{key: "a", id: "a", state: State{"node": str("a"), "enabled": boolean(true)}},
		&instance{key: "b", id: "b", state: State{"node": str("b"), "enabled": boolean(false)}},
	)
	out := render(t, r, "x.tf")
	if !strings.Contains(out, "enabled = true") || !strings.Contains(out, "enabled = false") || strings.Contains(out, "null") {
		t.Errorf("want enabled = true and false in the locals:\n%s", out)
	}
}

// A list of objects is one element per line, small ones inline.
func TestGenerateObjectList(t *testing.T) {
	objT := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"address": tftypes.String}}
	lt := tftypes.List{ElementType: objT}
	links := tftypes.NewValue(lt, []tftypes.Value{
		tftypes.NewValue(objT, map[string]tftypes.Value{"address": str("10.0.0.1")}),
		tftypes.NewValue(objT, map[string]tftypes.Value{"address": str("10.0.1.1")}),
	})
	r := testRun()
	addGroup(r, Group{File: "c.tf", Type: "pve_cluster", Name: "lab"}, map[string]*attrSpec{"links": {configurable: true}},
		&instance{id: "z", state: State{"links": links}})
	out := render(t, r, "c.tf")
	want := "links = [\n    { address = \"10.0.0.1\" },\n    { address = \"10.0.1.1\" },\n  ]"
	if !strings.Contains(out, want) {
		t.Errorf("c.tf lacks\n%s\n:\n%s", want, out)
	}
}

// An object of one plain value is written on one line.
func TestGenerateSingleKeyObjectInline(t *testing.T) {
	mt := tftypes.Map{ElementType: tftypes.String}
	r := testRun()
	addGroup(r, Group{File: "x.tf", Type: "pve_x", Name: "lab"}, map[string]*attrSpec{"options": {configurable: true}},
		&instance{id: "x", state: State{"options": tftypes.NewValue(mt, map[string]tftypes.Value{"mkdir": str("0")})}})
	if out := render(t, r, "x.tf"); !strings.Contains(out, `options = { mkdir = "0" }`) {
		t.Errorf("want the object on one line:\n%s", out)
	}
}
