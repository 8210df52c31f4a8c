package provider

import "testing"

// A read-only provider given no SSH guard refuses every command; a normal
// provider has no guard (nodeexec's own allow-list applies).
func TestReadOnlySSHGuardDefaultRefuses(t *testing.T) {
	p := &pveProvider{readOnly: true}
	g := p.sshGuard()
	if g == nil {
		t.Fatal("a read-only provider without allowSSH has no guard")
	}
	for _, argv := range [][]string{{"cat", "/etc/hostname"}, {"systemctl", "show", "x"}, {"ceph", "config", "dump"}} {
		if err := g(argv); err == nil {
			t.Errorf("%v allowed by the refuse-all default", argv)
		}
	}
	if (&pveProvider{}).sshGuard() != nil {
		t.Error("a normal provider has an SSH guard")
	}
}
