package acctest

import (
	"strings"
	"testing"
)

const goodAnswer = `[global]
keyboard = "en-us"
country = "us"
fqdn = "pve1.lab.example"
mailto = "root@pve1.lab.example"
timezone = "UTC"
root-password = "correct horse"
root-ssh-keys = ["ssh-ed25519 AAAA lab"]
reboot-on-error = false

[network]
source = "from-answer"
cidr = "172.27.2.10/24"
dns = "172.27.2.254"
gateway = "172.27.2.254"
filter.ID_NET_NAME_MAC = "*0210188c1040"

[disk-setup]
filesystem = "ext4"
disk-list = ["sda"]
`

// The validator accepts a complete answer and names each problem of a
// broken one: unknown and missing keys and sections, types, values.
func TestValidateAnswer(t *testing.T) {
	if err := ValidateAnswer(goodAnswer); err != nil {
		t.Fatalf("a good answer refused:\n%v", err)
	}
	cases := []struct{ name, from, to, want string }{
		{"syntax", `country = "us"`, `country = us`, "is not TOML"},
		{"unknown key", `country = "us"`, "country = \"us\"\nlanguage = \"en\"", "global.language: unknown key"},
		{"missing key", "fqdn = \"pve1.lab.example\"\n", "", "global.fqdn is required"},
		{"type", `reboot-on-error = false`, `reboot-on-error = "no"`, "global.reboot-on-error must be bool"},
		{"short password", `root-password = "correct horse"`, `root-password = "short"`, "at least 8 characters"},
		{"no password", "root-password = \"correct horse\"\n", "", "one of root-password and root-password-hashed"},
		{"keymap", `keyboard = "en-us"`, `keyboard = "us"`, "global.keyboard = \"us\": must be one of"},
		{"bare host name", `fqdn = "pve1.lab.example"`, `fqdn = "pve1"`, "fully qualified"},
		{"network address", `cidr = "172.27.2.10/24"`, `cidr = "172.27.2.0/24"`, "not the network's address"},
		{"gateway outside", `gateway = "172.27.2.254"`, `gateway = "10.0.0.1"`, "outside cidr"},
		{"no filter", "filter.ID_NET_NAME_MAC = \"*0210188c1040\"\n", "", "needs filter"},
		{"filesystem", `filesystem = "ext4"`, `filesystem = "ntfs"`, "one of ext4, xfs, zfs, btrfs"},
		{"no disks", "disk-list = [\"sda\"]\n", "", "exactly one of disk-list and filter"},
		{"disk list type", `disk-list = ["sda"]`, `disk-list = "sda"`, "disk-setup.disk-list must be []string"},
		{"unknown section", "[disk-setup]", "[disks]", "unknown section [disks]"},
		{"missing section", "[network]", "[post-installation-webhook]\nurl = \"https://x\"\n[networks]", "missing section [network]"},
	}
	for _, c := range cases {
		if !strings.Contains(goodAnswer, c.from) {
			t.Fatalf("%s: %q is not in the good answer", c.name, c.from)
		}
		err := ValidateAnswer(strings.Replace(goodAnswer, c.from, c.to, 1))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
