package acctest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/pvelab/terraform-provider-pve/internal/isofs"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// The outer layer of examples/nested-lab against pvesim: the reference
// lab's three nodes nested on the first of its nodes, fresh from the
// installer. Both applies the example asks for (powered off, then on)
// converge with an empty plan after each; each nested VM has the lab
// node's NICs (MACs, bridges, MTU, trunks) and disks (serials, models),
// boots the installer from its CD drive with its answer image beside it,
// and each answer is valid and says what the lab says. Destroy leaves
// the host as it was. Nothing runs the installer here: its answer is
// checked by ValidateAnswer.
func TestNestedLabOuterLayer(t *testing.T) {
	installer := bytes.Repeat([]byte("prepared installer "), 2048)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(installer) }))
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(installer)

	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	labFile := filepath.Join(root, "examples", "labs", "reference", "lab.json")
	// The host is a pvesim node; the lab's nodes are nested on it.
	lab := NewLab(t, LabOptions{ConfigDir: "examples/nested-lab"})
	info := lab.Sim.Info()
	host := info.Nodes[0].Name
	vars, _ := json.Marshal(map[string]any{
		"host": map[string]any{
			"endpoint": info.Endpoint, "api_token": info.APIToken, "tls_fingerprint": info.TLSFingerprint, "node": host,
		},
		"lab_file":      labFile,
		"root_password": "nested lab secret",
		"root_ssh_keys": []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINestedLabKey lab"},
		"installer":     map[string]any{"url": srv.URL + "/pve-auto.iso", "file_name": "pve-auto.iso", "sha256": hex.EncodeToString(sum[:])},
		"wait_for_api":  false,
	})
	lab.WriteFile("terraform.tfvars.json", string(vars))

	for _, power := range []string{"false", "true"} {
		if r := lab.Apply("-var", "power_on="+power); r.ExitCode != 0 {
			t.Fatalf("apply power_on=%s failed:\n%s", power, r.Errors())
		}
		if r := lab.Plan("-var", "power_on="+power); r.ExitCode != 0 {
			t.Fatalf("plan after apply power_on=%s not empty (exit %d):\n%s\n%s", power, r.ExitCode, r.PlannedChanges(), r.Errors())
		}
	}

	var labDoc struct {
		Domain string `json:"domain"`
		Nodes  []struct {
			Name       string `json:"name"`
			Management struct{ NIC, CIDR, Gateway string }
			NICs       []struct {
				Name  string `json:"name"`
				MAC   string `json:"mac"`
				Speed int    `json:"speed_mbps"`
			} `json:"nics"`
			Disks []struct {
				Model, Serial string
				Boot          bool
			} `json:"disks"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(mustRead(t, labFile), &labDoc); err != nil {
		t.Fatal(err)
	}
	for i, n := range labDoc.Nodes {
		vmid := 9101 + i
		cfg, on := lab.Sim.VMConfig(vmid)
		if on != host {
			t.Fatalf("nested %s: VM %d is on %q, want %s", n.Name, vmid, on, host)
		}
		if st, _ := lab.Sim.GuestStatus(vmid); st != "running" {
			t.Errorf("nested %s: VM %d is %s, want running", n.Name, vmid, st)
		}
		if cfg["cpu"] != "host" || cfg["name"] != n.Name {
			t.Errorf("nested %s: cpu %q name %q, want host and the node's name", n.Name, cfg["cpu"], cfg["name"])
		}
		// NICs: the management NIC first, every NIC with its local MAC.
		mgmtMAC := ""
		netIdx := 1
		for _, nic := range n.NICs {
			slot := "net0"
			if nic.Name != n.Management.NIC {
				slot = fmt.Sprintf("net%d", netIdx)
				netIdx++
			}
			mac := strings.ToUpper("02" + nic.MAC[2:])
			if nic.Name == n.Management.NIC {
				mgmtMAC = strings.ToLower(strings.ReplaceAll(mac, ":", ""))
			}
			want := "virtio=" + mac + ",bridge=vmbr91"
			switch {
			case slot == "net0":
				want = "virtio=" + mac + ",bridge=vmbr0"
			case nic.Speed >= 10000:
				want = "virtio=" + mac + ",bridge=vmbr92,mtu=9000,trunks=2-4094"
			}
			if cfg[slot] != want {
				t.Errorf("nested %s: %s = %q, want %q (lab NIC %s)", n.Name, slot, cfg[slot], want, nic.Name)
			}
		}
		// Disks: the boot disk on ide0, first in the boot order; the lab's
		// serials and models.
		slot := 1
		for _, d := range n.Disks {
			s := "ide0"
			if !d.Boot {
				s = fmt.Sprintf("ide%d", slot)
				slot++
			}
			drive := cfg[s]
			if !strings.Contains(drive, ",serial="+d.Serial) || !strings.Contains(drive, ",model="+strings.ReplaceAll(d.Model, " ", "%20")) {
				t.Errorf("nested %s: %s = %q, want serial %s and model %s", n.Name, s, drive, d.Serial, d.Model)
			}
		}
		if !strings.HasPrefix(cfg["boot"], "order=ide0;sata0") {
			t.Errorf("nested %s: boot %q, want the boot disk, then the installer", n.Name, cfg["boot"])
		}
		if !strings.HasPrefix(cfg["sata0"], "local:iso/pve-auto.iso,media=cdrom") {
			t.Errorf("nested %s: sata0 = %q, want the installer", n.Name, cfg["sata0"])
		}
		answerVol := "local:iso/nested-" + n.Name + "-answer.iso"
		if !strings.HasPrefix(cfg["sata1"], answerVol+",media=cdrom") {
			t.Errorf("nested %s: sata1 = %q, want %s", n.Name, cfg["sata1"], answerVol)
		}

		// The answer: on an image labelled as the installer looks for it,
		// valid, and saying what the lab says.
		img, ok := lab.Sim.FileData(host, answerVol)
		if !ok {
			t.Fatalf("nested %s: no %s on the host", n.Name, answerVol)
		}
		label, files, err := isofs.Read(img)
		if err != nil || label != "PROXMOX-AIS" {
			t.Fatalf("nested %s: answer image label %q: %v", n.Name, label, err)
		}
		answer := string(files["answer.toml"])
		if err := ValidateAnswer(answer); err != nil {
			t.Errorf("nested %s: answer.toml is not valid:\n%v\n%s", n.Name, err, answer)
			continue
		}
		var a struct {
			Global  map[string]any `toml:"global"`
			Network struct {
				CIDR, Gateway string
				Filter        map[string]string
			} `toml:"network"`
			Disks struct {
				List []string `toml:"disk-list"`
			} `toml:"disk-setup"`
		}
		if _, err := toml.Decode(answer, &a); err != nil {
			t.Fatal(err)
		}
		if a.Global["fqdn"] != n.Name+"."+labDoc.Domain || a.Global["root-password"] != "nested lab secret" ||
			a.Network.CIDR != n.Management.CIDR || a.Network.Gateway != n.Management.Gateway ||
			a.Network.Filter["ID_NET_NAME_MAC"] != "*"+mgmtMAC || len(a.Disks.List) != 1 || a.Disks.List[0] != "sda" {
			t.Errorf("nested %s: answer does not match the lab (fqdn, password, cidr, gateway, management MAC %s, boot disk sda):\n%s", n.Name, mgmtMAC, answer)
		}
	}
	for _, br := range []string{"vmbr91", "vmbr92"} {
		if !regexp.MustCompile(`(?m)^iface ` + br + ` inet manual$`).MatchString(lab.Sim.NetworkInterfacesFile(host)) {
			t.Errorf("host %s has no bridge %s:\n%s", host, br, lab.Sim.NetworkInterfacesFile(host))
		}
	}

	// Destroy: the nested VMs with their disks, the images, the bridges.
	if r := lab.Run("destroy", "-auto-approve", "-input=false"); r.ExitCode != 0 {
		t.Fatalf("destroy failed:\n%s", r.Errors())
	}
	for i := range labDoc.Nodes {
		if st, on := lab.Sim.GuestStatus(9101 + i); on != "" {
			t.Errorf("VM %d still exists (%s on %s)", 9101+i, st, on)
		}
	}
	if vols := lab.Sim.VMVolumes(host, "local-lvm", 0); len(vols) != 0 {
		t.Errorf("volumes left on local-lvm: %v", vols)
	}
	for _, f := range []string{"pve-auto.iso", "nested-z2g4a-answer.iso"} {
		if _, ok := lab.Sim.FileData(host, "local:iso/"+f); ok {
			t.Errorf("%s left on the host", f)
		}
	}
	if ifs := lab.Sim.NetworkInterfacesFile(host); strings.Contains(ifs, "vmbr91") || strings.Contains(ifs, "vmbr92") {
		t.Errorf("bridges left on the host:\n%s", ifs)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// examples/nested-lab/cluster, which make testacc-nested applies to the
// nested nodes, forms one cluster of standalone nodes as the installer
// leaves them (here the reference lab's, fresh-install) from the nested
// lab's nodes output, with an empty plan after it.
//
// pvesim's endpoints are loopback ports, so the addresses are given.
func TestNestedLabClusterConfig(t *testing.T) {
	lab := NewLab(t, LabOptions{ConfigDir: "examples/nested-lab/cluster", Files: map[string]string{
		"terraform.tfvars": `addresses = { z2g4a = "172.27.2.10", z2g4b = "172.27.2.11", z2g4c = "172.27.2.12" }` + "\n",
	}})
	if r := lab.Apply(); r.ExitCode != 0 {
		t.Fatalf("apply failed:\n%s", r.Errors())
	}
	if r := lab.Plan(); r.ExitCode != 0 {
		t.Fatalf("second plan not empty (exit %d):\n%s\n%s", r.ExitCode, r.PlannedChanges(), r.Errors())
	}
	info := lab.Sim.Info()
	for _, n := range info.Nodes {
		c := mustClient(t, pve.Config{Endpoint: n.Endpoint, APIToken: n.APIToken, TLSFingerprint: n.TLSFingerprint})
		var members []struct {
			Name string `json:"name"`
		}
		if err := c.Get(context.Background(), "/cluster/config/nodes", nil, &members); err != nil {
			t.Fatalf("%s: %v", n.Name, err)
		}
		if len(members) != len(info.Nodes) {
			t.Errorf("%s sees members %+v, want all %d nodes", n.Name, members, len(info.Nodes))
		}
	}
}
