package pve

import (
	"context"
	"encoding/hex"
	"io"
	"log"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fuzz targets for every parser of PVE text in this package. Seeds are the
// shapes the unit tests use; each target checks a property beyond "does
// not panic" where the parser has a printer (parse(print(x)) == x).

func FuzzParsePropertyString(f *testing.F) {
	for _, s := range []string{
		"", "ceph:vm-100-disk-0,cache=writeback,size=32G", "virtio=BC:24:11:00:00:01,bridge=vmbr0",
		"order=scsi0;net0", "dk=a=b", "account=default,domains=a.example;b.example", " k = v , ,x", "=v", "dk=a=b",
	} {
		f.Add("", s)
		f.Add("file", s)
		f.Add("dk", s)
	}
	f.Fuzz(func(t *testing.T, defaultKey, s string) {
		m := ParsePropertyString(defaultKey, s)
		// FormatPropertyString leaves out empty values; a key of "" has
		// no printed form.
		want := map[string]string{}
		for k, v := range m {
			if v != "" && k != "" {
				want[k] = v
			}
		}
		if strings.ContainsAny(defaultKey, ",=") || strings.TrimSpace(defaultKey) != defaultKey {
			return // no property string can name such a key
		}
		out := FormatPropertyString(defaultKey, want)
		if got := ParsePropertyString(defaultKey, out); !maps.Equal(got, want) {
			t.Fatalf("ParsePropertyString(%q, %q) = %q; printed %q, which parses as %q", defaultKey, s, want, out, got)
		}
	})
}

func FuzzParseDrive(f *testing.F) {
	for _, s := range []string{
		"ceph:vm-100-disk-1,cache=writeback,discard=on,iothread=1,size=32G,ssd=1",
		"file=ceph:vm-100-disk-1,ssd=on,iothread=yes,size=32G,discard=on,cache=writeback",
		"cache=none", "a,b", "ceph:x,cache=none,cache=writeback", "none,media=cdrom", "local:iso/debian.iso,media=cdrom",
		"local-lvm:vm-100-disk-0,efitype=4m,pre-enrolled-keys=1,size=4M", "/dev/disk/by-id/ata-X,backup=0", "volume=x,file=y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDrive(s)
		if err != nil {
			return
		}
		if d.Volume == "" {
			t.Fatalf("ParseDrive(%q) accepted a drive without a volume", s)
		}
		_, _ = d.SizeBytes()
		_ = d.Storage()
		again, err := ParseDrive(d.String())
		if err != nil {
			t.Fatalf("ParseDrive(%q) = %+v, printed %q, which does not parse: %v", s, d, d.String(), err)
		}
		if !reflect.DeepEqual(again, d) {
			t.Fatalf("ParseDrive(%q) = %+v, printed %q, which parses as %+v", s, d, d.String(), again)
		}
	})
}

func FuzzParseNetDevice(f *testing.F) {
	for _, s := range []string{
		"virtio=BC:24:11:AA:BB:CC,bridge=vmbr0,firewall=on,tag=20", "model=e1000,macaddr=BC:24:11:00:00:01",
		"virtio,bridge=vmbr0", "e1000=BC:24:11:00:00:01,virtio=BC:24:11:00:00:02", "bridge=vmbr0", "model=foo,macaddr=x",
		"vmxnet3=BC:24:11:00:00:03,bridge=vnet1,link_down=1,mtu=1500,queues=4,rate=12.5,trunks=10;20-30",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseNetDevice(s)
		if err != nil {
			return
		}
		again, err := ParseNetDevice(n.String())
		if err != nil {
			t.Fatalf("ParseNetDevice(%q) = %+v, printed %q, which does not parse: %v", s, n, n.String(), err)
		}
		if !reflect.DeepEqual(again, n) {
			t.Fatalf("ParseNetDevice(%q) = %+v, printed %q, which parses as %+v", s, n, n.String(), again)
		}
	})
}

func FuzzParseDiskSize(f *testing.F) {
	for _, s := range []string{"32G", "528K", "1.5T", "1024", " 4M ", "0", "1.5", "99999999999999999999T", "G", "-1G", "1e3G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseDiskSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseDiskSize(%q) = %d, a negative size", s, n)
		}
		if back, err := ParseDiskSize(FormatDiskSize(n)); err != nil || back != n {
			t.Fatalf("FormatDiskSize(%d) = %q parses as %d, %v", n, FormatDiskSize(n), back, err)
		}
	})
}

func FuzzParseUPID(f *testing.F) {
	for _, s := range []string{
		testUPID,
		"UPID:pve-node-1:00001234:123456789:67A1B2C3:qmstart:100:root@pam:",
		"UPID:n:00001234:12345678:67a1b2c3:clusterjoin::root@pam:",
		"UPID:pve1:0003A2F1:01B4C5D6:67A1B2C3:qmstart:100:root@pam",
		"UPID:pve1:3A2F1:01B4C5D6:67A1B2C3:qmstart:100:root@pam:",
		"UPID:pve1:0003A2F1:01B4C5D6:67A1B2C3:qmstart:1/0:root@pam:",
		" UPID:pve1:FFFFFFFF:FFFFFFFFF:FFFFFFFF:vzdump::root@pam!t: \n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseUPID(s)
		if err != nil {
			return
		}
		if u.Node == "" || u.Type == "" || u.User == "" || strings.ContainsAny(u.Node+u.Type+u.ID+u.User, ":/ \t\n") {
			t.Fatalf("ParseUPID(%q) = %+v: a field holds a separator", s, u)
		}
		again, err := ParseUPID(u.Raw)
		if err != nil || again != u {
			t.Fatalf("ParseUPID(%q).Raw = %q parses as %+v, %v", s, u.Raw, again, err)
		}
		if u.String() != u.Raw {
			t.Fatal("String is not Raw")
		}
	})
}

func FuzzParseCephConfig(f *testing.F) {
	for _, s := range []string{
		"# written by hand\n[global]\n\t auth_client_required = cephx\n\tpublic network = 169.254.50.0/24 ; the storage network\n" +
			"  cluster_network=\"10.0.0.0/24\"\n\tfsid = 0a1b\\\n  2c3d\norphan\n[client]\n\tkeyring = /etc/pve/priv/$cluster.$name.keyring\n" +
			"\tcomment = a\\;b\n[mon.z2g4a]\n\tpublic_addr = 169.254.50.10\n",
		"[global]\r\nfsid=x\r\n", "[]\nk=v\n", "[ ]\nk=v", "[a\nk='v'", "[a]\nk=\\", "[a]\n\"k\"=\"", "\\\n\\\n\\",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := ParseCephConfig(s)
		for sec, kv := range c {
			for k, v := range kv {
				if k == "" || v == "" {
					t.Fatalf("ParseCephConfig(%q): section %q has key %q = %q", s, sec, k, v)
				}
				if strings.ContainsAny(k, " \t\n") {
					t.Fatalf("ParseCephConfig(%q): key %q holds blanks; blanks are underscores in keys", s, k)
				}
			}
		}
	})
}

func FuzzCephMonitorIPs(f *testing.F) {
	for _, s := range []string{
		"172.27.2.10:6789/0", "[v2:169.254.50.10:3300/0,v1:169.254.50.10:6789/0]", "[fd00::1]:6789/0", "10.0.0.1",
		"10.0.0.1 10.0.0.2;10.0.0.1", "[v2:", "v1:", "[v9:[::1]:1/0]", "/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seen := map[string]bool{}
		for _, ip := range CephMonitorIPs(s) {
			a, err := netip.ParseAddr(ip)
			if err != nil || a.String() != ip || seen[ip] {
				t.Fatalf("CephMonitorIPs(%q) gave %q: not a canonical IP or twice", s, ip)
			}
			seen[ip] = true
		}
	})
}

func FuzzParseACMEDomain(f *testing.F) {
	for _, s := range []string{"z2g4b.lab.example", "domain=a.example,alias=b.example,plugin=pdns", "a,b", "plugin=", "domain=a=b", ",alias=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := ParseACMEDomain(s)
		_ = ParseACMEOption(s)
		if again := ParseACMEDomain(d.String()); again != d {
			t.Fatalf("ParseACMEDomain(%q) = %+v, printed %q, which parses as %+v", s, d, d.String(), again)
		}
	})
}

func FuzzACMEPluginData(f *testing.F) {
	for _, s := range []string{
		"", EncodeACMEPluginData(map[string]string{"PDNS_Url": "http://ns:8081", "PDNS_Token": "x=y"}), "A=1\nB=2\n", "=x\nk\n", "a=b\r\nc=d\r", "not base64 %%%",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := DecodeACMEPluginData(s)
		if len(m) == 0 {
			return
		}
		enc := EncodeACMEPluginData(m)
		if got := DecodeACMEPluginData(enc); !maps.Equal(got, m) {
			t.Fatalf("DecodeACMEPluginData(%q) = %q; encoded %q, which decodes as %q", s, m, enc, got)
		}
	})
}

func FuzzParseAPIToken(f *testing.F) {
	for _, s := range []string{
		testToken, "root@pam!terraform", "root@pam=secret", "root@pam!t=", "root@pam!ter.raform=5f1c0d2e", " a@b!c=d ",
		"root@pam!terraform 5f1c0d2e-aaaa", "root@pam!terraform:5f1c0d2e-aaaa=", "=", "root@pam!x!y=5f1c0d2e-aaaa",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, secret, err := ParseAPIToken(s)
		if err == nil {
			if id+"="+secret != strings.TrimSpace(s) || secret == "" {
				t.Fatalf("ParseAPIToken(%q) = %q, %q", s, id, secret)
			}
			return
		}
		// The message shows the token id at most, never what follows.
		trimmed := strings.TrimSpace(s)
		shown := tokenIDPrefixRe.FindString(trimmed)
		rest := trimmed[len(shown):]
		if len(rest) < 8 || strings.Contains(shown, rest[1:]) {
			return
		}
		template := "API token must look like USER@REALM!TOKENID=SECRET (for example root@pam!terraform=2f1c...); got"
		if leak := rest[1:]; strings.Contains(err.Error(), leak) && !strings.Contains(template, leak) {
			t.Fatalf("ParseAPIToken(%q): the error shows %q: %v", s, leak, err)
		}
	})
}

func FuzzParseFingerprint(f *testing.F) {
	for _, s := range []string{
		FormatFingerprint(make([]byte, 32)), strings.Repeat("ab", 32), "AB:CD", " " + strings.Repeat("0-", 32) + " ", "zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseFingerprint(s)
		if err != nil {
			return
		}
		if len(b) != 32 {
			t.Fatalf("parseFingerprint(%q) = %d bytes", s, len(b))
		}
		if again, err := parseFingerprint(FormatFingerprint(b)); err != nil || hex.EncodeToString(again) != hex.EncodeToString(b) {
			t.Fatalf("FormatFingerprint(%x) = %q does not parse back: %v", b, FormatFingerprint(b), err)
		}
	})
}

func FuzzFlexJSON(f *testing.F) {
	for _, s := range []string{`"2"`, `2`, `2.5`, `null`, `true`, `"yes"`, `"on"`, `{}`, `[1]`, ``, `"`, `1e400`, `"-9223372036854775809"`, ` "x" `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s flexString
		var i flexInt
		var x flexBool
		var n cephNum
		_ = s.UnmarshalJSON(b)
		_ = i.UnmarshalJSON(b)
		_ = x.UnmarshalJSON(b)
		_ = n.UnmarshalJSON(b)
	})
}

// fuzzClient is a client of a server that answers every request with the
// status and body of the current fuzz input.
type fuzzServer struct {
	mu     sync.Mutex
	status int
	body   []byte
}

func (s *fuzzServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	status, body := s.status, s.body
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// FuzzClientReads feeds arbitrary answers to every read the provider makes:
// each decoder must return a value or an error, never panic.
func FuzzClientReads(f *testing.F) {
	srv := &fuzzServer{}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	f.Cleanup(ts.Close)
	c, err := NewClient(Config{Endpoint: ts.URL, APIToken: testToken, TLSFingerprint: certFingerprintHex(ts),
		Retry: RetryPolicy{MaxAttempts: 1}, TaskPollInterval: time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`{"data":null}`, `{"data":[]}`, `{"data":{}}`, `{"data":""}`, `{"data":[{"iface":"vmbr0","type":"bridge","bridge_ports":"eno1 eno2","autostart":1,"families":["inet"]}],"changes":"--- a\n+++ b\n"}`,
		`{"data":[{"storage":"local","type":"dir","content":"iso,backup","nodes":"a,b","shared":"1","maxfiles":3}]}`,
		`{"data":{"fsid":"x","health":{"status":"HEALTH_OK","checks":{"A":{"severity":"HEALTH_WARN","summary":{"message":"m","count":"2"}}}},"pgmap":{"pgs_by_state":[{"state_name":"active+clean","count":64}]}}}`,
		`{"data":{"digest":"d","files":[{"path":"/etc/apt/sources.list","digest":[1,2,255],"repositories":[{"Types":["deb"],"URIs":["http://x"],"Suites":["trixie"],"Components":["main"],"Enabled":1}]}],"standard-repos":[{"handle":"no-subscription","status":1}]}}`,
		`{"data":{"nodes":[{"id":-1,"name":"default","type":"root","children":[1]},{"id":1,"name":"n","type":"host","children":[0]},{"id":0,"name":"osd.0","type":"osd","status":"up"}]},"flags":"noout"}}`,
		`{"data":{"acme":"account=default","acmedomain0":"a.example,plugin=p","description":"x\n","digest":"d"}}`,
		`{"data":{"scsi0":"ceph:vm-100-disk-0,size=32G","net0":"virtio=BC:24:11:00:00:01,bridge=vmbr0","boot":"order=scsi0","digest":"d"}}`,
		`{"data":[{"n":1,"t":"TASK OK"}]}`, `{"message":"not found\n","errors":{"iface":"interface does not exist\n"}}`, `not json`, ``, `{"data":{"version":"9.1.1","release":"9.1","repoid":"x"}}`,
	} {
		f.Add(200, []byte(s))
	}
	f.Add(400, []byte(`{"message":"Parameter verification failed.\n","errors":{"x":1}}`))
	f.Add(500, []byte(`{"data":null,"message":"x"}`))
	u, _ := ParseUPID(testUPID)
	reads := []func(context.Context) error{
		func(ctx context.Context) error { _, err := c.ACMEAccounts(ctx); return err },
		func(ctx context.Context) error { _, err := c.ACMEAccount(ctx, "default"); return err },
		func(ctx context.Context) error { _, err := c.ACMEPlugin(ctx, "p"); return err },
		func(ctx context.Context) error { _, err := c.APTRepositories(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.CephConfigRaw(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.CephConfigDB(ctx, "n"); return err },
		func(ctx context.Context) error {
			_, err := c.CephConfigValues(ctx, "n", "mon.a:public_addr")
			return err
		},
		func(ctx context.Context) error { _, err := c.CephCmdSafety(ctx, "n", "osd", "0", "stop"); return err },
		func(ctx context.Context) error { _, err := c.CephFlags(ctx); return err },
		func(ctx context.Context) error { _, err := c.CephFlag(ctx, "noout"); return err },
		func(ctx context.Context) error { _, err := c.CephClusterStatus(ctx); return err },
		func(ctx context.Context) error { _, err := c.CephNodeStatus(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.CephMons(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.CephMgrs(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.CephOSDMetadata(ctx, "n", 0); return err },
		func(ctx context.Context) error { _, err := c.CephClusterMetadata(ctx); return err },
		func(ctx context.Context) error { _, err := c.CephOSDLVInfo(ctx, "n", 0, "block"); return err },
		func(ctx context.Context) error { _, err := c.CephOSDTree(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.CephPools(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.CephPool(ctx, "n", "p"); return err },
		func(ctx context.Context) error { _, err := c.NodeCertificates(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.ClusterConfigNodes(ctx); return err },
		func(ctx context.Context) error { _, err := c.ClusterStatus(ctx); return err },
		func(ctx context.Context) error { _, err := c.ServerFingerprint(ctx); return err },
		func(ctx context.Context) error { _, err := c.ClusterLinkPriorities(ctx); return err },
		func(ctx context.Context) error { _, err := c.Disks(ctx, "n", false); return err },
		func(ctx context.Context) error { _, err := c.HAResources(ctx, ""); return err },
		func(ctx context.Context) error { _, err := c.HAResource(ctx, "vm:100"); return err },
		func(ctx context.Context) error { _, err := c.HAGroups(ctx); return err },
		func(ctx context.Context) error { _, err := c.HAGroup(ctx, "g"); return err },
		func(ctx context.Context) error { _, err := c.HARules(ctx, "", ""); return err },
		func(ctx context.Context) error { _, err := c.HARule(ctx, "r"); return err },
		func(ctx context.Context) error { _, err := c.HAStatus(ctx); return err },
		func(ctx context.Context) error { _, err := c.Network(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.NetworkInterface(ctx, "n", "vmbr0"); return err },
		func(ctx context.Context) error { _, err := c.NodeConfig(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.Nodes(ctx); return err },
		func(ctx context.Context) error { _, err := c.ClusterOptions(ctx); return err },
		func(ctx context.Context) error { _, err := c.VMConfig(ctx, "n", 100, false); return err },
		func(ctx context.Context) error { _, err := c.VMPending(ctx, "n", 100); return err },
		func(ctx context.Context) error { _, err := c.VMStatus(ctx, "n", 100); return err },
		func(ctx context.Context) error { _, err := c.VMs(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.NextVMID(ctx); return err },
		func(ctx context.Context) error { _, err := c.FindVM(ctx, 100); return err },
		func(ctx context.Context) error { _, err := c.ClusterResources(ctx, ""); return err },
		func(ctx context.Context) error { _, err := c.StorageConfigs(ctx, ""); return err },
		func(ctx context.Context) error { _, err := c.StorageConfig(ctx, "local"); return err },
		func(ctx context.Context) error { _, err := c.NodeStorage(ctx, "n", NodeStorageQuery{}); return err },
		func(ctx context.Context) error { _, err := c.NodeStorageStatus(ctx, "n", "local"); return err },
		func(ctx context.Context) error { _, err := c.StorageContent(ctx, "n", "local", 0); return err },
		func(ctx context.Context) error { _, err := c.ThinPools(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.ZFSPools(ctx, "n"); return err },
		func(ctx context.Context) error { _, err := c.ZFSPool(ctx, "n", "tank"); return err },
		func(ctx context.Context) error { _, err := c.TaskLog(ctx, u, 0, 10); return err },
		func(ctx context.Context) error { _, err := c.Version(ctx); return err },
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		switch {
		case status == 596 || status == 401 || status == 403 || status == 404 || status == 500:
		case status < 200 || status > 599:
			status = 200 + int(math.Abs(float64(status%400)))
		}
		srv.mu.Lock()
		srv.status, srv.body = status, body
		srv.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, read := range reads {
			_ = read(ctx)
		}
	})
}
