package pvesim

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The official PVE API schema is AGPL and never part of this repository.
// When ../shared/pve-api (beside the clone, as on our machines and in CI)
// is present, this test reads it at run time and checks that every
// parameter the simulator accepts exists in PVE with the same type,
// optionality, enum, range, length and `requires`, and that root@pam-only
// methods are exactly those without permissions. A simulator laxer than
// PVE would make every test behind it a lie.

type schemaParam struct {
	Name      string       `json:"name"`
	Type      string       `json:"type"`
	Optional  int          `json:"optional"`
	Enum      []string     `json:"enum"`
	Minimum   *looseNumber `json:"minimum"`
	Maximum   *looseNumber `json:"maximum"`
	MaxLength *int         `json:"maxLength"`
	MinLength *int         `json:"minLength"`
	Requires  string       `json:"requires"`
	Format    any          `json:"format"`
}

type schemaMethod struct {
	Permissions json.RawMessage `json:"permissions"`
	Parameters  []schemaParam   `json:"parameters"`
}

func loadOfficialSchema(t *testing.T, file string) map[string]map[string]schemaMethod {
	t.Helper()
	p := findShared(t, file)
	if p == "" {
		t.Skipf("official schema ../shared/pve-api/%s not found beside the repository; skipping the conformance check", file)
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	out := map[string]map[string]schemaMethod{}
	for path, methods := range doc.Paths {
		out[path] = map[string]schemaMethod{}
		for verb, body := range methods {
			if verb == "_children" {
				continue
			}
			var m schemaMethod
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("%s %s %s: %v", p, verb, path, err)
			}
			out[path][verb] = m
		}
	}
	return out
}

// looseNumber is a schema bound, which apidata writes as a number or, in a
// few places, a string.
type looseNumber float64

func (n *looseNumber) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err == nil {
		*n = looseNumber(f)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	f, err := strconv.ParseFloat(s, 64)
	*n = looseNumber(f)
	return err
}

type testingT interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	Fatal(args ...any)
}

// Each release the simulator can be must match that release's schema
// exactly.
func TestSimulatorMatchesOfficialSchema(t *testing.T) {
	for file, release := range map[string]string{"subset.json": "9.1", "subset-pve8.4.json": "8.4"} {
		t.Run(release, func(t *testing.T) {
			official := loadOfficialSchema(t, file)
			rel, err := lookupRelease(release)
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, rt := range buildRoutes(rel) {
				for verb, md := range rt.methods {
					om, ok := official[rt.pattern][verb]
					if !ok {
						// Paths outside the extracted subset (auth, tasks) are
						// checked where the subset has them.
						t.Logf("not in %s: %s %s", file, verb, rt.pattern)
						continue
					}
					checked++
					rootOnly := len(om.Permissions) == 0 || string(om.Permissions) == "null"
					if md.rootOnly != rootOnly {
						t.Errorf("%s %s: simulator rootOnly=%v, PVE root@pam-only=%v", verb, rt.pattern, md.rootOnly, rootOnly)
					}
					byName := map[string]schemaParam{}
					for _, p := range om.Parameters {
						byName[p.Name] = p
					}
					names := make([]string, 0, len(md.params))
					for n := range md.params {
						names = append(names, n)
					}
					sort.Strings(names)
					for _, name := range names {
						pp := byName[name]
						if pp.Name == "" {
							// Indexed families (link0..link7) are one
							// "link[n]" entry in the schema.
							pp = byName[strings.TrimRight(name, "0123456789")+"[n]"]
						}
						compareParam(t, verb+" "+rt.pattern+" "+name, md.params[name], pp, pp.Name != "")
					}
				}
			}
			if checked == 0 {
				t.Fatal("no simulator route was found in the official schema; the path patterns drifted")
			}
		})
	}
}

func compareParam(t testingT, where string, sim param, pve schemaParam, exists bool) {
	t.Helper()
	if !exists {
		t.Errorf("%s: the simulator accepts a parameter PVE does not have", where)
		return
	}
	if typeNames[sim.typ] != pve.Type {
		t.Errorf("%s: type %s, PVE %s", where, typeNames[sim.typ], pve.Type)
	}
	if sim.optional != (pve.Optional == 1) {
		t.Errorf("%s: optional=%v, PVE optional=%v", where, sim.optional, pve.Optional == 1)
	}
	if !slices.Equal(sortedCopy(sim.enum), sortedCopy(pve.Enum)) {
		t.Errorf("%s: enum %v, PVE %v", where, sim.enum, pve.Enum)
	}
	lo := sameBound(sim.min, pve.Minimum)
	if sim.minF != nil {
		lo = pve.Minimum != nil && *sim.minF == float64(*pve.Minimum)
	}
	if !lo || !sameBound(sim.max, pve.Maximum) {
		t.Errorf("%s: range %v..%v, PVE %v..%v", where, fmtBound(sim.min), fmtBound(sim.max), fmtF(pve.Minimum), fmtF(pve.Maximum))
	}
	if pve.MaxLength != nil && sim.maxLength != *pve.MaxLength {
		t.Errorf("%s: maxLength %d, PVE %d", where, sim.maxLength, *pve.MaxLength)
	}
	if sim.requires != pve.Requires {
		t.Errorf("%s: requires %q, PVE %q", where, sim.requires, pve.Requires)
	}
	if f, ok := pve.Format.(string); ok && sim.format != "" && sim.format != f {
		t.Errorf("%s: format %q, PVE %q", where, sim.format, f)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

func sameBound(a *int64, b *looseNumber) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return float64(*a) == float64(*b)
}

func fmtBound(a *int64) any {
	if a == nil {
		return "-"
	}
	return *a
}

func fmtF(a *looseNumber) any {
	if a == nil {
		return "-"
	}
	return *a
}
