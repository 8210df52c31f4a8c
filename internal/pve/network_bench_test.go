package pve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkListNetwork measures reading and decoding one node's interface
// list of 64 interfaces in PVE's mixed-type JSON (the call every plan makes
// once per node).
func BenchmarkListNetwork(b *testing.B) {
	var items []string
	for i := 0; i < 64; i++ {
		items = append(items, fmt.Sprintf(`{"iface":"vmbr%d","type":"bridge","bridge_ports":"bond0","bridge_vlan_aware":1,`+
			`"bridge_vids":"2-4094","address":"10.0.%d.1","netmask":"24","cidr":"10.0.%d.1/24","autostart":1,"active":1,`+
			`"method":"static","families":["inet"],"priority":%d,"mtu":"9000","comments":"bench\n","exists":null}`, i, i, i, i))
	}
	body := `{"data":[` + strings.Join(items, ",") + `],"changes":""}`
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	c, err := NewClient(Config{Endpoint: srv.URL, APIToken: "root@pam!bench=secret", TLSFingerprint: certFingerprintPVE(srv)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		list, err := c.Network(ctx, "z2g4a")
		if err != nil || len(list.Interfaces) != 64 {
			b.Fatalf("%v, %d interfaces", err, len(list.Interfaces))
		}
	}
}
