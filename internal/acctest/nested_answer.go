package acctest

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// ValidateAnswer checks an answer.toml of PVE's automated installer
// (proxmox-auto-installer, PVE 8.2+) as far as it can be checked without
// the installer: TOML syntax, the sections and keys the installer knows
// (it refuses unknown ones), their types, the required ones, and the
// checks the installer makes before it touches a disk (root password
// length, one of password and hashed password, mail address, keymap,
// network and disk selection). Every problem is reported, each naming
// its key. The nested lab (examples/nested-lab) is tested with it,
// since nothing here runs the installer.
func ValidateAnswer(text string) error {
	var doc map[string]any
	if _, err := toml.Decode(text, &doc); err != nil {
		return fmt.Errorf("answer.toml is not TOML: %w", err)
	}
	v := &answerCheck{}
	v.section(doc, "global", true, map[string]keyRule{
		"keyboard":             {kind: "string", required: true, check: oneOf(answerKeymaps...)},
		"country":              {kind: "string", required: true, check: matches(`^[a-z]{2}$`, "a two-letter country code such as us")},
		"fqdn":                 {kind: "string", required: true, check: fqdn},
		"mailto":               {kind: "string", required: true, check: matches(`^[^@\s]+@[^@\s]+$`, "a mail address")},
		"timezone":             {kind: "string", required: true, check: matches(`^(UTC|[A-Z][A-Za-z_+-]+(/[A-Za-z0-9_+-]+)+)$`, "UTC or an Area/City zone")},
		"root-password":        {kind: "string", check: minLen(8)},
		"root-password-hashed": {kind: "string"},
		"root-ssh-keys":        {kind: "[]string"},
		"reboot-on-error":      {kind: "bool"},
		"reboot-mode":          {kind: "string", check: oneOf("reboot", "power-off")},
	})
	if g, ok := doc["global"].(map[string]any); ok {
		_, plain := g["root-password"]
		_, hashed := g["root-password-hashed"]
		switch {
		case plain && hashed:
			v.add("global: root-password and root-password-hashed cannot both be set")
		case !plain && !hashed:
			v.add("global: one of root-password and root-password-hashed must be set")
		}
	}
	v.section(doc, "network", true, map[string]keyRule{
		"source":  {kind: "string", required: true, check: oneOf("from-dhcp", "from-answer")},
		"cidr":    {kind: "string", check: cidr},
		"dns":     {kind: "string", check: ip},
		"gateway": {kind: "string", check: ip},
		"filter":  {kind: "map[string]string"},
	})
	if n, ok := doc["network"].(map[string]any); ok && n["source"] == "from-answer" {
		for _, k := range []string{"cidr", "dns", "gateway", "filter"} {
			if _, ok := n[k]; !ok {
				v.add("network: source = \"from-answer\" needs %s", k)
			}
		}
		c, _ := n["cidr"].(string)
		gw, _ := n["gateway"].(string)
		if p, err := netip.ParsePrefix(c); err == nil {
			if a, err := netip.ParseAddr(gw); err == nil && !p.Masked().Contains(a) {
				v.add("network: gateway %s is outside cidr %s", gw, c)
			}
		}
	}
	v.section(doc, "disk-setup", true, map[string]keyRule{
		"filesystem":   {kind: "string", required: true, check: oneOf("ext4", "xfs", "zfs", "btrfs")},
		"disk-list":    {kind: "[]string"},
		"filter":       {kind: "map[string]string"},
		"filter-match": {kind: "string", check: oneOf("any", "all")},
		"lvm":          {kind: "table"},
		"zfs":          {kind: "table"},
		"btrfs":        {kind: "table"},
	})
	if d, ok := doc["disk-setup"].(map[string]any); ok {
		_, list := d["disk-list"]
		_, filter := d["filter"]
		if list == filter {
			v.add("disk-setup: set exactly one of disk-list and filter")
		}
	}
	v.section(doc, "first-boot", false, map[string]keyRule{
		"source": {kind: "string", required: true}, "ordering": {kind: "string"}, "url": {kind: "string"}, "cert-fingerprint": {kind: "string"},
	})
	v.section(doc, "post-installation-webhook", false, map[string]keyRule{
		"url": {kind: "string", required: true}, "cert-fingerprint": {kind: "string"},
	})
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		switch k {
		case "global", "network", "disk-setup", "first-boot", "post-installation-webhook":
		default:
			v.add("unknown section [%s]: the installer refuses unknown keys", k)
		}
	}
	if len(v.problems) > 0 {
		return errors.New(strings.Join(v.problems, "\n"))
	}
	return nil
}

// answerKeymaps are the keyboard layouts the installer offers.
var answerKeymaps = []string{"de", "de-ch", "dk", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch", "hu", "is", "it",
	"jp", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "se", "si", "tr"}

type keyRule struct {
	kind     string // string, bool, []string, map[string]string, table
	required bool
	check    func(string) string // "" when fine, else what it must be
}

type answerCheck struct{ problems []string }

func (v *answerCheck) add(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *answerCheck) section(doc map[string]any, name string, required bool, rules map[string]keyRule) {
	raw, ok := doc[name]
	if !ok {
		if required {
			v.add("missing section [%s]", name)
		}
		return
	}
	sec, ok := raw.(map[string]any)
	if !ok {
		v.add("%s must be a section ([%s]), not a %T", name, name, raw)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(rules)) {
		if _, ok := sec[k]; !ok && rules[k].required {
			v.add("%s.%s is required", name, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(sec)) {
		r, ok := rules[k]
		if !ok {
			v.add("%s.%s: unknown key (the installer refuses unknown keys)", name, k)
			continue
		}
		val := sec[k]
		if !hasKind(val, r.kind) {
			v.add("%s.%s must be %s, not %T", name, k, r.kind, val)
			continue
		}
		if s, isStr := val.(string); isStr && r.check != nil {
			if want := r.check(s); want != "" {
				v.add("%s.%s = %q: must be %s", name, k, s, want)
			}
		}
	}
}

func hasKind(val any, kind string) bool {
	switch kind {
	case "string":
		_, ok := val.(string)
		return ok
	case "bool":
		_, ok := val.(bool)
		return ok
	case "[]string":
		list, ok := val.([]any)
		for _, e := range list {
			if _, isStr := e.(string); !isStr {
				return false
			}
		}
		return ok
	case "map[string]string":
		m, ok := val.(map[string]any)
		for _, e := range m {
			if _, isStr := e.(string); !isStr {
				return false
			}
		}
		return ok
	case "table":
		_, ok := val.(map[string]any)
		return ok
	}
	return false
}

func oneOf(vals ...string) func(string) string {
	return func(s string) string {
		for _, v := range vals {
			if s == v {
				return ""
			}
		}
		return "one of " + strings.Join(vals, ", ")
	}
}

func matches(pattern, what string) func(string) string {
	re := regexp.MustCompile(pattern)
	return func(s string) string {
		if re.MatchString(s) {
			return ""
		}
		return what
	}
}

func minLen(n int) func(string) string {
	return func(s string) string {
		if len(s) >= n {
			return ""
		}
		return fmt.Sprintf("at least %d characters long", n)
	}
}

var fqdnLabelRE = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)

func fqdn(s string) string {
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return "a fully qualified name with a domain, such as pve1.lab.example"
	}
	for _, l := range labels {
		if !fqdnLabelRE.MatchString(l) {
			return "a fully qualified name of letters, digits and '-' labels"
		}
	}
	return ""
}

func cidr(s string) string {
	if p, err := netip.ParsePrefix(s); err != nil || p.Addr() == p.Masked().Addr() {
		return "an address with its prefix length, such as 172.27.2.10/24 (not the network's address)"
	}
	return ""
}

func ip(s string) string {
	if _, err := netip.ParseAddr(s); err != nil {
		return "an IP address"
	}
	return ""
}
