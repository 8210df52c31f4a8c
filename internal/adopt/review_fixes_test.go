package adopt

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
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
