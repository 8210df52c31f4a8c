package pve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
)

// Files onto a storage (pve-storage PVE/API2/Storage/Status.pm upload and
// download-url): ISO images, container templates, import sources.

// FileTransfer is what both ways of putting a file onto a storage take.
type FileTransfer struct {
	Node, Storage string
	// Content is iso, vztmpl or import.
	Content string
	// FileName is the name on the storage; PVE replaces characters outside
	// [a-zA-Z0-9_.-] with '_' and wants .iso/.img for iso content.
	FileName string
	// Checksum and ChecksumAlgorithm (md5, sha1, sha224, sha256, sha384,
	// sha512) make the task verify the file before it lands; both or none.
	Checksum, ChecksumAlgorithm string
}

func (t FileTransfer) path(op string) string {
	return "/nodes/" + PathEscape(t.Node) + "/storage/" + PathEscape(t.Storage) + "/" + op
}

// DownloadURL makes the node fetch url onto the storage: a "download"
// task, whose UPID it returns. Without a checksum PVE refuses to replace a
// file already there; with one it keeps a matching file.
//
//pve:operation POST /nodes/{node}/storage/{storage}/download-url
func (c *Client) DownloadURL(ctx context.Context, t FileTransfer, url string, verifyCertificates bool) (string, error) {
	p := Params{"url": url, "content": t.Content, "filename": t.FileName}
	if t.Checksum != "" {
		p.Set("checksum", t.Checksum)
		p.Set("checksum-algorithm", t.ChecksumAlgorithm)
	}
	if !verifyCertificates {
		p.SetBool("verify-certificates", false)
	}
	var upid string
	err := c.Post(ctx, t.path("download-url"), p, &upid)
	return upid, err
}

// Upload sends size bytes from open() as the file: an "imgcopy" task,
// whose UPID it returns. PVE replaces a file of the same name silently, so
// callers check first. open is called again if the request is retried.
//
//pve:operation POST /nodes/{node}/storage/{storage}/upload
func (c *Client) Upload(ctx context.Context, t FileTransfer, size int64, open func() (io.ReadCloser, error)) (string, error) {
	fields := [][2]string{{"content", t.Content}}
	if t.Checksum != "" {
		fields = append(fields, [2]string{"checksum-algorithm", t.ChecksumAlgorithm}, [2]string{"checksum", t.Checksum})
	}
	up := &upload{fields: fields, fileName: t.FileName, size: size, open: open}
	res, err := c.do(ctx, http.MethodPost, t.path("upload"), nil, up, false)
	if err != nil {
		return "", err
	}
	var upid string
	err = res.decode(http.MethodPost, t.path("upload"), &upid)
	return upid, err
}

// upload is a multipart/form-data body as pve-http-server's
// file_upload_multipart reads it: it matches the fields content,
// checksum-algorithm and checksum in that order, then the file part,
// which must be named "filename"; anything else makes the upload fail.
type upload struct {
	fields   [][2]string
	fileName string
	size     int64
	open     func() (io.ReadCloser, error)
}

// body is the request body, its Content-Type and its length.
func (u *upload) body() (io.ReadCloser, string, int64, error) {
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	for _, f := range u.fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return nil, "", 0, err
		}
	}
	if _, err := mw.CreateFormFile("filename", u.fileName); err != nil {
		return nil, "", 0, err
	}
	tail := "\r\n--" + mw.Boundary() + "--\r\n"
	file, err := u.open()
	if err != nil {
		return nil, "", 0, fmt.Errorf("cannot read the file to upload: %w", err)
	}
	r := io.MultiReader(&head, io.LimitReader(file, u.size), strings.NewReader(tail))
	n := int64(head.Len()) + u.size + int64(len(tail))
	return struct {
		io.Reader
		io.Closer
	}{r, file}, mw.FormDataContentType(), n, nil
}

// StorageFiles lists the volumes of one content type (iso, vztmpl,
// images, ...) on storage id seen from node.
//
//pve:operation GET /nodes/{node}/storage/{storage}/content
func (c *Client) StorageFiles(ctx context.Context, node, id, content string) ([]StorageVolume, error) {
	return c.listContent(ctx, node, id, Params{"content": content})
}
