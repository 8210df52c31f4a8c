package pvesim

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// BenchmarkNetworkList measures the simulator answering GET of one node's
// interface list with 40 interfaces staged (what every plan asks for), so
// a slow simulator cannot hide inside acceptance-test timings.
func BenchmarkNetworkList(b *testing.B) {
	sim, err := Start(Options{ClusterName: "bench", TaskDuration: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sim.Close() }()
	info := sim.Info()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(info.CACertPEM))
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	do := func(method, path string, form url.Values) {
		req, _ := http.NewRequest(method, info.Endpoint+"/api2/json"+path, strings.NewReader(form.Encode()))
		req.Header.Set("Authorization", "PVEAPIToken="+info.APIToken)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("%s %s: %s", method, path, res.Status)
		}
	}
	for i := 0; i < 40; i++ {
		do("POST", "/nodes/z2g4a/network", url.Values{"iface": {fmt.Sprintf("vmbr%d", i)}, "type": {"bridge"},
			"cidr": {fmt.Sprintf("10.1.%d.1/24", i)}, "autostart": {"1"}})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		do("GET", "/nodes/z2g4a/network", nil)
	}
}
