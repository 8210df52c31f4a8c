package pvesim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// multipartUpload posts fields (in the given order) and then a file part
// named fileField, as a browser or the provider does.
func (c *client) multipartUpload(path string, fields [][2]string, fileField, fileName string, data []byte) resp {
	c.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range fields {
		_ = mw.WriteField(f[0], f[1])
	}
	fw, _ := mw.CreateFormFile(fileField, fileName)
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", c.base+path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "PVEAPIToken="+c.token)
	return c.send(req)
}

func (c *client) send(req *http.Request) resp {
	c.t.Helper()
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := resp{status: res.StatusCode, reason: strings.TrimSpace(res.Status[3:]), raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		_ = json.Unmarshal(raw, &r.env)
	}
	return r
}

func (c *client) taskLog(node, upid string) string {
	c.t.Helper()
	var lines []string
	for _, l := range c.ok("GET", "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/log", nil).data().([]any) {
		lines = append(lines, l.(map[string]any)["t"].(string))
	}
	return strings.Join(lines, "\n")
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// Upload as pve-http-server parses it and Status.pm checks it: order of
// the form fields, the file part's name, storage type, extension,
// checksum, and the ISO listed, described and deleted afterwards.
func TestStorageUploadISO(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	node := info.Nodes[0].Name
	up := "/nodes/" + node + "/storage/local/upload"
	iso := []byte("CD001 pretend image")

	r := c.multipartUpload(up, [][2]string{{"content", "iso"}, {"checksum-algorithm", "sha256"}, {"checksum", sha256Hex(iso)}}, "filename", "answer.iso", iso)
	if r.status != 200 {
		t.Fatalf("upload: %d %s %s", r.status, r.reason, r.raw)
	}
	upid := r.data().(string)
	if !strings.Contains(upid, ":imgcopy::") {
		t.Fatalf("upload worker: %s", upid)
	}
	if st := c.waitTask(node, upid); st["exitstatus"] != "OK" {
		t.Fatalf("upload task: %v\n%s", st, c.taskLog(node, upid))
	}
	log := c.taskLog(node, upid)
	for _, want := range []string{"calculating checksum...OK, checksum verified", "target file: /var/lib/vz/template/iso/answer.iso", fmt.Sprintf("file size is: %d", len(iso)), "finished file import successfully"} {
		if !strings.Contains(log, want) {
			t.Errorf("upload log lacks %q:\n%s", want, log)
		}
	}
	list := c.ok("GET", "/nodes/"+node+"/storage/local/content", vals("content", "iso")).data().([]any)
	if len(list) != 1 {
		t.Fatalf("iso content: %v", list)
	}
	if v := list[0].(map[string]any); v["volid"] != "local:iso/answer.iso" || v["format"] != "iso" || v["size"] != float64(len(iso)) || v["vmid"] != nil {
		t.Fatalf("iso volume: %v", v)
	}
	if l := c.ok("GET", "/nodes/"+node+"/storage/local/content", vals("content", "images")).data().([]any); len(l) != 0 {
		t.Fatalf("images lists the ISO: %v", l)
	}
	vi := c.ok("GET", "/nodes/"+node+"/storage/local/content/local:iso%2Fanswer.iso", nil).data().(map[string]any)
	if vi["path"] != "/var/lib/vz/template/iso/answer.iso" || vi["format"] != "iso" {
		t.Fatalf("volume info: %v", vi)
	}

	// A wrong checksum fails in the worker; nothing is replaced.
	r = c.multipartUpload(up, [][2]string{{"content", "iso"}, {"checksum-algorithm", "sha256"}, {"checksum", strings.Repeat("0", 64)}}, "filename", "answer.iso", []byte("other"))
	if st := c.waitTask(node, r.data().(string)); st["exitstatus"] != fmt.Sprintf("checksum mismatch: got '%s' != expect '%s'", sha256Hex([]byte("other")), strings.Repeat("0", 64)) {
		t.Fatalf("bad checksum: %v", st)
	}

	refusals := []struct {
		name   string
		r      resp
		status int
		msg    string
	}{
		{"fields out of order", c.multipartUpload(up, [][2]string{{"checksum", "x"}, {"content", "iso"}}, "filename", "a.iso", iso), 500, "upload failed"},
		{"file part misnamed", c.multipartUpload(up, [][2]string{{"content", "iso"}}, "file", "a.iso", iso), 500, "wrong field name 'file' for file upload, expected 'filename'"},
		{"not a file storage", c.multipartUpload("/nodes/"+node+"/storage/local-lvm/upload", [][2]string{{"content", "iso"}}, "filename", "a.iso", iso), 500, "can't upload to storage type 'lvmthin'\n"},
		{"extension", c.multipartUpload(up, [][2]string{{"content", "iso"}}, "filename", "a.tar", iso), 400, ""},
	}
	for _, tc := range refusals {
		if tc.r.status != tc.status || tc.msg != "" && tc.r.msg() != tc.msg && tc.r.reason != strings.TrimSpace(tc.msg) {
			t.Errorf("%s: %d %q %q", tc.name, tc.r.status, tc.r.reason, tc.r.raw)
		}
	}
	if e := refusals[3].r.errs()["filename"]; e != "wrong file extension" {
		t.Errorf("extension error: %v", refusals[3].r.errs())
	}
	// The parsed fields go through the method's schema as any request's.
	r = c.multipartUpload(up, [][2]string{{"content", "backup"}, {"checksum-algorithm", "crc32"}, {"checksum", "x"}}, "filename", "a.iso", iso)
	if r.status != 400 || r.errs()["content"] == nil || r.errs()["checksum-algorithm"] == nil {
		t.Errorf("bad fields: %d %s", r.status, r.raw)
	}
	req, _ := http.NewRequest("POST", c.base+up, strings.NewReader("content=iso&filename=a.iso"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "PVEAPIToken="+c.token)
	if r := c.send(req); r.status != 500 || !strings.Contains(r.reason+r.msg(), "upload 'Content-Type 'application/x-www-form-urlencoded' not implemented") {
		t.Errorf("form body on upload: %d %q %s", r.status, r.reason, r.raw)
	}

	// Delete: an imgdel worker; deleting a missing ISO only warns.
	del := c.ok("DELETE", "/nodes/"+node+"/storage/local/content/local:iso%2Fanswer.iso", nil).data().(string)
	if st := c.waitTask(node, del); st["exitstatus"] != "OK" || !strings.Contains(del, ":imgdel:local:") {
		t.Fatalf("delete: %v %s", st, del)
	}
	del = c.ok("DELETE", "/nodes/"+node+"/storage/local/content/local:iso%2Fanswer.iso", nil).data().(string)
	if st := c.waitTask(node, del); st["exitstatus"] != "WARNINGS: 1" {
		t.Fatalf("delete missing: %v", st)
	}
}

// download-url fetches the URL in a download worker; an existing file is
// kept only when the checksum proves it is the same.
func TestStorageDownloadURL(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	node := info.Nodes[0].Name
	iso := bytes.Repeat([]byte("installer "), 1000)
	fetches := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/pve.iso" {
			http.NotFound(w, r)
			return
		}
		fetches++
		_, _ = w.Write(iso)
	}))
	defer srv.Close()
	dl := "/nodes/" + node + "/storage/local/download-url"
	run := func(p url.Values) (map[string]any, string) {
		t.Helper()
		upid := c.ok("POST", dl, p).data().(string)
		return c.waitTask(node, upid), c.taskLog(node, upid)
	}

	st, log := run(vals("url", srv.URL+"/pve.iso", "content", "iso", "filename", "proxmox ve.iso", "checksum", sha256Hex(iso), "checksum-algorithm", "sha256"))
	if st["exitstatus"] != "OK" || !strings.Contains(log, "download of '"+srv.URL+"/pve.iso' to '/var/lib/vz/template/iso/proxmox_ve.iso' finished") || fetches != 1 {
		t.Fatalf("download: %v %d\n%s", st, fetches, log)
	}
	if st, log = run(vals("url", srv.URL+"/pve.iso", "content", "iso", "filename", "proxmox_ve.iso")); st["exitstatus"] != "refusing to override existing file '/var/lib/vz/template/iso/proxmox_ve.iso'" {
		t.Fatalf("existing without checksum: %v\n%s", st, log)
	}
	st, log = run(vals("url", srv.URL+"/pve.iso", "content", "iso", "filename", "proxmox_ve.iso", "checksum", sha256Hex(iso), "checksum-algorithm", "sha256"))
	if st["exitstatus"] != "OK" || !strings.Contains(log, "OK, got correct file already, no need to download") || fetches != 1 {
		t.Fatalf("existing with checksum: %v %d\n%s", st, fetches, log)
	}
	if st, _ = run(vals("url", srv.URL+"/missing.iso", "content", "iso", "filename", "m.iso")); !strings.HasPrefix(st["exitstatus"].(string), "download failed") {
		t.Fatalf("404: %v", st)
	}

	r := c.do("POST", dl, vals("url", srv.URL+"/pve.iso", "content", "iso", "filename", "x.iso", "checksum-algorithm", "sha256"))
	if r.status != 400 || r.errs()["checksum"] == nil {
		t.Fatalf("algorithm without checksum: %d %s", r.status, r.raw)
	}
	r = c.do("POST", "/nodes/"+node+"/storage/local-lvm/download-url", vals("url", srv.URL+"/pve.iso", "content", "iso", "filename", "x.iso"))
	if r.status != 500 || r.msg() != "can't upload to storage type 'lvmthin', not a file based storage!\n" {
		t.Fatalf("lvmthin: %d %s", r.status, r.raw)
	}
	c.ok("POST", "/storage", vals("storage", "vmdata", "type", "dir", "path", "/srv/vm", "content", "images"))
	r = c.do("POST", "/nodes/"+node+"/storage/vmdata/download-url", vals("url", srv.URL+"/pve.iso", "content", "iso", "filename", "x.iso"))
	if r.status != 500 || r.msg() != "storage 'vmdata' is not configured for content-type 'iso'\n" {
		t.Fatalf("content: %d %s", r.status, r.raw)
	}
	r = c.do("POST", dl, vals("url", "ftp://x/y.iso", "content", "iso", "filename", "x.iso"))
	if r.status != 400 || r.errs()["url"] == nil {
		t.Fatalf("ftp url: %d %s", r.status, r.raw)
	}
}
