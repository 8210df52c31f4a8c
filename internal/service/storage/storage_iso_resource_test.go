package storage_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/isofs"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// checkISO asserts volid's storage lists it with size bytes and, against
// the simulator, that the bytes PVE holds are want's (nil: not checked).
func checkISO(e *acctest.Env, node, volid string, size int, want func([]byte) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		storage, _, _ := strings.Cut(volid, ":")
		vols, err := e.Client.StorageFiles(context.Background(), node, storage, "iso")
		if err != nil {
			return err
		}
		for _, v := range vols {
			if v.VolID != volid {
				continue
			}
			if size >= 0 && v.Size != int64(size) {
				return fmt.Errorf("%s is %d bytes, want %d", volid, v.Size, size)
			}
			if e.Sim == nil || want == nil {
				return nil
			}
			data, _ := e.Sim.FileData(node, volid)
			return want(data)
		}
		return fmt.Errorf("storage %s on %s does not list %s: %v", storage, node, volid, vols)
	}
}

func answerHas(file, content string) func([]byte) error {
	return func(img []byte) error {
		label, files, err := isofs.Read(img)
		if err != nil {
			return err
		}
		if label != "PROXMOX-AIS" || string(files[file]) != content {
			return fmt.Errorf("image holds label %q, %s = %q; want PROXMOX-AIS, %q", label, file, files[file], content)
		}
		return nil
	}
}

// An installer ISO the node downloads (checksum verified), an answer
// image built from files, and a local file uploaded; a file already on
// the storage refused at plan; the answer image replaced when its files
// change; import of an image copied by hand with an empty plan after it.
func TestAccStorageISO_sources(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	installer := bytes.Repeat([]byte("proxmox-ve installer "), 4096)
	var fetches atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		_, _ = w.Write(installer)
	}))
	url := ""
	if e.Sim == nil {
		// A real node downloads from this machine: serve on every
		// interface, at the address this machine reaches the node from.
		url = liveServerURL(t, e, srv)
	} else {
		srv.Start()
		url = srv.URL
	}
	t.Cleanup(srv.Close)
	url += "/proxmox-ve_9.1-1.iso"
	sum := sha256.Sum256(installer)
	checksum := hex.EncodeToString(sum[:])
	local := filepath.Join(t.TempDir(), "tools.iso")
	if err := os.WriteFile(local, []byte("virtio drivers"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := func(answer, extra string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_storage_iso" "installer" {
  node               = %[1]q
  storage            = "local"
  file_name          = "acc-proxmox-ve.iso"
  url                = %[2]q
  checksum           = %[3]q
  checksum_algorithm = "sha256"
}

resource "pve_storage_iso" "answer" {
  node         = %[1]q
  storage      = "local"
  file_name    = "acc-answer.iso"
  volume_label = "PROXMOX-AIS"
  files        = { "answer.toml" = %[4]q }
}

resource "pve_storage_iso" "tools" {
  node        = %[1]q
  storage     = "local"
  file_name   = "acc-tools.iso"
  source_file = %[5]q
}
%[6]s`, node, url, checksum, answer, local, extra))
	}
	answer1 := "[global]\nfqdn = \"pve1.lab.test\"\n"
	answer2 := "[global]\nfqdn = \"pve2.lab.test\"\n"
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: config(answer1, ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_storage_iso.installer", "volume", "local:iso/acc-proxmox-ve.iso"),
					resource.TestCheckResourceAttr("pve_storage_iso.installer", "id", node+"/local:iso/acc-proxmox-ve.iso"),
					resource.TestCheckResourceAttr("pve_storage_iso.tools", "size", "14"),
					checkISO(e, node, "local:iso/acc-proxmox-ve.iso", -1, func(b []byte) error {
						if !bytes.Equal(b, installer) {
							return fmt.Errorf("downloaded %d bytes, not the installer's %d", len(b), len(installer))
						}
						return nil
					}),
					checkISO(e, node, "local:iso/acc-answer.iso", -1, answerHas("answer.toml", answer1)),
					checkISO(e, node, "local:iso/acc-tools.iso", 14, nil),
				),
			},
			{
				// The same file under a second resource: refused before anything runs.
				Config: config(answer1, fmt.Sprintf(`
resource "pve_storage_iso" "again" {
  node         = %q
  storage      = "local"
  file_name    = "acc-answer.iso"
  volume_label = "OTHER"
  files        = { "x.txt" = "x" }
}`, node)),
				ExpectError: errorRE(`ISO image local:iso/acc-answer.iso already exists`),
			},
			{
				// A changed answer replaces the image; the installer is not fetched again.
				Config: config(answer2, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_storage_iso.answer", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("pve_storage_iso.installer", plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkISO(e, node, "local:iso/acc-answer.iso", -1, answerHas("answer.toml", answer2)),
					func(*terraform.State) error {
						if e.Sim != nil && fetches.Load() != 1 {
							return fmt.Errorf("installer fetched %d times, want 1", fetches.Load())
						}
						return nil
					},
				),
			},
			{
				// An image copied by hand is adopted with its source: no
				// download, and the plan after the apply is empty.
				PreConfig: func() {
					data := []byte("copied by hand")
					t := pve.FileTransfer{Node: node, Storage: "local", Content: "iso", FileName: "acc-handmade.iso"}
					upid, err := e.Client.Upload(context.Background(), t, int64(len(data)), func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
					if _, err = e.Client.Await(context.Background(), upid, err); err != nil {
						panic(err)
					}
				},
				Config: config(answer2, fmt.Sprintf(`
import {
  to = pve_storage_iso.handmade
  id = "%[1]s/local:iso/acc-handmade.iso"
}

resource "pve_storage_iso" "handmade" {
  node      = %[1]q
  storage   = "local"
  file_name = "acc-handmade.iso"
  url       = %[2]q
}`, node, url)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_storage_iso.handmade", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkISO(e, node, "local:iso/acc-handmade.iso", len("copied by hand"), nil),
					func(*terraform.State) error {
						if e.Sim != nil && fetches.Load() != 1 {
							return fmt.Errorf("installer fetched %d times, want 1", fetches.Load())
						}
						return nil
					},
				),
			},
			{
				ResourceName:            "pve_storage_iso.tools",
				ImportState:             true,
				ImportStateId:           node + "/local:iso/acc-tools.iso",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"source_file", "timeouts"},
			},
		},
	})
}

// File names PVE would change or refuse are refused at plan with the
// name to use instead; a source is required and only one.
func TestAccStorageISO_planErrors(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	res := func(body string) string {
		return e.Config(fmt.Sprintf("resource \"pve_storage_iso\" \"x\" {\n  node = %q\n  storage = \"local\"\n%s\n}\n", node, body))
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: res(`file_name = "Proxmox VE 9.1.iso"
  url = "https://enterprise.proxmox.com/iso/proxmox-ve_9.1-1.iso"`), PlanOnly: true, ExpectError: errorRE(`use "Proxmox_VE_9.1.iso"`)},
		{Config: res(`file_name = "debian.tar.gz"
  url = "https://example.org/debian.tar.gz"`), PlanOnly: true, ExpectError: errorRE(`end in .iso or .img`)},
		{Config: res(`file_name = "a.iso"
  url = "https://example.org/a.iso"
  source_file = "/tmp/a.iso"`), PlanOnly: true, ExpectError: errorRE(`Invalid Attribute Combination`)},
		{Config: res(`file_name = "a.iso"
  volume_label = "cidata"
  files = { "user-data" = "#cloud-config" }`), PlanOnly: true, ExpectError: errorRE(`only upper-case letters`)},
		{Config: res(`file_name = "a.iso"
  url = "https://example.org/a.iso"
  checksum = "abc"`), PlanOnly: true, ExpectError: errorRE(`checksum_algorithm`)},
		{Config: e.Config(fmt.Sprintf("resource \"pve_storage_iso\" \"x\" {\n  node = %q\n  storage = \"ISO store\"\n  file_name = \"a.iso\"\n  url = \"https://example.org/a.iso\"\n}\n", node)),
			PlanOnly: true, ExpectError: errorRE(`storage must start with a letter`)},
	}})
}

// liveServerURL starts srv on every interface and returns its URL at the
// local address this machine uses toward the cluster's endpoint.
func liveServerURL(t *testing.T, e *acctest.Env, srv *httptest.Server) string {
	t.Helper()
	u, err := neturl.Parse(e.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	// UDP "connects" without sending: the kernel just picks the route.
	probe, err := net.Dial("udp", net.JoinHostPort(u.Hostname(), "8006"))
	if err != nil {
		t.Skipf("no route to %s to serve an ISO from: %v", u.Host, err)
	}
	local, _, _ := net.SplitHostPort(probe.LocalAddr().String())
	_ = probe.Close()
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return "http://" + net.JoinHostPort(local, port)
}
