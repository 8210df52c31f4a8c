package acctest

import (
	"strings"
	"testing"
)

// The tests' own read-only check allows of ceph exactly what adoption
// reads, independent of internal/adopt's guard.
func TestReadOnlySSHCeph(t *testing.T) {
	for _, ok := range []string{"ceph config dump", "ceph config dump --format json", "cat /etc/pve/ceph.conf"} {
		if !ReadOnlySSH(strings.Fields(ok)) {
			t.Errorf("%s judged as writing", ok)
		}
	}
	for _, bad := range []string{
		"ceph osd pool delete ceph ceph --yes-i-really-really-mean-it", "ceph config-key put k v",
		"ceph auth get-or-create client.x", "ceph osd crush remove osd.0", "ceph mon remove z2g4a",
		"ceph tell osd.0 injectargs --debug_osd=0", "ceph mgr fail z2g4a", "ceph osd pool rename a b",
		"ceph config set osd a b", "ceph osd set noout",
	} {
		if ReadOnlySSH(strings.Fields(bad)) {
			t.Errorf("%s judged as reading", bad)
		}
	}
}
