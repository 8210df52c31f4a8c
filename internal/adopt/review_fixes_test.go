package adopt

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Adopted without SSH (-no-ssh), main.tf has no ssh block and no ssh_*
// variable: a block defaulting to ~/.ssh/id_ed25519 would fail the first
// plan wherever that file is missing.
func TestMainTFWithoutSSH(t *testing.T) {
	r := testRun()
	r.noSSH = true
	r.opts.Provider = ProviderSettings{Endpoint: "https://pve1:8006"}
	r.writeMain()
	main := string(r.res.Files["main.tf"].Bytes())
	if _, diags := hclsyntax.ParseConfig([]byte(main), "main.tf", hcl.InitialPos); diags.HasErrors() {
		t.Fatalf("main.tf does not parse: %v\n%s", diags, main)
	}
	for _, absent := range []string{"ssh", "id_ed25519", "known_hosts"} {
		if strings.Contains(main, absent) {
			t.Errorf("main.tf of an adoption without SSH holds %q:\n%s", absent, main)
		}
	}
	for _, want := range []string{"var.endpoint", "var.password"} {
		if !strings.Contains(main, want) {
			t.Errorf("main.tf lacks %q:\n%s", want, main)
		}
	}

	r = testRun()
	r.writeMain()
	if main := string(r.res.Files["main.tf"].Bytes()); !strings.Contains(main, "ssh_private_key_file") {
		t.Errorf("main.tf of an adoption with SSH has no SSH key:\n%s", main)
	}
}

// The ceph guard is an allow-list of what the adoption reads (`ceph
// config dump`): every other ceph command, those a deny-list of verbs
// let through included, is refused.
func TestAllowSSHCeph(t *testing.T) {
	for _, ok := range []string{"ceph config dump", "ceph config dump --format json"} {
		if err := allowSSH(strings.Fields(ok)); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"ceph osd pool delete ceph ceph --yes-i-really-really-mean-it",
		"ceph config-key put k v",
		"ceph auth get-or-create client.x mon allow",
		"ceph osd crush remove osd.0",
		"ceph mon remove z2g4a",
		"ceph tell osd.* injectargs --osd_max_backfills=8",
		"ceph mgr fail z2g4a",
		"ceph osd pool rename ceph other",
		"ceph config set osd osd_max_backfills 8",
		"ceph config dump extra",
		"ceph config dump --format json extra",
		"ceph",
	} {
		if err := allowSSH(strings.Fields(bad)); err == nil {
			t.Errorf("%s allowed", bad)
		}
	}
}

// An rbd storage of an adopted Ceph pool references the pool; the VMs'
// disks depend on the storages they use only.
func TestLinkGroups(t *testing.T) {
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	r := testRun()
	addGroup(r, Group{Type: "pve_ceph_pool", Name: "ceph"}, nil, &instance{state: State{"name": str("ceph")}})
	addGroup(r, Group{Type: "pve_storage", Name: "ceph"}, nil, &instance{state: State{"storage": str("ceph"), "type": str("rbd"),
		"options": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"pool": str("ceph")})}})
	addGroup(r, Group{Type: "pve_storage", Name: "local"}, nil, &instance{state: State{"storage": str("local"), "type": str("dir")}})
	addGroup(r, Group{Type: "pve_vm_disk", Name: "lab", DependsOn: []string{"pve_vm.lab", "pve_storage.ceph", "pve_storage.local"}}, nil,
		&instance{key: "101/scsi0", state: State{"storage": str("ceph")}})
	r.linkGroups()
	if got := r.byAddr["pve_storage.ceph"].refs["options"]["pool"]; got != "pve_ceph_pool.ceph.name" {
		t.Errorf("the rbd storage's pool: %q, want the pool's reference", got)
	}
	if got := r.byAddr["pve_vm_disk.lab"].DependsOn; len(got) != 1 || got[0] != "pve_storage.ceph" {
		t.Errorf("the disks depend on %v, want [pve_storage.ceph]", got)
	}
	objs := []map[string]any{{"options": map[string]any{"pool": "ceph", "krbd": "0"}}}
	applyRefs(r.byAddr["pve_storage.ceph"], objs)
	if v := objs[0]["options"].(map[string]any)["pool"]; v != Expr("pve_ceph_pool.ceph.name") {
		t.Errorf("options.pool written as %v", v)
	}
}
