package pvesim

import (
	"strings"
	"testing"
)

// `ceph config ls` lists every option Ceph knows, one a line or as a JSON
// array of names, in the option table's order; it takes no arguments.
func TestSSHCephConfigLs(t *testing.T) {
	_, info, _ := cephLab(t)
	root := sshAs(t, info, "z2g4a", "root")

	plain := strings.Split(strings.TrimSuffix(root.ok("ceph config ls"), "\n"), "\n")
	if len(plain) != len(cephOptions) || plain[0] != "osd_memory_target" {
		t.Fatalf("config ls: %d names starting %q, want %d starting osd_memory_target", len(plain), plain[0], len(cephOptions))
	}
	for _, n := range plain {
		if cephOptions[n] == nil {
			t.Errorf("config ls lists %q, which config help does not know", n)
		}
	}
	var names []string
	jsonOf(t, root.ok("ceph config ls --format json"), &names)
	if strings.Join(names, "\n") != strings.Join(plain, "\n") {
		t.Errorf("config ls --format json: %v, plain: %v", names, plain)
	}
	for _, want := range []string{"public_addr", "osd_pool_default_pg_num", "rbd_cache"} {
		if !strings.Contains("\n"+strings.Join(plain, "\n")+"\n", "\n"+want+"\n") {
			t.Errorf("config ls lacks %s", want)
		}
	}
	root.fails("ceph config ls osd", 22, "Invalid command: unused arguments: ['osd']")
}
