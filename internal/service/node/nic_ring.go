package node

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// NIC facts and the persistent unit of pve_node_nic_ring.

// nicInfo is what ethtool reports about a NIC's rings.
type nicInfo struct {
	driver       string
	rxMax, txMax int
	rx, tx       int
}

var (
	// errNoDevice is a node without the named network device.
	errNoDevice = errors.New("no such network device")
	// errNoRings is a device whose driver has no ring parameters.
	errNoRings = errors.New("ethtool -g: Operation not supported")
)

// readNIC asks ethtool for a NIC's driver (-i) and its ring sizes and
// maxima (-g).
func readNIC(ctx context.Context, ex *nodeexec.Pool, node, iface string) (nicInfo, error) {
	var info nicInfo
	res, err := ex.Run(ctx, node, nodeexec.Cmd("ethtool", "-i", iface))
	if err != nil && notSupported(err) {
		// No driver information (lo); ethtool -g tells about rings.
		res, err = &nodeexec.Result{}, nil
	}
	if err != nil {
		if isNoDevice(err) {
			return info, fmt.Errorf("%w: node %s has no network device %s", errNoDevice, node, iface)
		}
		if code, ok := nodeexec.ExitCode(err); ok && code == 127 {
			return info, fmt.Errorf("ethtool is not installed on node %s (apt install ethtool): %w", node, err)
		}
		return info, err
	}
	info.driver = parseEthtoolDriver(string(res.Stdout))
	res, err = ex.Run(ctx, node, nodeexec.Cmd("ethtool", "-g", iface))
	if err != nil {
		if isNoDevice(err) {
			return info, fmt.Errorf("%w: node %s has no network device %s", errNoDevice, node, iface)
		}
		if notSupported(err) {
			return info, fmt.Errorf("the driver %s of %s on node %s has no ring parameters to set (%w); "+
				"set rings on the physical NICs, not on bonds, bridges or VLANs", orUnknown(info.driver), iface, node, errNoRings)
		}
		return info, err
	}
	if info, err = parseRings(info, string(res.Stdout)); err != nil {
		return info, fmt.Errorf("node %s: %w", node, err)
	}
	return info, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func notSupported(err error) bool {
	var e *nodeexec.Error
	return errors.As(err, &e) && e.Err == nil && strings.Contains(e.Stderr, "Operation not supported")
}

func isNoDevice(err error) bool {
	var e *nodeexec.Error
	return errors.As(err, &e) && e.Err == nil && strings.Contains(e.Stderr, "No such device")
}

// parseRings reads the RX and TX lines of `ethtool -g` (both its ioctl
// and netlink layouts: "RX:" then tabs and a number or n/a).
func parseRings(info nicInfo, out string) (nicInfo, error) {
	section := ""
	found := 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Pre-set maximums:"):
			section = "max"
			continue
		case strings.HasPrefix(line, "Current hardware settings:"):
			section = "cur"
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "RX" && k != "TX") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			continue // n/a
		}
		switch section + k {
		case "maxRX":
			info.rxMax = n
		case "maxTX":
			info.txMax = n
		case "curRX":
			info.rx = n
		case "curTX":
			info.tx = n
		default:
			continue
		}
		found++
	}
	if found < 4 {
		return info, fmt.Errorf("unexpected output of ethtool -g: %q", out)
	}
	return info, nil
}

// ringRule is what a driver does to a requested ring size beyond the
// maxima ethtool reports (which the kernel enforces for every driver).
type ringRule struct {
	what string // how the driver changes a value, for messages
	// pow2: rounded up to a power of two; multiple: rounded up to a
	// multiple of it.
	pow2     bool
	multiple int
	// rxMin, txMin: smaller values are raised to these.
	rxMin, txMin int
	// txAbove: tx must be larger (the driver refuses others).
	txAbove int
}

// ringRules are the drivers of the reference lab's NICs, from their Linux
// sources:
//   - mlx4_en (ConnectX-3): mlx4_en_set_ringparam rounds rx and tx up to a
//     power of two and raises them to MLX4_EN_MIN_RX_SIZE (256) and
//     MLX4_EN_MIN_TX_SIZE (64);
//   - e1000e (I219): e1000_set_ringparam clamps to E1000_MIN_RXD/TXD (64)
//     and rounds up to a multiple of 8 (REQ_RX/TX_DESCRIPTOR_MULTIPLE);
//   - tg3 (BCM5720): tg3_set_ringparam refuses tx <= MAX_SKB_FRAGS (17).
//
// Values a driver would change are refused at plan time with the valid
// neighbours; other drivers are checked after applying (readback).
var ringRules = map[string]ringRule{
	"mlx4_en": {what: "rounds ring sizes up to a power of two", pow2: true, rxMin: 256, txMin: 64},
	"e1000e":  {what: "rounds ring sizes up to a multiple of 8", multiple: 8, rxMin: 64, txMin: 64},
	"tg3":     {what: "refuses tx rings of 17 or fewer entries", txAbove: 17},
}

// checkRing returns why v is not a ring size the NIC keeps as given, with
// the valid values next to it; "" when it is.
func checkRing(info nicInfo, iface, attr string, v int) string {
	maxV := info.rxMax
	if attr == "tx" {
		maxV = info.txMax
	}
	if maxV > 0 && v > maxV {
		return fmt.Sprintf("%s = %d exceeds the maximum of %s on this node: ethtool -g reports %d (driver %s). Use %s = %d or less.",
			attr, v, iface, maxV, orUnknown(info.driver), attr, maxV)
	}
	rule, ok := ringRules[info.driver]
	if !ok {
		return ""
	}
	minV := rule.rxMin
	if attr == "tx" {
		minV = rule.txMin
		if rule.txAbove > 0 && v <= rule.txAbove {
			return fmt.Sprintf("tx = %d is refused by the %s driver of %s, which %s. Use tx = %d or more.", v, info.driver, iface, rule.what, rule.txAbove+1)
		}
	}
	if v < minV {
		return fmt.Sprintf("%s = %d is below the minimum %d of the %s driver of %s, which would raise it to %d and show a change in every plan. Use %s = %d or more.",
			attr, v, minV, info.driver, iface, minV, attr, minV)
	}
	lower, upper := v, v
	switch {
	case rule.pow2:
		for upper = 1; upper < v; upper <<= 1 {
		}
		lower = upper
		if upper != v {
			lower = upper >> 1
		}
	case rule.multiple > 0:
		lower = v - v%rule.multiple
		upper = lower
		if lower != v {
			upper = lower + rule.multiple
		}
	}
	if lower == v {
		return ""
	}
	var options []string
	if lower >= minV {
		options = append(options, fmt.Sprintf("%s = %d", attr, lower))
	}
	if maxV == 0 || upper <= maxV {
		options = append(options, fmt.Sprintf("%s = %d", attr, upper))
	}
	return fmt.Sprintf("%s = %d is not a ring size the %s driver of %s keeps: it %s, so the NIC would run %d and every plan would show a change. Use %s.",
		attr, v, info.driver, iface, rule.what, upper, strings.Join(options, " or "))
}

// ringUnitName is the systemd unit that sets iface's rings at boot.
func ringUnitName(iface string) string { return "pve-nic-ring-" + iface + ".service" }

// ringUnitPath is its file.
func ringUnitPath(iface string) string { return "/etc/systemd/system/" + ringUnitName(iface) }

// deviceUnit is the device unit systemd creates for a network interface
// (systemd-escape: '-' becomes \x2d).
func deviceUnit(iface string) string {
	return "sys-subsystem-net-devices-" + strings.ReplaceAll(iface, "-", `\x2d`) + ".device"
}

// ringArgs are the ethtool -G parameters for the configured sizes.
func ringArgs(rx, tx *int) []string {
	var out []string
	if rx != nil {
		out = append(out, "rx", strconv.Itoa(*rx))
	}
	if tx != nil {
		out = append(out, "tx", strconv.Itoa(*tx))
	}
	return out
}

// bootCommand is the command the unit runs, as the resource shows it.
func bootCommand(iface string, rx, tx *int) string {
	return strings.Join(append([]string{"ethtool", "-G", iface}, ringArgs(rx, tx)...), " ")
}

// ringUnit is the unit file: a oneshot that the device's appearance
// pulls in (at boot and whenever the driver re-creates the device),
// ordered before network-pre.target so that ifupdown2 brings the link up
// with its final rings.
func ringUnit(iface string, rx, tx *int) string {
	dev := deviceUnit(iface)
	return "# Managed by Terraform (pve_node_nic_ring " + iface + "); changes here are overwritten.\n" +
		"# NIC ring sizes are lost when the device resets (reboot, driver reload); this unit\n" +
		"# sets them again whenever the device appears.\n" +
		"[Unit]\n" +
		"Description=Ring sizes of network interface " + iface + "\n" +
		"DefaultDependencies=no\n" +
		"BindsTo=" + dev + "\n" +
		"After=" + dev + "\n" +
		"Wants=network-pre.target\n" +
		"Before=network-pre.target shutdown.target\n" +
		"Conflicts=shutdown.target\n" +
		"\n" +
		"[Service]\n" +
		"Type=oneshot\n" +
		"RemainAfterExit=yes\n" +
		"ExecStart=/usr/sbin/" + bootCommand(iface, rx, tx) + "\n" +
		"\n" +
		"[Install]\n" +
		"WantedBy=" + dev + "\n"
}

// parseRingUnit returns the sizes the unit file of iface sets, when the
// file is exactly what ringUnit writes for them.
func parseRingUnit(iface, content string) (rx, tx *int, ok bool) {
	prefix := "ExecStart=/usr/sbin/ethtool -G " + iface + " "
	for _, line := range strings.Split(content, "\n") {
		args, found := strings.CutPrefix(line, prefix)
		if !found {
			continue
		}
		f := strings.Fields(args)
		for i := 0; i+1 < len(f); i += 2 {
			n, err := strconv.Atoi(f[i+1])
			if err != nil {
				return nil, nil, false
			}
			switch f[i] {
			case "rx":
				rx = &n
			case "tx":
				tx = &n
			default:
				return nil, nil, false
			}
		}
		break
	}
	if (rx == nil && tx == nil) || ringUnit(iface, rx, tx) != content {
		return nil, nil, false
	}
	return rx, tx, true
}
