package pvesim

import "testing"

func TestFaultSSHDownPerNode(t *testing.T) {
	s, info := startSim(t, Options{TaskDuration: -1})
	a, b := sshAs(t, info, "z2g4a", "root"), sshAs(t, info, "z2g4b", "root")
	if _, errs, code := b.run("cat /etc/hostname", nil); code != 0 {
		t.Fatalf("before: %d %s", code, errs)
	}
	if err := s.SetFaultSpec("ssh z2g4b=down"); err != nil {
		t.Fatal(err)
	}
	// The open connection is gone, a new one is closed at once.
	if sess, err := b.c.NewSession(); err == nil {
		_ = sess.Close()
		t.Fatal("z2g4b's open connection survived its sshd going down")
	}
	if _, err := dialSim(t, info, "z2g4b", "root", labKey(t, info)); err == nil {
		t.Fatal("z2g4b's sshd took a connection while down")
	}
	if _, errs, code := a.run("cat /etc/hostname", nil); code != 0 {
		t.Fatalf("z2g4a while z2g4b is down: %d %s", code, errs)
	}
	s.ClearFaults()
	b = sshAs(t, info, "z2g4b", "root")
	if _, errs, code := b.run("cat /etc/hostname", nil); code != 0 {
		t.Fatalf("after clearing: %d %s", code, errs)
	}
}
