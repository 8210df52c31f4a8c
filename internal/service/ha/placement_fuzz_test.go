package ha

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// FuzzDecodeNodes: PVE's node list ("a:2,b") reads into a map that
// encodeNodes writes back as the same list (for the node names and
// priorities PVE accepts).
func FuzzDecodeNodes(f *testing.F) {
	for _, s := range []string{"pve1:2,pve2", "pve1", "", "a:1,a:2", " a : 3 ,b", "a:x", "a:-1", "a:99999999999999999999", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, diags := decodeNodes(s)
		if diags.HasError() {
			t.Fatalf("decodeNodes(%q): %v", s, diags)
		}
		var nodes map[string]int64
		m.ElementsAs(context.Background(), &nodes, false)
		for n, p := range nodes {
			if !framework.IsNodeName(n) || p < 0 || p > 1000 {
				return // not a list PVE writes
			}
			_ = strconv.FormatInt(p, 10)
		}
		enc, diags := encodeNodes(context.Background(), m)
		if diags.HasError() {
			t.Fatalf("encodeNodes: %v", diags)
		}
		again, _ := decodeNodes(enc)
		if !again.Equal(m) {
			t.Fatalf("decodeNodes(%q) = %v, encoded %q, which decodes as %v", s, m, enc, again)
		}
		if strings.Contains(enc, " ") {
			t.Fatalf("encodeNodes wrote blanks: %q", enc)
		}
	})
}
