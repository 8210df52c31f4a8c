package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// Interval is when Terraform worked on one resource instance during an
// apply: from its apply_start to its apply_complete (or apply_errored).
type Interval struct{ Start, End time.Time }

// ApplyTimes reads the machine-readable UI of `apply -json` (one JSON
// object per line; other lines are ignored) into each instance's interval.
func ApplyTimes(output string) map[string]Interval {
	out := map[string]Interval{}
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		ln := sc.Bytes()
		if len(ln) == 0 || ln[0] != '{' {
			continue
		}
		var m struct {
			Type      string `json:"type"`
			Timestamp string `json:"@timestamp"`
			Hook      struct {
				Resource struct {
					Addr string `json:"addr"`
				} `json:"resource"`
			} `json:"hook"`
		}
		if json.Unmarshal(ln, &m) != nil || m.Hook.Resource.Addr == "" {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, m.Timestamp)
		if err != nil {
			continue
		}
		iv := out[m.Hook.Resource.Addr]
		switch m.Type {
		case "apply_start":
			iv.Start = ts
		case "apply_complete", "apply_errored":
			iv.End = ts
		default:
			continue
		}
		out[m.Hook.Resource.Addr] = iv
	}
	return out
}

// Instance is one resource instance of a state: its address, its
// resource's type, the attributes the critical path attributes work by,
// and the resources it depends on.
type Instance struct {
	Addr      string
	Type      string
	Node      string
	IDs       []string // VMIDs, OSD ids, names: what PVE's task IDs hold
	DependsOn []string // resource addresses (without instance keys)
}

// StateInstances reads a terraform.tfstate (format 4).
func StateInstances(path string) ([]Instance, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var st struct {
		Resources []struct {
			Module    string `json:"module"`
			Mode      string `json:"mode"`
			Type      string `json:"type"`
			Name      string `json:"name"`
			Instances []struct {
				IndexKey     any            `json:"index_key"`
				Attributes   map[string]any `json:"attributes"`
				Dependencies []string       `json:"dependencies"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []Instance
	for _, r := range st.Resources {
		if r.Mode != "managed" {
			continue
		}
		base := r.Type + "." + r.Name
		if r.Module != "" {
			base = r.Module + "." + base
		}
		for _, in := range r.Instances {
			addr := base
			switch k := in.IndexKey.(type) {
			case string:
				addr += fmt.Sprintf("[%q]", k)
			case float64:
				addr += fmt.Sprintf("[%d]", int(k))
			}
			i := Instance{Addr: addr, Type: r.Type, DependsOn: in.Dependencies}
			for _, k := range []string{"node", "node_name", "target_node"} {
				if s, ok := in.Attributes[k].(string); ok && s != "" {
					i.Node = s
					break
				}
			}
			for _, k := range []string{"vmid", "vm_id", "osd_id", "id", "name", "pool", "iface", "sid", "dev", "device", "disk"} {
				switch v := in.Attributes[k].(type) {
				case string:
					if v != "" {
						i.IDs = append(i.IDs, v)
					}
				case float64:
					i.IDs = append(i.IDs, fmt.Sprint(int64(v)))
				}
			}
			out = append(out, i)
		}
	}
	return out, nil
}

// resourceOf is an instance address without its key: pve_x.y["a"] -> pve_x.y.
func resourceOf(addr string) string {
	if i := strings.LastIndexByte(addr, '['); i > 0 && strings.HasSuffix(addr, "]") {
		return addr[:i]
	}
	return addr
}
