package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Named formats of PVE::JSONSchema::register_format beyond the network
// ones in params.go: pve-common (JSONSchema.pm, Tools.pm), pve-storage
// (Storage/Plugin.pm), pve-cluster (DataCenterConfig.pm), qemu-server
// (QemuServer.pm) and pve-access-control (Auth/Plugin.pm). Each returns the
// text its verifier dies with, without the final newline.

// perlRE compiles a fully anchored pattern whose `$` behaves as in Perl:
// it also matches before a final newline.
func perlRE(re string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + re + `)\n?$`) }

// The address grammars of PVE::ParseUtils ($IPV4RE, $IPV6RE, RFC 3986):
// no leading zeros in IPv4 octets, IPv6 may end in an IPv4 address.
const (
	ipv4Octet = `(?:25[0-5]|(?:2[0-4]|1[0-9]|[1-9])?[0-9])`
	ipv4Pat   = `(?:(?:` + ipv4Octet + `\.){3}` + ipv4Octet + `)`
	h16       = `(?:[0-9a-fA-F]{1,4})`
	ls32      = `(?:(?:` + ipv4Pat + `|` + h16 + `:` + h16 + `))`
	ipv6Pat   = `(?:` +
		`(?:(?:` + h16 + `:){6}` + ls32 + `)|` +
		`(?:::(?:` + h16 + `:){5}` + ls32 + `)|` +
		`(?:(?:` + h16 + `)?::(?:` + h16 + `:){4}` + ls32 + `)|` +
		`(?:(?:(?:` + h16 + `:){0,1}` + h16 + `)?::(?:` + h16 + `:){3}` + ls32 + `)|` +
		`(?:(?:(?:` + h16 + `:){0,2}` + h16 + `)?::(?:` + h16 + `:){2}` + ls32 + `)|` +
		`(?:(?:(?:` + h16 + `:){0,3}` + h16 + `)?::` + h16 + `:` + ls32 + `)|` +
		`(?:(?:(?:` + h16 + `:){0,4}` + h16 + `)?::` + ls32 + `)|` +
		`(?:(?:(?:` + h16 + `:){0,5}` + h16 + `)?::` + h16 + `)|` +
		`(?:(?:(?:` + h16 + `:){0,6}` + h16 + `)?::))`
	// dns-name: labels of letters, digits and inner dashes.
	dnsLabel = `[a-zA-Z0-9](?:[a-zA-Z0-9\-]*[a-zA-Z0-9])?`
)

var (
	ipv4RE = perlRE(ipv4Pat)
	ipv6RE = perlRE(ipv6Pat)
	ipRE   = perlRE(ipv4Pat + `|` + ipv6Pat)
	// pve-common JSONSchema.pm pve_verify_urlencoded, parse_size, parse_bridge_id.
	urlencodedRE = regexp.MustCompile(`^[-%a-zA-Z0-9_.!~*'()]*\n?$`)
	sizeFormatRE = regexp.MustCompile(`^(\d+(\.\d+)?)([KMGT](?:iB)?)?\n?$`)
	bridgeIDRE   = perlRE(`[-_.\w\d]+`)
	cidrV4RE     = regexp.MustCompile(`^` + ipv4Pat + `/(\d+)\n?$`)
	cidrV6RE     = regexp.MustCompile(`^` + ipv6Pat + `/(\d+)\n?$`)
	dnsNamePRE   = perlRE(`(?:` + dnsLabel + `\.)*` + dnsLabel)
	pveIDRE      = perlRE(`(?i:[a-z][a-z0-9\-_.]*[a-z0-9])`)
	lvmNameRE    = perlRE(`(?i:[a-z0-9][a-z0-9\-_.]*[a-z0-9])`)
	absPathRE    = regexp.MustCompile(`^/[^;()]+`) // verify_path anchors only the start
	mountOptRE   = perlRE(`[^\t\n\v\f\r ]+`)
	volumeIDRE   = regexp.MustCompile(`^(?i:[a-z][a-z0-9\-_.]*[a-z0-9]):.+\n?$`)
	dirOverRE    = perlRE(`([a-z]+)=([^.]*(?:\.?[^.]+)+)`)
	// parse_host_and_port: IPv4 or name with :port, anything bracketed
	// with :port, or IPv6 with .port.
	hostPortRE = []*regexp.Regexp{
		perlRE(`(?:` + ipv4Pat + `|[a-zA-Z0-9\-.]+)(?::\d+)?`),
		perlRE(`\[(?:` + ipv6Pat + `|` + ipv4Pat + `|[a-zA-Z0-9\-.]+)\](?::\d+)?`),
		perlRE(ipv6Pat + `(?:\.\d+)?`),
	}
	vmidRE        = perlRE(`[1-9][0-9]{2,8}`)
	poolNameRE    = regexp.MustCompile(`^[A-Za-z0-9.\-_]+(?:/[A-Za-z0-9.\-_]+){0,2}$`)
	realmRE       = perlRE(`[A-Za-z][A-Za-z0-9.\-_]+`)
	taskStatusRE  = perlRE(`(?i:ok|error|warning|unknown)`)
	macPrefixRE   = perlRE(`(?i:[a-f0-9][02468ace](?::[a-f0-9]{2}){0,2}(?::[a-f0-9]?)?)`)
	startupPartRE = []*regexp.Regexp{perlRE(`(?:order=)?\d+`), perlRE(`up=\d+`), perlRE(`down=\d+`)}
	hotplugRE     = perlRE(`network|disk|cpu|memory|usb|cloudinit`)
)

// dirContentTypes are the content types of the dir plugin, which has them
// all (verify_content).
var dirContentTypes = map[string]bool{
	"images": true, "rootdir": true, "vztmpl": true, "iso": true, "backup": true, "snippets": true, "none": true, "import": true,
}

// pruneBackupsFormat is pve-storage's prune-backups property string.
var pruneBackupsFormat = func() psFormat {
	n := psOpt(tInteger).atLeast(0)
	return psFormat{
		"keep-all": psOpt(tBoolean), "keep-last": n, "keep-hourly": n, "keep-daily": n,
		"keep-weekly": n, "keep-monthly": n, "keep-yearly": n,
	}
}()

// checkNamedFormat checks the formats of this file; ok is false for a
// format it does not know.
func checkNamedFormat(format, v string) (msg string, ok bool) {
	switch format {
	case "string":
		// format => 'string-list' splits, nothing more.
	case "CIDR":
		if !validCIDR(v, true) && !validCIDR(v, false) {
			return "value does not look like a valid CIDR network", true
		}
	case "dns-name":
		if !dnsNamePRE.MatchString(v) {
			return "value does not look like a valid DNS name", true
		}
	case "pve-storage-id":
		return parseID(v, "storage"), true
	case "address": // -list: the qemu nameserver option
		if !ipRE.MatchString(v) && !dnsNamePRE.MatchString(v) {
			return "value does not look like a valid address: " + v, true
		}
	case "urlencoded":
		if !urlencodedRE.MatchString(v) {
			return "invalid urlencoded string: " + v, true
		}
	case "disk-size": // parse_size
		if !sizeFormatRE.MatchString(v) {
			return "value does not look like a valid disk size: " + v, true
		}
	case "pve-bridge-id":
		if !bridgeIDRE.MatchString(v) {
			return fmt.Sprintf("invalid bridge ID '%s'", v), true
		}
	case "pve-storage-path":
		if !absPathRE.MatchString(v) {
			return "value does not look like a valid absolute path", true
		}
	case "pve-storage-server":
		if !ipRE.MatchString(v) && !dnsNamePRE.MatchString(v) {
			return "value does not look like a valid server name or IP address", true
		}
	case "pve-storage-vgname":
		if !lvmNameRE.MatchString(v) {
			return fmt.Sprintf("lvm name '%s' contains illegal characters", v), true
		}
	case "pve-storage-portal-dns":
		for _, re := range hostPortRE {
			if re.MatchString(v) {
				return "", true
			}
		}
		return "value does not look like a valid portal address", true
	case "pve-storage-content":
		return verifyContent(v), true
	case "pve-storage-options":
		if !mountOptRE.MatchString(v) {
			return fmt.Sprintf("invalid options '%s'", v), true
		}
	case "pve-volume-id-or-qm-path": // verify_volume_id_or_qm_path: also none and cdrom
		if v == "none" || v == "cdrom" {
			return "", true
		}
		return checkNamedFormat("pve-volume-id-or-absolute-path", v)
	case "pve-volume-id-or-absolute-path":
		if strings.HasPrefix(v, "/") {
			return "", true
		}
		return checkNamedFormat("pve-volume-id", v)
	case "pve-volume-id":
		if !volumeIDRE.MatchString(v) {
			return fmt.Sprintf("unable to parse volume ID '%s'", v), true
		}
	case "mac-addr": // pve_verify_mac_addr: unicast only
		if !macRE.MatchString(v) {
			return "value does not look like a valid unicast MAC address", true
		}
	case "pve-dir-override":
		return verifyDirOverride(v), true
	case "prune-backups":
		// check_format passes the parameter's path; prune-backups is
		// always the parameter of that name.
		return checkPruneBackups(v), true
	case "storage-pair":
		return verifyStoragePair(v), true
	case "pve-startup-order":
		if !parseStartupOrder(v) {
			return "unable to parse startup options", true
		}
	case "pve-hotplug-features":
		return verifyHotplug(v), true
	case "mac-prefix":
		if !macPrefixRE.MatchString(v) {
			return "value is not a valid unicast MAC address prefix", true
		}
	case "email-opt":
		// -opt formats skip a false value ('' and '0' in Perl).
		if v != "" && v != "0" {
			return checkCertFormat("email", v), true
		}
	case "pve-poolid": // pve-access-control verify_poolname
		if len(strings.Split(v, "/")) > 3 {
			return fmt.Sprintf("pool name '%s' nested too deeply (max levels = 3)", v), true
		}
		if !poolNameRE.MatchString(v) {
			return fmt.Sprintf("pool name '%s' contains invalid characters", v), true
		}
	case "pve-vmid":
		if !vmidRE.MatchString(v) {
			return "value does not look like a valid VM ID", true
		}
	case "pve-realm":
		if !realmRE.MatchString(v) {
			return "value does not look like a valid realm", true
		}
	case "pve-task-status-type":
		if !taskStatusRE.MatchString(v) {
			return fmt.Sprintf("invalid status '%s'", v), true
		}
	default:
		return "", false
	}
	return "", true
}

// parseID is PVE::JSONSchema::parse_id (storage and ACME plugin IDs).
func parseID(id, typ string) string {
	if utf8.RuneCountInString(id) < 2 {
		return fmt.Sprintf("%s ID '%s' cannot be shorter than 2 characters", typ, id)
	}
	if !pveIDRE.MatchString(id) {
		return fmt.Sprintf("%s ID '%s' contains illegal characters", typ, id)
	}
	return ""
}

func verifyContent(ct string) string {
	if !dirContentTypes[ct] {
		return fmt.Sprintf("invalid content type '%s'", ct)
	}
	return ""
}

// verifyDirOverride is verify_dir_override: content type=relative path
// without "..", under 1023 characters, each component under 255.
func verifyDirOverride(v string) string {
	if m := dirOverRE.FindStringSubmatch(v); m != nil {
		if msg := verifyContent(m[1]); msg != "" {
			return msg
		}
		short := utf8.RuneCountInString(m[2]) < 1023
		for _, part := range strings.Split(m[2], "/") {
			if utf8.RuneCountInString(part) >= 255 {
				short = false
			}
		}
		if short {
			return ""
		}
	}
	return fmt.Sprintf("invalid override '%s'", v)
}

// checkPruneBackups parses the property string, then validate_prune_backups:
// keep-all may not be true together with a positive keep-* option.
func checkPruneBackups(v string) string {
	res, msg := parsePropertyString(pruneBackupsFormat, "prune-backups", v)
	if msg != "" {
		return msg
	}
	positive := false
	for k, x := range res {
		if k == "keep-all" {
			continue
		}
		if s, ok := x.(string); ok {
			if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 {
				positive = true
			}
		}
	}
	if keepAll, _ := res["keep-all"].(int); positive && keepAll == 1 {
		return "keep-all cannot be set together with other options."
	}
	return ""
}

// verifyStoragePair is verify_storagepair: one entry of a storage map
// (parse_idmap), "1", "source:target" or a default target, each ID a
// pve-storage-id. parse_idmap and the pair check each add a newline to the
// inner error.
func verifyStoragePair(entry string) string {
	if entry == "1" {
		return ""
	}
	ids := []string{entry}
	if src, dst, ok := strings.Cut(entry, ":"); ok && src != "" && dst != "" && !strings.Contains(dst, ":") {
		ids = []string{src, strings.TrimSuffix(dst, "\n")}
	}
	for _, id := range ids {
		if msg := parseID(id, "storage"); msg != "" {
			return fmt.Sprintf("entry '%s' contains invalid ID - %s\n\n", entry, msg)
		}
	}
	return ""
}

// parseStartupOrder is pve_parse_startup_order: a false value fails,
// otherwise every non-blank comma part is [order=]N, up=N or down=N.
func parseStartupOrder(v string) bool {
	if v == "" || v == "0" {
		return false
	}
	for _, part := range strings.Split(v, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		ok := false
		for _, re := range startupPartRE {
			ok = ok || re.MatchString(part)
		}
		if !ok {
			return false
		}
	}
	return true
}

// verifyHotplug is parse_hotplug_features, whose die escapes
// pve_verify_hotplug_features: "0" disables, "1" is the default list.
func verifyHotplug(v string) string {
	if v == "0" || v == "1" {
		return ""
	}
	for _, f := range splitList(v) {
		if !hotplugRE.MatchString(f) {
			return fmt.Sprintf("invalid hotplug feature '%s'", f)
		}
	}
	return ""
}

// privileges of pve-access-control's privgroups (pve-priv): 9.x replaced
// VM.Monitor by the VM.GuestAgent.* privileges and added VM.Replicate.
func validPrivs(rel pveRelease) map[string]bool {
	privs := []string{
		"Permissions.Modify",
		"VM.Config.Disk", "VM.Config.CPU", "VM.Config.Memory", "VM.Config.Network", "VM.Config.HWType",
		"VM.Config.Options", "VM.Allocate", "VM.Clone", "VM.Migrate", "VM.Snapshot", "VM.Snapshot.Rollback",
		"VM.Config.CDROM", "VM.Config.Cloudinit", "VM.Console", "VM.Backup", "VM.PowerMgmt", "VM.Audit",
		"Sys.PowerMgmt", "Sys.Modify", "Sys.Incoming", "Sys.AccessNetwork", "Sys.Console", "Sys.Syslog", "Sys.Audit",
		"Datastore.Allocate", "Datastore.AllocateTemplate", "Datastore.AllocateSpace", "Datastore.Audit",
		"SDN.Allocate", "SDN.Audit", "SDN.Use",
		"Realm.Allocate", "User.Modify", "Group.Allocate", "Realm.AllocateUser",
		"Pool.Allocate", "Pool.Audit",
		"Mapping.Modify", "Mapping.Use", "Mapping.Audit",
	}
	if rel.atLeast9() {
		privs = append(privs, "VM.GuestAgent.Unrestricted", "VM.Replicate", "VM.GuestAgent.FileRead",
			"VM.GuestAgent.FileSystemMgmt", "VM.GuestAgent.FileWrite", "VM.GuestAgent.Audit")
	} else {
		privs = append(privs, "VM.Monitor")
	}
	m := map[string]bool{}
	for _, p := range privs {
		m[p] = true
	}
	return m
}

// privListParam is a pve-priv-list parameter of the release.
func privListParam(rel pveRelease) param {
	p := pFmt("pve-priv-list")
	valid := validPrivs(rel)
	p.formatFn = func(v string) string {
		for _, priv := range splitList(v) {
			if !valid[priv] {
				return fmt.Sprintf("invalid privilege '%s'", priv)
			}
		}
		return ""
	}
	return p
}

// opt makes a parameter optional.
func (p param) opt() param { p.optional = true; return p }

// draidConfigParam is pve-storage's draid-config property string (API2
// Disks/ZFS.pm): both keys required.
func draidConfigParam() param {
	return psParam(draidConfigFormat, "draid-config")
}
