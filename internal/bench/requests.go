package bench

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

var (
	upidSegRE = regexp.MustCompile(`^UPID:`)
	numSegRE  = regexp.MustCompile(`^[0-9]+$`)
)

// Kind is a request's method and path with its variable parts named:
// "GET /nodes/{node}/qemu/{id}/config". nodes are the lab's node names.
func Kind(r pvesim.Request, nodes map[string]bool) string {
	segs := strings.Split(strings.Trim(r.Path, "/"), "/")
	for i, s := range segs {
		switch {
		case nodes[s]:
			segs[i] = "{node}"
		case upidSegRE.MatchString(s):
			segs[i] = "{upid}"
		case numSegRE.MatchString(s):
			segs[i] = "{id}"
		case i > 0 && (segs[i-1] == "pool" || segs[i-1] == "storage" || segs[i-1] == "mon" || segs[i-1] == "mgr"):
			segs[i] = "{name}"
		}
	}
	return r.Method + " /" + strings.Join(segs, "/")
}

// KindCount is how often one kind of request was made.
type KindCount struct {
	Kind  string
	Count int
}

// CountRequests counts requests by kind, most frequent first.
func CountRequests(reqs []pvesim.Request, nodes []string) []KindCount {
	set := map[string]bool{}
	for _, n := range nodes {
		set[n] = true
	}
	m := map[string]int{}
	for _, r := range reqs {
		m[Kind(r, set)]++
	}
	out := make([]KindCount, 0, len(m))
	for k, n := range m {
		out = append(out, KindCount{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// Top formats the n most frequent kinds as "count kind" lines.
func Top(kinds []KindCount, n int) string {
	var b strings.Builder
	for i, k := range kinds {
		if i == n {
			fmt.Fprintf(&b, "  … %d more kinds\n", len(kinds)-n)
			break
		}
		fmt.Fprintf(&b, "  %5d %s\n", k.Count, k.Kind)
	}
	return b.String()
}
