package pvesim

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

var netKeyRE = regexp.MustCompile(`^net[0-9]+$`)

// missingBridgeLocked returns the start failure of a VM whose NIC names a
// bridge the node does not run: qemu's ifup script (qemu-server's
// pve-bridge, through PVE/Network.pm tap_plug) dies with "bridge '%s'
// does not exist" and QEMU exits 1, so the qmstart task fails with "start
// failed: QEMU exited with code 1" after logging the script's lines.
func (s *Sim) missingBridgeLocked(node string, vm *qemuVM) (logLines []string, err error) {
	ns := s.st.Nodes[node]
	if ns == nil || ns.Applied == nil {
		return nil, nil
	}
	// The bare default node (no lab) has no bridge at all, which no PVE
	// install has (the installer makes vmbr0); tests start VMs there on
	// vmbr0, so only nodes with a bridge are checked.
	hasBridge := false
	for _, d := range ns.Applied.Ifaces {
		hasBridge = hasBridge || d.Type == "bridge" || d.Type == "OVSBridge"
	}
	if !hasBridge {
		return nil, nil
	}
	conf := map[string]string{}
	for k, v := range vm.Config {
		conf[k] = v
	}
	for k, v := range vm.Pending {
		conf[k] = v // vm_start applies pending changes first
	}
	for _, k := range vm.PendingDelete {
		delete(conf, k)
	}
	keys := make([]string, 0, len(conf))
	for k := range conf {
		if netKeyRE.MatchString(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		bridge := ""
		for _, part := range strings.Split(conf[k], ",") {
			if b, ok := strings.CutPrefix(part, "bridge="); ok {
				bridge = b
			}
		}
		if bridge == "" {
			continue
		}
		if d := ns.Applied.Ifaces[bridge]; d != nil && (d.Type == "bridge" || d.Type == "OVSBridge") {
			continue
		}
		tap := fmt.Sprintf("tap%di%s", vm.VMID, strings.TrimPrefix(k, "net"))
		return []string{
			fmt.Sprintf("bridge '%s' does not exist", bridge),
			fmt.Sprintf("kvm: -netdev type=tap,id=%s,ifname=%s,script=/usr/libexec/qemu-server/pve-bridge,downscript=/usr/libexec/qemu-server/pve-bridgedown,vhost=on: "+
				"network script /usr/libexec/qemu-server/pve-bridge failed with status 512", k, tap),
		}, fmt.Errorf("start failed: QEMU exited with code 1")
	}
	return nil, nil
}
