package pvesim

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Files onto a storage after pve-storage PVE/API2/Storage/Status.pm upload
// and download_url, pve-http-server's file_upload_multipart and pve-common
// download_file_from_url. Only ISO images are simulated (content iso); they
// live in the storage's volume map as "<storage>:iso/<name>" with format
// "iso", and images up to maxKeptFile bytes keep their bytes so tests can
// read what was uploaded.

// maxKeptFile bounds the bytes pvesim keeps (and accepts) per file.
const maxKeptFile = 64 << 20

var (
	isoExtRE         = regexp.MustCompile(`(?i)[^/]+\.(?:iso|img)$`)
	uploadPathRE     = regexp.MustCompile(`^/nodes/[^/]+/storage/[^/]+/upload$`)
	checksumAlgos    = []string{"md5", "sha1", "sha224", "sha256", "sha384", "sha512"}
	tmpUploadNameRE  = regexp.MustCompile(`^/var/tmp/pveupload-[0-9a-f]+$`)
	contentFileChars = regexp.MustCompile(`[^a-zA-Z0-9_.-]`)
)

func registerStorageUpload(t *routeTable) {
	t.add("POST", "/nodes/{node}/storage/{storage}/upload", &method{params: schema{
		"node": nodeParam(), "storage": storageIDParam(),
		"content":            fileContentParam(),
		"filename":           pStr().req().maxLen(255),
		"checksum":           pStr().needs("checksum-algorithm"),
		"checksum-algorithm": pEnum(checksumAlgos...).needs("checksum"),
		"tmpfilename":        param{typ: tString, optional: true, pattern: tmpUploadNameRE},
	}, handler: uploadFile})
	t.add("POST", "/nodes/{node}/storage/{storage}/download-url", &method{params: schema{
		"node": nodeParam(), "storage": storageIDParam(),
		"url":                 param{typ: tString, pattern: regexp.MustCompile(`^https?://.*$`)},
		"content":             fileContentParam(),
		"filename":            pStr().req().maxLen(255),
		"checksum":            pStr().needs("checksum-algorithm"),
		"checksum-algorithm":  pEnum(checksumAlgos...).needs("checksum"),
		"compression":         pStr(),
		"verify-certificates": pBool(),
	}, handler: downloadURL})
}

// fileContentParam is both endpoints' content: a pve-storage-content
// that is also one of the types a file transfer takes.
func fileContentParam() param {
	p := pFmt("pve-storage-content").req()
	p.enum = []string{"iso", "vztmpl", "import"}
	return p
}

// normalizeContentFilename is PVE::Storage::normalize_content_filename.
func normalizeContentFilename(name string) string {
	name = strings.TrimSuffix(name, "\n")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return contentFileChars.ReplaceAllString(name, "_")
}

// fileTarget is what upload and download_url check before their worker:
// the storage, whether it keeps files, and the ISO directory's volume
// name. typeErr is the handler's own "not a file storage" text and
// contentFirst whether it checks the content type before the extension.
func (c *call) fileTarget(typeErr string, contentFirst bool) (e *storageEntry, volname, dest string, aerr *apiError) {
	s, node, id, content := c.s, c.params["node"], c.params["storage"], c.params["content"]
	e, err := s.storageEntryLocked(node, id)
	if err == nil {
		err = e.checkUsable(node)
	}
	if err != nil {
		return nil, "", "", die("%s\n", err)
	}
	if !fileStorage(e.Type) {
		return nil, "", "", die(typeErr, e.Type)
	}
	unsupported := func() *apiError {
		if contentFirst {
			return die("storage '%s' is not configured for content-type '%s'\n", id, content)
		}
		return die("storage '%s' does not support '%s' content\n", id, content)
	}
	if contentFirst && !e.contentTypes()[content] {
		return nil, "", "", unsupported()
	}
	name := normalizeContentFilename(c.params["filename"])
	if content != "iso" {
		return nil, "", "", die("pvesim simulates only ISO images (content iso), not '%s'", content)
	}
	if !isoExtRE.MatchString(name) {
		return nil, "", "", paramErr1("filename", "wrong file extension")
	}
	if !contentFirst && !e.contentTypes()[content] {
		return nil, "", "", unsupported()
	}
	return e, "iso/" + name, s.isoDir(e) + "/" + name, nil
}

// isoDir is the plugin's get_subdir(iso).
func (s *Sim) isoDir(e *storageEntry) string {
	base := e.Opts["path"]
	if base == "" {
		base = "/mnt/pve/" + e.ID
	}
	return base + "/template/iso"
}

// uploadFile is Status.pm upload: the body was parsed into a temporary
// file by the HTTP server (readUpload); an imgcopy worker verifies the
// checksum and copies it over any file of that name.
func uploadFile(c *call) (any, *apiError) {
	s, node := c.s, c.params["node"]
	e, volname, dest, aerr := c.fileTarget("can't upload to storage type '%s'\n", false)
	if aerr != nil {
		return nil, aerr
	}
	tmp := c.params["tmpfilename"]
	if tmp == "" {
		return nil, die("missing temporary file name\n")
	}
	if c.upload == nil || c.upload.tmp != tmp {
		return nil, die("temporary file '%s' does not exist\n", tmp)
	}
	data := c.upload.data
	sum, algo := c.params["checksum"], c.params["checksum-algorithm"]
	return s.startTaskLocked(c, "imgcopy", "", func(t *task) (int, error) {
		t.Log = append(t.Log, "starting file import from: "+tmp)
		if err := verifyChecksum(t, algo, sum, data); err != nil {
			return 0, err
		}
		t.Log = append(t.Log, "target node: "+node, "target file: "+dest,
			fmt.Sprintf("file size is: %d", len(data)), "command: cp -- "+tmp+" "+dest)
		s.putFileLocked(node, e, volname, data)
		t.Log = append(t.Log, "finished file import successfully")
		return 0, nil
	}), nil
}

// downloadURL is Status.pm download_url: a download worker (ID the
// file name) running download_file_from_url, which fetches the URL
// unless a file of that name is there: then only a matching checksum
// lets it pass.
func downloadURL(c *call) (any, *apiError) {
	s, node := c.s, c.params["node"]
	e, volname, dest, aerr := c.fileTarget("can't upload to storage type '%s', not a file based storage!\n", true)
	if aerr != nil {
		return nil, aerr
	}
	if c.params["compression"] != "" {
		return nil, die("pvesim does not simulate compression on download-url")
	}
	src, sum, algo := c.params["url"], c.params["checksum"], c.params["checksum-algorithm"]
	verify := c.params["verify-certificates"] != "0"
	name := strings.TrimPrefix(volname, "iso/")
	return s.startTaskLocked(c, "download", url.PathEscape(name), func(t *task) (int, error) {
		t.Log = append(t.Log, fmt.Sprintf("downloading %s to %s", src, dest))
		if v := s.volumesLocked(node, e)[e.ID+":"+volname]; v != nil {
			if algo == "" {
				return 0, fmt.Errorf("refusing to override existing file '%s'", dest)
			}
			if got := fileHash(algo, v.Data); !strings.EqualFold(got, sum) {
				return 0, fmt.Errorf("checksum mismatch: got '%s' != expect '%s', aborting", got, sum)
			}
			t.Log = append(t.Log, "OK, got correct file already, no need to download")
			return 0, nil
		}
		// The fetch runs without s.mu, as wget runs beside the daemon.
		s.mu.Unlock()
		data, err := fetchURL(src, verify)
		s.mu.Lock()
		if err != nil {
			return 0, fmt.Errorf("download failed: %w", err)
		}
		if err := verifyChecksum(t, algo, sum, data); err != nil {
			return 0, err
		}
		s.putFileLocked(node, e, volname, data)
		t.Log = append(t.Log, fmt.Sprintf("download of '%s' to '%s' finished", src, dest))
		return 0, nil
	}), nil
}

// fetchURL is wget's part: the whole body of a 2xx answer.
func fetchURL(src string, verify bool) ([]byte, error) {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: !verify}} //nolint:gosec // PVE's verify-certificates=0
	cl := &http.Client{Transport: tr, Timeout: 5 * time.Minute}
	defer cl.CloseIdleConnections()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, src, nil)
	if err != nil {
		return nil, err
	}
	resp, err := cl.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("server answered %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxKeptFile+1))
	if err == nil && len(data) > maxKeptFile {
		err = fmt.Errorf("pvesim keeps files up to %d bytes", maxKeptFile)
	}
	return data, err
}

// verifyChecksum is what both workers print and die with when given a
// checksum (none when algo is empty).
func verifyChecksum(t *task, algo, sum string, data []byte) error {
	if algo == "" {
		return nil
	}
	got := fileHash(algo, data)
	if !strings.EqualFold(got, sum) {
		t.Log = append(t.Log, "calculating checksum...")
		return fmt.Errorf("checksum mismatch: got '%s' != expect '%s'", got, sum)
	}
	t.Log = append(t.Log, "calculating checksum...OK, checksum verified")
	return nil
}

func fileHash(algo string, data []byte) string {
	var h hash.Hash
	switch algo {
	case "md5":
		h = md5.New() //nolint:gosec // PVE offers md5 checksums
	case "sha1":
		h = sha1.New() //nolint:gosec // PVE offers sha1 checksums
	case "sha224":
		h = sha256.New224()
	case "sha256":
		h = sha256.New()
	case "sha384":
		h = sha512.New384()
	default:
		h = sha512.New()
	}
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// putFileLocked stores a file volume, replacing one of the same name.
func (s *Sim) putFileLocked(node string, e *storageEntry, volname string, data []byte) {
	v := &simVolume{Storage: e.ID, Name: volname, Size: int64(len(data)), Format: "iso", Data: data}
	s.volumesLocked(node, e)[v.volid()] = v
}

// pendingUpload is a multipart upload the HTTP server has read: its
// temporary file's name and bytes.
type pendingUpload struct {
	tmp  string
	data []byte
}

// readUpload is pve-http-server's isUpload branch for POST .../upload
// with a body: multipart/form-data only, a Content-Length, the fields
// content, checksum-algorithm and checksum in that order, then the file
// part, which must be named "filename". Its errors are 500s.
func readUpload(r *http.Request, seq int) (map[string]string, *pendingUpload, *apiError) {
	ctype := r.Header.Get("Content-Type")
	ct, ps, _ := mime.ParseMediaType(ctype)
	if ct != "multipart/form-data" || ps["boundary"] == "" {
		return nil, nil, errf(http.StatusInternalServerError, "upload 'Content-Type '%s' not implemented\n", ctype)
	}
	if r.ContentLength <= 0 {
		return nil, nil, errf(http.StatusInternalServerError, "upload without content length header not supported")
	}
	params := map[string]string{}
	decodeURLEncoded(r.URL.RawQuery, params, map[string]valueKind{})
	if _, ok := params["tmpfilename"]; ok {
		return nil, nil, errf(http.StatusInternalServerError, "'tmpfilename' query parameter is not allowed for file uploads\n")
	}
	failed := errf(http.StatusInternalServerError, "upload failed")
	mr := multipart.NewReader(r.Body, ps["boundary"])
	order := []string{"content", "checksum-algorithm", "checksum"}
	for {
		part, err := mr.NextPart()
		if err != nil {
			return nil, nil, failed // the body ended before a file part
		}
		disp, dps, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
		if disp != "form-data" {
			return nil, nil, errf(http.StatusInternalServerError, "wrong Content-Disposition '%s' in multipart, expected 'form-data'\n", disp)
		}
		name := dps["name"]
		if fn, isFile := dps["filename"]; isFile {
			if name != "filename" {
				return nil, nil, errf(http.StatusInternalServerError, "wrong field name '%s' for file upload, expected 'filename'", name)
			}
			data, err := io.ReadAll(io.LimitReader(part, maxKeptFile+1))
			if err != nil {
				return nil, nil, failed
			}
			if len(data) > maxKeptFile {
				return nil, nil, errf(http.StatusInternalServerError, "pvesim keeps uploads up to %d bytes", maxKeptFile)
			}
			params["filename"] = strings.TrimSpace(fn)
			tmp := fmt.Sprintf("/var/tmp/pveupload-%x", md5.Sum(fmt.Appendf(nil, "%d", seq))) //nolint:gosec // a name, as PVE's
			params["tmpfilename"] = tmp
			return params, &pendingUpload{tmp: tmp, data: data}, nil
		}
		// PVE matches the fields in a fixed order; one out of it is never
		// consumed and the upload runs out of body.
		i := 0
		for i < len(order) && order[i] != name {
			i++
		}
		if i == len(order) {
			return nil, nil, failed
		}
		order = order[i+1:]
		v, err := io.ReadAll(io.LimitReader(part, 4096))
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, failed
		}
		params[name] = strings.TrimSpace(string(v))
	}
}
