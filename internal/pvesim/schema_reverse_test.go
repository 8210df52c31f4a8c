package pvesim

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestSimulatorMatchesOfficialSchema checks that what pvesim accepts exists
// in PVE; this is the other direction: whatever PVE rejects, pvesim must
// reject too. For each served method, the test sends every parameter of the
// release's official schema with a value that schema forbids (derived from
// its type, range, length, enum, pattern and format) plus one unknown
// parameter, and expects PVE's answer: 400 "Parameter verification
// failed." naming exactly the failing keys. PVE::JSONSchema::validate
// (pve-common src/PVE/JSONSchema.pm) checks every property before raising,
// so all of them are reported at once, together with required parameters
// left out and those another sent parameter `requires`.

// formatAcceptsAll marks a format whose check accepts every string
// (pve-common registers 'string' with an empty validator, for 'string-list').
const formatAcceptsAll = "\x00"

// invalidFormatExample is one value per PVE format name that its verifier
// (register_format in pve-common, pve-storage, qemu-server, pve-manager,
// pve-access-control, pve-ha-manager) refuses. A '-list' or '-opt' format
// uses its base name's entry, as check_format does. A served parameter with
// a format missing here fails the test: add the format's invalid example.
var invalidFormatExample = map[string]string{
	"CIDR":                     "10.0.0.0/99",
	"CIDRv4":                   "10.0.0.0/99",
	"CIDRv6":                   "fd00::/999",
	"address":                  "bad host!",
	"dns-name":                 "-bad-",
	"email":                    "not-an-email",
	"ip":                       "300.1.1.1",
	"ipv4":                     "300.1.1.1",
	"ipv4mask":                 "255.0.255.0",
	"ipv6":                     "fd00::zz",
	"mac-prefix":               "zz",
	"pem-certificate":          "not a pem",
	"pem-certificate-chain":    "not a pem",
	"pem-string":               "not a pem",
	"prune-backups":            "keep-bogus=1",
	"pve-acme-alias":           "-bad-",
	"pve-acme-domain":          "-bad-",
	"pve-configid":             "1bad!",
	"pve-command-batch":        "not json",
	"pve-cpuset":               "a-b",
	"pve-dir-override":         "images",
	"pve-ha-group-node":        "-bad-",
	"pve-ha-node":              "-bad-",
	"pve-ha-resource-id":       "100",
	"pve-ha-resource-or-vm-id": "bad!",
	"pve-hotplug-features":     "bogus",
	"pve-iface":                "1bad!",
	"pve-node":                 "-bad-",
	"pve-poolid":               "bad!",
	"pve-priv":                 "Bogus.Priv",
	"pve-qemu-sev-fmt":         "bogus_key_xyz=1",
	"pve-qemu-tdx-fmt":         "bogus_key_xyz=1",
	"pve-qm-boot":              "bogus_key_xyz=1",
	"pve-qm-bootdisk":          "bogus0",
	"pve-qm-cicustom":          "bogus_key_xyz=1",
	"pve-qm-hostpci":           "bogus_key_xyz=1",
	"pve-qm-ide":               "bogus_key_xyz=1",
	"pve-qm-ipconfig":          "bogus_key_xyz=1",
	"pve-qm-rng":               "bogus_key_xyz=1",
	"pve-qm-smbios1":           "bogus_key_xyz=1",
	"pve-qm-watchdog":          "bogus_key_xyz=1",
	"pve-realm":                "1bad!",
	"pve-startup-order":        "bogus_key_xyz=1",
	"pve-storage-content":      "bogus",
	"pve-storage-id":           "1bad!",
	"pve-storage-options":      "has space",
	"pve-storage-path":         "relative/path",
	"pve-storage-portal-dns":   "bad host!",
	"pve-storage-server":       "bad host!",
	"pve-storage-vgname":       "-bad",
	"pve-tag":                  "!bad",
	"pve-task-status-type":     "bogus",
	"pve-vlan-id-or-range":     "4095",
	"pve-vm-cpu-conf":          "bogus_key_xyz=1",
	"pve-vmid":                 "99",
	"pve-volume-id":            "no-colon",
	"storage-pair":             "1bad!",
	"string":                   formatAcceptsAll,
	"urlencoded":               "a b",
}

// pathValues fill the URL's variables with values valid for the started
// simulator: PVE checks proxying (the node must exist) before parameters,
// and path variables are parameters too.
func pathValues(upid string) map[string]string {
	return map[string]string{"node": "z2g4a", "vmid": "100", "storage": "local", "iface": "vmbr0", "upid": upid,
		"name": "tank", "id": "z2g4a", "monid": "z2g4a", "osdid": "0", "flag": "noout", "sid": "vm:100",
		"group": "grp1", "rule": "rule1", "volume": "local:iso/x.iso", "poolid": "pool1"}
}

// perlRegexp turns a schema pattern (Perl, anchored by check_prop as
// ^pattern$) into Go syntax: qr// stringifies as (?^:...) or (?^i:...).
func perlRegexp(p string) (*regexp.Regexp, error) {
	p = strings.ReplaceAll(p, "(?^:", "(?:")
	p = strings.ReplaceAll(p, "(?^i:", "(?i:")
	return regexp.Compile("^(?:" + p + ")$")
}

// invalidValues are the values PVE's check_prop refuses for p, one per
// check it makes: type, range, pattern, length, enum, format.
type invalid struct{ value, check string }

func invalidValues(t *testing.T, name string, p apiParam, missingFormat map[string][]string, where string) []invalid {
	var out []invalid
	num := func(n *looseNumber, d float64, integer bool) string {
		v := float64(*n) + d
		if integer {
			return strconv.FormatInt(int64(v), 10)
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	switch p.Type {
	case "boolean":
		return []invalid{{"2", "boolean type"}}
	case "integer", "number":
		out = append(out, invalid{"x1", p.Type + " type"})
		if p.Maximum != nil {
			out = append(out, invalid{num(p.Maximum, 1, p.Type == "integer"), "maximum"})
		}
		if p.Minimum != nil {
			out = append(out, invalid{num(p.Minimum, -1, p.Type == "integer"), "minimum"})
		}
		return out
	case "string":
	default:
		t.Logf("%s %s: type %q has no invalid value", where, name, p.Type)
		return nil
	}
	switch f := p.Format.(type) {
	case string:
		base := f
		if b, ok := strings.CutSuffix(f, "-list"); ok {
			base = b
		} else if b, ok := strings.CutSuffix(f, "-opt"); ok {
			base = b
		}
		ex, ok := invalidFormatExample[base]
		if !ok {
			missingFormat[base] = append(missingFormat[base], where+" "+name)
		} else if ex != formatAcceptsAll {
			out = append(out, invalid{ex, "format " + f})
		}
	case map[string]any:
		// A property string: a key its format does not define.
		out = append(out, invalid{"bogus_key_xyz=1", "property string"})
	}
	if p.Pattern != "" {
		re, err := perlRegexp(p.Pattern)
		if err != nil {
			t.Logf("%s %s: pattern %q does not compile in Go: %v", where, name, p.Pattern, err)
		} else {
			for _, cand := range []string{"!bad value!", "-", "0"} {
				if !re.MatchString(cand) {
					out = append(out, invalid{cand, "pattern"})
					break
				}
			}
		}
	}
	if p.MaxLength != nil {
		out = append(out, invalid{strings.Repeat("a", *p.MaxLength+1), "maxLength"})
	}
	if p.MinLength != nil && *p.MinLength >= 2 {
		out = append(out, invalid{"a", "minLength"})
	}
	if len(p.Enum) > 0 {
		out = append(out, invalid{"bogus_enum_xyz", "enum"})
	}
	return out
}

// simParamAsAPI describes pvesim's own declaration the way apidata does,
// for methods the official schema lacks.
func simParamAsAPI(p param) apiParam {
	a := apiParam{Type: typeNames[p.typ], Optional: looseBool(p.optional), Enum: p.enum, Requires: p.requires}
	if p.min != nil {
		n := looseNumber(*p.min)
		a.Minimum = &n
	}
	if p.minF != nil {
		n := looseNumber(*p.minF)
		a.Minimum = &n
	}
	if p.max != nil {
		n := looseNumber(*p.max)
		a.Maximum = &n
	}
	if p.maxLength > 0 {
		a.MaxLength = &p.maxLength
	}
	if p.minLength > 0 {
		a.MinLength = &p.minLength
	}
	if p.pattern != nil {
		a.Pattern = strings.TrimSuffix(strings.TrimPrefix(p.pattern.String(), "^"), "$")
	}
	if p.format != "" {
		a.Format = p.format
	} else if p.formatFn != nil {
		a.Format = map[string]any{}
	}
	return a
}

// expandIndexed turns a schema family "net[n]" into its first member.
func expandIndexed(name string) string {
	if b, ok := strings.CutSuffix(name, "[n]"); ok {
		return b + "0"
	}
	return name
}

func rootTicketClient(t *testing.T, info Info) *client {
	t.Helper()
	c := newClient(t, info, "")
	c.token = ""
	d := c.ok("POST", "/access/ticket", vals("username", "root@pam", "password", info.RootPassword)).data().(map[string]any)
	c.ticket, _ = d["ticket"].(string)
	c.csrf, _ = d["CSRFPreventionToken"].(string)
	if c.ticket == "" || c.csrf == "" {
		t.Fatalf("ticket answer: %v", d)
	}
	return c
}

func TestReverseSchemaInvalidParamsRejected(t *testing.T) {
	for _, relName := range coverageReleases {
		t.Run(relName, func(t *testing.T) {
			official := loadAPIData(t, relName)
			if official == nil {
				t.Skip("official schema ../shared/pve-api not found beside the repository")
			}
			s, info := startSim(t, Options{ClusterName: "lab", PVERelease: relName, TaskDuration: -1, NoSSH: true})
			c := rootTicketClient(t, info)
			r := c.ok("POST", "/nodes/z2g4a/qemu", vals("vmid", "100", "scsi0", "local-lvm:1", "net0", "virtio,bridge=vmbr0"))
			upid := r.data().(string)
			if st := c.waitTask("z2g4a", upid); st["exitstatus"] != "OK" {
				t.Fatalf("qmcreate: %v", st)
			}
			pv := pathValues(upid)

			missingFormat := map[string][]string{}
			unrejected := map[string][]string{} // format (or check) -> method param
			undeclared := map[string][]string{} // method -> PVE parameters pvesim does not know
			routes := append([]*route(nil), s.routes...)
			sort.Slice(routes, func(i, j int) bool { return routes[i].pattern < routes[j].pattern })
			for _, rt := range routes {
				verbs := make([]string, 0, len(rt.methods))
				for v := range rt.methods {
					verbs = append(verbs, v)
				}
				sort.Strings(verbs)
				for _, verb := range verbs {
					md := rt.methods[verb]
					where := verb + " " + rt.pattern
					if strings.HasSuffix(rt.pattern, "/upload") {
						// pve-http-server parses an upload's body itself and
						// refuses a form before any parameter check
						// (storage_upload_test.go checks both).
						continue
					}
					spec := map[string]apiParam{}
					additional := false
					if om, ok := official[rt.pattern][verb]; ok {
						for k, p := range om.Parameters.Properties {
							spec[expandIndexed(k)] = p
						}
						additional = om.Parameters.AdditionalProperties == nil || bool(*om.Parameters.AdditionalProperties)
					} else {
						t.Logf("%s: not in the official %s schema, checked against pvesim's declaration", where, relName)
						for k, p := range md.params {
							spec[k] = simParamAsAPI(p)
						}
					}
					path := "/"
					vars := map[string]bool{}
					for _, seg := range rt.segs {
						if strings.HasPrefix(seg, "{") {
							name := seg[1 : len(seg)-1]
							v, ok := pv[name]
							if !ok {
								t.Fatalf("%s: no value for path variable %s; add one to pathValues", where, name)
							}
							vars[name] = true
							seg = url.PathEscape(v)
						}
						path += seg + "/"
					}
					path = strings.TrimSuffix(path, "/")

					names := make([]string, 0, len(spec))
					variants := map[string][]invalid{}
					rounds := 1
					for k, p := range spec {
						if vars[k] {
							continue
						}
						names = append(names, k)
						variants[k] = invalidValues(t, k, p, missingFormat, where)
						rounds = max(rounds, len(variants[k]))
					}
					sort.Strings(names)
					for round := 0; round < rounds; round++ {
						params := url.Values{}
						want := map[string]string{} // key -> the check it fails
						for _, k := range names {
							if vs := variants[k]; round < len(vs) {
								params.Set(k, vs[round].value)
								want[k] = vs[round].check
							}
						}
						for _, k := range names {
							p := spec[k]
							if _, sent := want[k]; !sent && !bool(p.Optional) && !hasInstanceTypes(p) {
								want[k] = "not optional"
							}
						}
						for _, k := range names {
							if req := spec[k].Requires; req != "" && params.Has(k) && !params.Has(req) && !vars[req] {
								if _, ok := want[req]; !ok {
									want[req] = "requires"
								}
							}
						}
						params.Set("bogus_param_xyz", "1")
						if !additional {
							want["bogus_param_xyz"] = "additionalProperties"
						}
						name := fmt.Sprintf("%s#%d", where, round)
						res := c.do(verb, path, params)
						got := res.errs()
						var problems []string
						if res.status != 400 || strings.TrimSpace(res.msg()) != "Parameter verification failed." {
							problems = append(problems, fmt.Sprintf("status %d %q", res.status, firstLine(res.msg())))
						}
						for _, k := range sortedKeys(want) {
							if msg, ok := got[k].(string); ok {
								if msg == unknownParamMsg && want[k] != "additionalProperties" {
									// pvesim lacks the parameter: it would refuse valid values too.
									if !slices.Contains(undeclared[where], k) {
										undeclared[where] = append(undeclared[where], k)
									}
								} else if ws := expectedMessages(spec[k], want[k], params.Get(k)); !containsAny(msg, ws) {
									problems = append(problems, fmt.Sprintf("%s: error %.200q, want it to contain %.200q", k, msg, ws[0]))
								}
							}
							if _, ok := got[k]; !ok {
								problems = append(problems, fmt.Sprintf("%s (%s %.40q) not reported", k, want[k], params.Get(k)))
								unrejected[want[k]] = append(unrejected[want[k]], where+" "+k)
							}
						}
						for _, k := range sortedKeys(got) {
							if _, ok := want[k]; !ok {
								problems = append(problems, fmt.Sprintf("%s reported but valid: %v", k, got[k]))
							}
						}
						if len(problems) > 0 {
							t.Errorf("%s: %s", name, strings.Join(problems, "; "))
						}
					}
				}
			}
			for _, w := range sortedKeys(undeclared) {
				t.Errorf("%s: pvesim does not declare %d parameters PVE %s has: %s", w, len(undeclared[w]), relName, strings.Join(undeclared[w], " "))
			}
			for _, f := range sortedKeys(missingFormat) {
				t.Errorf("format %q (e.g. %s) has no entry in invalidFormatExample", f, missingFormat[f][0])
			}
			for _, k := range sortedKeys(unrejected) {
				t.Logf("pvesim %s does not reject %s: %d parameters, e.g. %s", relName, k, len(unrejected[k]), unrejected[k][0])
			}
		})
	}
}

func hasInstanceTypes(p apiParam) bool { return len(p.InstanceTypes) > 0 }

const unknownParamMsg = "property is not defined in schema and the schema does not allow additional properties"

// expectedMessages are the texts check_prop may give for a value made to
// fail one check (pve-common JSONSchema.pm check_type, check_prop,
// check_object). After the type, check_prop tries format, pattern,
// maxLength, minLength, the range (of numbers), then enum and stops at the
// first failure, so a value made too long or out of range may fail the
// format or pattern first (vmid=99 is not a valid pve-vmid).
func expectedMessages(p apiParam, check, value string) []string {
	bound := func(n *looseNumber) string { return strconv.FormatFloat(float64(*n), 'f', -1, 64) }
	var out []string
	switch {
	case strings.HasSuffix(check, " type"):
		return []string{fmt.Sprintf("type check ('%s') failed - got '%s'", p.Type, value)}
	case check == "maximum":
		out = append(out, "value must have a maximum value of "+bound(p.Maximum))
	case check == "minimum":
		out = append(out, "value must have a minimum value of "+bound(p.Minimum))
	case check == "not optional":
		return []string{"property is missing and it is not optional"}
	case check == "requires":
		return []string{"missing property required by '"}
	case check == "additionalProperties":
		return []string{unknownParamMsg}
	case check == "maxLength":
		out = append(out, fmt.Sprintf("value may only be %d characters long", *p.MaxLength))
	case check == "minLength":
		out = append(out, fmt.Sprintf("value must be at least %d characters long", *p.MinLength))
	case check == "pattern":
		out = append(out, "value does not match the regex pattern")
	case check == "enum":
		out = append(out, fmt.Sprintf("value '%s' does not have a value in the enumeration '%s'", value, strings.Join(p.Enum, ", ")))
	default: // named formats and property strings
		return []string{"invalid format - "}
	}
	if f, ok := p.Format.(string); p.Format != nil && (!ok || f != "string") {
		out = append(out, "invalid format - ")
	}
	if p.Pattern != "" && check != "pattern" {
		if re, err := perlRegexp(p.Pattern); err == nil && !re.MatchString(value) {
			out = append(out, "value does not match the regex pattern")
		}
	}
	if p.MaxLength != nil && check != "maxLength" && len(value) > *p.MaxLength {
		out = append(out, fmt.Sprintf("value may only be %d characters long", *p.MaxLength))
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }
