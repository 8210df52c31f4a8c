package pvesim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"strconv"
	"strings"
)

// The node-level parts of the hand-built state: network and node base.

// hbNetwork is the log's /etc/network/interfaces written in one go: one
// staged change set through the network API and one reload per node.
func (s *Sim) hbNetwork(plan []hbNode) error {
	for _, n := range plan {
		base := "/nodes/" + n.name + "/network"
		s.mu.Lock()
		view := s.st.Nodes[n.name].readView()
		s.mu.Unlock()
		// The installer's bridge goes first: it holds the gateway and a
		// port bond0 takes.
		if view.Ifaces["vmbr0"] != nil {
			if err := s.hbCall(n.name, "DELETE", base+"/vmbr0", nil); err != nil {
				return err
			}
		}
		type apiCall struct {
			method, path string
			params       map[string]string
		}
		var calls []apiCall
		for _, nic := range n.bond {
			calls = append(calls, apiCall{"PUT", base + "/" + nic, map[string]string{"type": "eth", "autostart": "1"}})
		}
		calls = append(calls, apiCall{"PUT", base + "/" + n.storageNIC, map[string]string{
			"type": "eth", "autostart": "1", "cidr": n.storageAddr() + "/24", "mtu": strconv.Itoa(hbStorageMTU),
		}})
		if len(n.bond) > 0 {
			calls = append(calls, apiCall{"POST", base, map[string]string{
				"iface": "bond0", "type": "bond", "autostart": "1", "slaves": strings.Join(n.bond, " "), "bond_mode": "802.3ad",
			}})
		}
		calls = append(calls, apiCall{"POST", base, map[string]string{
			"iface": "bridge0", "type": "bridge", "autostart": "1", "bridge_ports": n.bridgePort(),
			"cidr": n.mgmtCIDR, "gateway": n.gateway, "bridge_vlan_aware": "1", "bridge_vids": "2-4094",
		}})
		if n.vlan {
			calls = append(calls, apiCall{"POST", base, map[string]string{
				"iface": fmt.Sprintf("bridge0.%d", hbCorosyncVID), "type": "vlan", "autostart": "1", "cidr": n.corosyncAddr() + "/24",
			}})
		}
		calls = append(calls, apiCall{"PUT", base, nil}) // apply: ifreload
		for _, c := range calls {
			if err := s.hbCall(n.name, c.method, c.path, c.params); err != nil {
				return err
			}
		}
	}
	return nil
}

// hbNodeBase is the log's "Node base" on every node.
func (s *Sim) hbNodeBase(plan []hbNode, domain string) error {
	caPEM, err := hbRootCA()
	if err != nil {
		return err
	}
	upload := "[Upload]\nURL = https://logs." + domain + ":19532/insert/journald\n" +
		"ServerCertificateFile = -\nServerKeyFile = -\nTrustedCertificateFile = -\n"
	const dropIn = "/etc/systemd/system/systemd-journal-upload.service.d"
	// The ACME part of the log: its certificates live 24 h, so the daily
	// renewal runs every four hours instead, at once.
	const timerDropIn = "/etc/systemd/system/pve-daily-update.timer.d"
	for _, n := range plan {
		if err := s.hbRepositories(n.name); err != nil {
			return err
		}
		shell := []struct{ line, stdin string }{
			{"install -m 0644 /dev/stdin /usr/local/share/ca-certificates/root-ca-a.crt", caPEM},
			{"update-ca-certificates", ""},
			{"install -m 0644 /dev/stdin /etc/systemd/journal-upload.conf", upload},
			{"mkdir -p " + dropIn, ""},
			{"install -m 0644 /dev/stdin " + dropIn + "/override.conf", "[Service]\nRestart=always\n"},
			{"mkdir -p " + timerDropIn, ""},
			{"install -m 0644 /dev/stdin " + timerDropIn + "/override.conf", hbTimerOverride},
			{"systemctl daemon-reload", ""},
			{"systemctl enable --now systemd-journal-upload", ""},
			{"tuned-adm profile latency-performance", ""},
		}
		if n.storageNIC == "cx354ap1" {
			// The log's ConnectX-3 rings, by hand, not persisted: the log
			// keeps no unit or hook for it. Other NICs keep their rings.
			shell = append(shell, struct{ line, stdin string }{"ethtool -G " + n.storageNIC + " rx 2048 tx 2048", ""})
		}
		for _, c := range shell {
			if _, err := s.hbShell(n.name, c.line, c.stdin); err != nil {
				return err
			}
		}
	}
	return nil
}

// hbTimerOverride is the log's drop-in for pve-daily-update.timer: the
// empty OnCalendar= clears the unit's own schedule before the new one.
const hbTimerOverride = "[Timer]\nOnCalendar=\nOnCalendar=00/4:00\nRandomizedDelaySec=0\n"

// hbRepositories adds pve-no-subscription and disables every enterprise
// repository, through the GUI's repository calls.
func (s *Sim) hbRepositories(node string) error {
	path := "/nodes/" + node + "/apt/repositories"
	if err := s.hbCall(node, "GET", path, nil); err != nil {
		return err
	}
	if err := s.hbCall(node, "PUT", path, map[string]string{"handle": "no-subscription"}); err != nil {
		return err
	}
	type entry struct {
		path  string
		index int
	}
	var off []entry
	s.mu.Lock()
	for _, f := range s.st.Nodes[node].APT.Files {
		for i, r := range f.Repos {
			for _, u := range r.URIs {
				if r.Enabled && strings.HasPrefix(u, "https://enterprise.proxmox.com/") {
					off = append(off, entry{f.Path, i})
					break
				}
			}
		}
	}
	s.mu.Unlock()
	for _, e := range off {
		if err := s.hbCall(node, "POST", path, map[string]string{"path": e.path, "index": strconv.Itoa(e.index), "enabled": "0"}); err != nil {
			return err
		}
	}
	return nil
}

// hbRootCA is the internal root CA the lab trusts (root-ca-a.crt).
func hbRootCA() (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	made := hbTime()
	tmpl := &x509.Certificate{
		SerialNumber:          randSerial(),
		Subject:               pkix.Name{CommonName: "Lab Root CA A", Organization: []string{"Lab"}},
		NotBefore:             made,
		NotAfter:              made.AddDate(10, 0, 0),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}

// hbCephConf is the log's hand edit of /etc/pve/ceph.conf: two lines
// under [client], an [osd] section with a comment of the user's, written
// back over the file PVE rendered.
func (s *Sim) hbCephConf(node string) error {
	cur, err := s.hbShell(node, "cat /etc/pve/ceph.conf", "")
	if err != nil {
		return err
	}
	const keyring = "keyring = /etc/pve/priv/$cluster.$name.keyring"
	var b strings.Builder
	found := false
	for _, line := range strings.SplitAfter(cur, "\n") {
		b.WriteString(line)
		if strings.TrimSpace(line) == keyring && !found {
			found = true
			b.WriteString("\trbd_cache = true\n\trbd_cache_writethrough_until_flush = true\n")
		}
	}
	if !found {
		return fmt.Errorf("hand-built: %s: /etc/pve/ceph.conf has no [client] %s", node, keyring)
	}
	b.WriteString("# 8 GiB per OSD: 64 GB RAM, two OSDs per node (see the fio runs)\n" +
		"[osd]\n\tosd_memory_target = 8589934592\n\tbdev_enable_discard = true\n")
	_, err = s.hbShell(node, "install -m 0640 /dev/stdin /etc/pve/ceph.conf", b.String())
	return err
}
