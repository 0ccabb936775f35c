package filehttp

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

func xmlName(s string) xml.Name { return xml.Name{Local: s} }

// bodyReader turns a failure to read the request body (a client that sent
// fewer bytes than its Content-Length, or went away) into a 400 rather
// than a 500; nothing has been written at that point.
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		return n, azerr.Newf(azerr.InvalidInput, "The request body could not be read: %v", err)
	}
	return n, err
}

func fileLease(n *file.Node) leaseView {
	return leaseView{state: n.Lease.StateName(n.AsOf), status: n.Lease.Status(n.AsOf), duration: n.Lease.DurationName(n.AsOf)}
}

// create is Create Directory and Create File.
func (h *handler) create(rq *req) error {
	if rq.snapshot != "" {
		return azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	hd := rq.r.Header
	meta, err := rq.metadata()
	if err != nil {
		return err
	}
	smb, err := rq.smbProps(rq.dir, true)
	if err != nil {
		return err
	}
	req := file.CreateRequest{Ref: rq.ref(), Dir: rq.dir, Meta: meta, SMB: smb, LeaseID: hd.Get("X-Ms-Lease-Id")}
	if !rq.dir {
		if t := hd.Get("X-Ms-Type"); !strings.EqualFold(t, "file") {
			if t == "" {
				return azerr.MissingHeader("x-ms-type")
			}
			return azerr.InvalidHeader("x-ms-type", t)
		}
		v := hd.Get("X-Ms-Content-Length")
		if v == "" {
			return azerr.MissingHeader("x-ms-content-length")
		}
		if req.Size, err = parseInt("x-ms-content-length", v, 0, file.MaxFileSize); err != nil {
			return err
		}
		if req.Props, err = rq.contentProps(); err != nil {
			return err
		}
		if req.Data, err = h.createBody(rq); err != nil {
			return err
		}
	}
	n, err := h.svc.Create(rq.ctx(), req)
	if err != nil {
		return err
	}
	hs := headers{h: rq.w.Header()}
	hs.node(n)
	if req.Data != nil {
		hs.set("Content-Md5", base64.StdEncoding.EncodeToString(req.Data.MD5))
	}
	hs.set("X-Ms-Request-Server-Encrypted", "true")
	rq.w.WriteHeader(http.StatusCreated)
	return nil
}

// createBody reads the request body of a Create File (the optional body
// of the newer versions): the file's first bytes, at most 4 MiB (else 413
// RequestBodyTooLarge; the domain refuses more than the file's size),
// checked against Content-MD5 when sent. Nil without a body.
func (h *handler) createBody(rq *req) (*content.Ingested, error) {
	n := rq.r.ContentLength
	if n == 0 || rq.r.Body == nil || rq.r.Body == http.NoBody {
		return nil, nil
	}
	if n > file.MaxRangeWrite {
		return nil, azerr.New(azerr.RequestBodyTooLarge).WithDetail("MaxLimit", strconv.Itoa(file.MaxRangeWrite))
	}
	if n < 0 {
		return nil, azerr.New(azerr.MissingContentLengthHeader)
	}
	want, err := decodeMD5("Content-MD5", rq.r.Header.Get("Content-Md5"))
	if err != nil {
		return nil, err
	}
	data, err := h.svc.Ingest(rq.ctx(), bodyReader{rq.r.Body}, n, want)
	if err != nil {
		return nil, err
	}
	if data.Size != n {
		return nil, azerr.InvalidHeader("Content-Length", strconv.FormatInt(n, 10))
	}
	return &data, nil
}

// getProps is Get Directory Properties / Metadata and Get File Metadata
// (Get File Properties is HEAD of getFile).
func (h *handler) getProps(rq *req) error {
	n, err := h.svc.Get(rq.ctx(), rq.ref(), rq.dir, rq.r.Header.Get("X-Ms-Lease-Id"))
	if err != nil {
		return err
	}
	hd := rq.w.Header()
	nodeHeaders(hd, n)
	writeMeta(hd, n.Meta)
	set(hd, "X-Ms-Server-Encrypted", "true")
	rq.w.WriteHeader(http.StatusOK)
	return nil
}

// getFile is Get File (GET) and Get File Properties (HEAD).
func (h *handler) getFile(rq *req) error {
	head := rq.r.Method == http.MethodHead
	leaseID := rq.r.Header.Get("X-Ms-Lease-Id")
	if head {
		n, err := h.svc.Get(rq.ctx(), rq.ref(), false, leaseID)
		if err != nil {
			return err
		}
		if err := rq.ifMatch(n); err != nil {
			return err
		}
		hd := rq.w.Header()
		fileHeaders(rq, hd, n)
		set(hd, "Content-Length", strconv.FormatInt(n.Size, 10))
		if n.Props.ContentMD5 != nil {
			set(hd, "Content-Md5", base64.StdEncoding.EncodeToString(n.Props.ContentMD5))
		}
		rq.w.WriteHeader(http.StatusOK)
		return nil
	}
	start, end, ranged, err := httpx.ReadRange(rq.r.Header)
	if err != nil {
		return err
	}
	count := int64(-1)
	if ranged && end >= 0 {
		count = end - start + 1
	}
	wantMD5 := rq.r.Header.Get("X-Ms-Range-Get-Content-Md5") == "true"
	if wantMD5 && (!ranged || count < 0 || count > file.MaxRangeWrite) {
		return azerr.InvalidHeader("x-ms-range-get-content-md5", "true")
	}
	res, err := h.svc.Read(rq.ctx(), rq.ref(), start, count, ranged, leaseID)
	if err != nil {
		if re := (*file.RangeError)(nil); errors.As(err, &re) {
			return azerr.New(azerr.InvalidRange).WithHeader("Content-Range", "bytes */"+strconv.FormatInt(re.Size, 10))
		}
		return err
	}
	n := res.Node
	if err := rq.ifMatch(n); err != nil {
		return err
	}
	hd := rq.w.Header()
	fileHeaders(rq, hd, n)
	set(hd, "Content-Length", strconv.FormatInt(res.Count, 10))
	status := http.StatusOK
	body := h.svc.Stream(rq.ctx(), res.Segs)
	defer body.Close()
	if ranged {
		status = http.StatusPartialContent
		if n.Size > 0 {
			set(hd, "Content-Range", "bytes "+strconv.FormatInt(res.Start, 10)+"-"+strconv.FormatInt(res.Start+res.Count-1, 10)+"/"+strconv.FormatInt(n.Size, 10))
		}
		if n.Props.ContentMD5 != nil {
			set(hd, "X-Ms-Content-Md5", base64.StdEncoding.EncodeToString(n.Props.ContentMD5))
		}
		if wantMD5 {
			// The range is at most 4 MiB: hash it first.
			buf, err := io.ReadAll(body)
			if err != nil {
				return err
			}
			sum := md5.Sum(buf)
			set(hd, "Content-Md5", base64.StdEncoding.EncodeToString(sum[:]))
			rq.w.WriteHeader(status)
			rq.w.Write(buf)
			return nil
		}
	} else if n.Props.ContentMD5 != nil {
		set(hd, "Content-Md5", base64.StdEncoding.EncodeToString(n.Props.ContentMD5))
	}
	rq.w.WriteHeader(status)
	h.stream(rq, res.Segs, body)
	return nil
}

// stream writes a Get File body after the status line: bytes kept inline
// in the records are written as they are (no reader, no copy buffer);
// anything else streams from the chunk store. A failure now can only cut
// the connection.
func (h *handler) stream(rq *req, segs []content.Segment, body io.Reader) {
	inline := true
	for _, sg := range segs {
		if sg.Data == nil {
			inline = false
			break
		}
	}
	if inline {
		for _, sg := range segs {
			rq.w.Write(sg.Data)
		}
		return
	}
	if _, err := io.Copy(rq.w, body); err != nil && rq.ctx().Err() == nil {
		h.d.Log.Error("file stream", "request_id", rq.info.RequestID, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// fileHeaders writes the properties of a file for Get File and Get File
// Properties, with the SAS response-header overrides.
func fileHeaders(rq *req, hd http.Header, n *file.Node) {
	hs := headers{h: hd, vals: make([]string, 24)}
	hs.node(n)
	writeMeta(hd, n.Meta)
	hs.set("X-Ms-Type", "File")
	hs.set("Accept-Ranges", "bytes")
	hs.set("X-Ms-Server-Encrypted", "true")
	ct := n.Props.ContentType
	p := n.Props
	sas := false
	if id := rq.info.Identity; id != nil && (id.Kind == auth.ServiceSAS || id.Kind == auth.AccountSAS) {
		sas = true
	}
	for _, o := range [...]struct {
		name, param, v string
	}{{"Content-Type", "rsct", ct}, {"Content-Encoding", "rsce", p.ContentEncoding}, {"Content-Language", "rscl", p.ContentLanguage},
		{"Content-Disposition", "rscd", p.ContentDisposition}, {"Cache-Control", "rscc", p.CacheControl}} {
		v := o.v
		if sas {
			if s := rq.q.Get(o.param); s != "" {
				v = s
			}
		}
		if v != "" {
			hs.set(o.name, v)
		} else if o.name == "Content-Type" {
			// No Content-Type, and none sniffed from the body either.
			hd["Content-Type"] = nil
		}
	}
	if rq.snapshot == "" {
		hs.lease(fileLease(n))
	}
	if c := n.Copy; c != nil {
		hs.set("X-Ms-Copy-Id", c.ID)
		hs.set("X-Ms-Copy-Source", c.Source)
		hs.set("X-Ms-Copy-Status", c.Status)
		hs.set("X-Ms-Copy-Progress", c.Progress)
		hs.set("X-Ms-Copy-Completion-Time", httpx.FormatHTTPTime(c.Completion))
	}
}

// delete is Delete File and Delete Directory.
func (h *handler) delete(rq *req) error {
	if rq.snapshot != "" {
		return azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	if err := h.svc.Delete(rq.ctx(), rq.ref(), rq.dir, rq.r.Header.Get("X-Ms-Lease-Id")); err != nil {
		return err
	}
	rq.w.WriteHeader(http.StatusAccepted)
	return nil
}

// setProps is Set File Properties and Set Directory Properties.
func (h *handler) setProps(rq *req) error {
	if rq.snapshot != "" {
		return azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	smb, err := rq.smbProps(rq.dir, false)
	if err != nil {
		return err
	}
	req := file.SetRequest{Ref: rq.ref(), Dir: rq.dir, LeaseID: rq.r.Header.Get("X-Ms-Lease-Id"), SMB: &smb}
	if !rq.dir {
		if v := rq.r.Header.Get("X-Ms-Content-Length"); v != "" {
			n, err := parseInt("x-ms-content-length", v, math.MinInt64, file.MaxFileSize)
			if err != nil {
				return err
			}
			if n < 0 {
				// Azure's answer to a negative size of a resize.
				return azerr.New(azerr.OutOfRangeInput)
			}
			req.Size = &n
		}
		props, err := rq.contentProps()
		if err != nil {
			return err
		}
		req.Props = &props
	}
	n, err := h.svc.Set(rq.ctx(), req)
	if err != nil {
		return err
	}
	nodeHeaders(rq.w.Header(), n)
	set(rq.w.Header(), "X-Ms-Request-Server-Encrypted", "true")
	rq.w.WriteHeader(http.StatusOK)
	return nil
}

// setMetadata is Set File Metadata and Set Directory Metadata.
func (h *handler) setMetadata(rq *req) error {
	if rq.snapshot != "" {
		return azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	meta, err := rq.metadata()
	if err != nil {
		return err
	}
	n, err := h.svc.Set(rq.ctx(), file.SetRequest{Ref: rq.ref(), Dir: rq.dir, LeaseID: rq.r.Header.Get("X-Ms-Lease-Id"), Meta: &meta})
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), n.ETag, n.Modified)
	set(rq.w.Header(), "X-Ms-Request-Server-Encrypted", "true")
	rq.w.WriteHeader(http.StatusOK)
	return nil
}

// list is List Directories and Files.
func (h *handler) list(rq *req) error {
	max, err := rq.maxResults()
	if err != nil {
		return err
	}
	inc := map[string]bool{}
	for _, s := range strings.Split(rq.q.Get("include"), ",") {
		s = strings.TrimSpace(strings.ToLower(s))
		switch s {
		case "":
		case "timestamps", "etag", "attributes", "permissionkey":
			inc[s] = true
		default:
			return azerr.InvalidQuery("include", rq.q.Get("include"), "")
		}
	}
	extended := rq.r.Header.Get("X-Ms-File-Extended-Info") == "true"
	marker, err := decodeListMarker(rq.q.Get("marker"))
	if err != nil {
		return err
	}
	res, err := h.svc.List(rq.ctx(), file.ListRequest{Ref: rq.ref(), Prefix: rq.q.Get("prefix"), Marker: marker, Max: int(max)})
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(`<EnumerationResults ServiceEndpoint="` + azerr.EscapeXML(h.d.BaseURL(rq.info.Account)+"/") + `" ShareName="` + azerr.EscapeXML(rq.share) + `"`)
	if rq.snapshot != "" {
		b.WriteString(` ShareSnapshot="` + rq.snapshot + `"`)
	}
	b.WriteString(` DirectoryPath="` + azerr.EscapeXML(rq.path) + `">`)
	if p := rq.q.Get("prefix"); p != "" {
		nameElem(&b, "Prefix", p)
	}
	optElem(&b, "Marker", rq.q.Get("marker"))
	if v := rq.q.Get("maxresults"); v != "" {
		b.WriteString("<MaxResults>" + strconv.FormatInt(max, 10) + "</MaxResults>")
	}
	if extended || len(inc) > 0 {
		b.WriteString("<DirectoryId>" + strconv.FormatUint(res.Dir.ID, 10) + "</DirectoryId>")
	}
	b.WriteString("<Entries>")
	for _, n := range res.Entries {
		tag := "File"
		if n.Dir {
			tag = "Directory"
		}
		b.WriteString("<" + tag + ">")
		nameElem(&b, "Name", n.Name)
		// Azure sends every entry's FileId, whatever was asked.
		b.WriteString("<FileId>" + strconv.FormatUint(n.ID, 10) + "</FileId>")
		b.WriteString("<Properties>")
		if !n.Dir {
			b.WriteString("<Content-Length>" + strconv.FormatInt(n.Size, 10) + "</Content-Length>")
		}
		if inc["timestamps"] {
			b.WriteString("<CreationTime>" + file.FormatTime(n.CreationTime) + "</CreationTime>")
			b.WriteString("<LastAccessTime>" + file.FormatTime(n.LastAccessTime) + "</LastAccessTime>")
			b.WriteString("<LastWriteTime>" + file.FormatTime(n.LastWriteTime) + "</LastWriteTime>")
			b.WriteString("<ChangeTime>" + file.FormatTime(n.ChangeTime) + "</ChangeTime>")
			b.WriteString("<Last-Modified>" + httpx.FormatHTTPTime(n.Modified) + "</Last-Modified>")
		}
		if inc["etag"] {
			b.WriteString("<Etag>" + esc(file.ETagString(n.ETag)) + "</Etag>")
		}
		b.WriteString("</Properties>")
		if inc["attributes"] {
			b.WriteString("<Attributes>" + n.Attrs.String() + "</Attributes>")
		}
		if inc["permissionkey"] {
			b.WriteString("<PermissionKey>" + esc(n.PermKey) + "</PermissionKey>")
		}
		b.WriteString("</" + tag + ">")
	}
	b.WriteString("</Entries><NextMarker>" + encodeListMarker(res.Next) + "</NextMarker></EnumerationResults>")
	return writeXML(rq, http.StatusOK, b.String())
}

// nameElem writes a name element: as it is when XML can carry it, else
// percent-encoded with Encoded="true" (names may hold U+FFFF and the
// like), as Azure sends them.
func nameElem(b *strings.Builder, tag, name string) {
	if azerr.XMLSafe(name) {
		b.WriteString("<" + tag + ">" + esc(name) + "</" + tag + ">")
		return
	}
	b.WriteString("<" + tag + ` Encoded="true">` + url.QueryEscape(name) + "</" + tag + ">")
}

// A listing's continuation marker is opaque, as Azure's: the name to
// resume after, base64url, so that any name (one XML cannot carry
// included) comes back intact.
func encodeListMarker(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(name))
}

func decodeListMarker(v string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return "", azerr.InvalidQuery("marker", v, "")
	}
	return string(b), nil
}

// putRange is Put Range (update and clear) and Put Range From URL.
func (h *handler) putRange(rq *req) error {
	hd := rq.r.Header
	fromURL := hd.Get("X-Ms-Copy-Source") != ""
	if rq.snapshot != "" {
		return azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	rv := hd.Get("X-Ms-Range")
	if rv == "" {
		rv = hd.Get("Range")
	}
	if rv == "" {
		return azerr.MissingHeader("x-ms-range")
	}
	start, end, ok := httpx.ParseRange(rv, false)
	if !ok {
		return azerr.InvalidHeader("x-ms-range", rv)
	}
	write := strings.ToLower(hd.Get("X-Ms-Write"))
	if write == "" {
		return azerr.MissingHeader("x-ms-write")
	}
	if write != "update" && write != "clear" {
		return azerr.InvalidHeader("x-ms-write", hd.Get("X-Ms-Write"))
	}
	n := end - start + 1
	req := file.PutRangeRequest{Ref: rq.ref(), Start: start, End: end, Clear: write == "clear", LeaseID: hd.Get("X-Ms-Lease-Id"),
		PreserveLastWrite: strings.EqualFold(hd.Get("X-Ms-File-Last-Write-Time"), "preserve")}
	var sum []byte
	switch {
	case req.Clear:
		if rq.r.ContentLength > 0 {
			return azerr.InvalidHeader("Content-Length", strconv.FormatInt(rq.r.ContentLength, 10))
		}
	case fromURL:
		if n > file.MaxRangeWrite {
			return azerr.InvalidHeader("x-ms-range", rv)
		}
		sv := hd.Get("X-Ms-Source-Range")
		ss, se, ok := httpx.ParseRange(sv, false)
		if !ok || se-ss+1 != n {
			return azerr.InvalidHeader("x-ms-source-range", sv)
		}
		srcURL := hd.Get("X-Ms-Copy-Source")
		if u, err := url.Parse(srcURL); err == nil && u.Scheme != "" && otherEndpoint(u, rq.r.Host) {
			// A blob of this server: its bytes, read now (chunks are
			// immutable), become the range.
			b, err := h.blobSource(rq, srcURL, u, false)
			if err != nil {
				return err
			}
			if se >= b.Size {
				return azerr.New(azerr.InvalidRange)
			}
			req.Data = content.Ingested{Segs: blob.Segments(b, ss, n), Size: n}
			break
		}
		src, err := h.copySource(rq, srcURL, false)
		if err != nil {
			return err
		}
		req.Source, req.SourceOff = &src, ss
	default:
		if n > file.MaxRangeWrite {
			return azerr.New(azerr.RequestBodyTooLarge).WithDetail("MaxLimit", strconv.Itoa(file.MaxRangeWrite))
		}
		if rq.r.ContentLength < 0 && hd.Get("Content-Length") == "" {
			return azerr.New(azerr.MissingContentLengthHeader)
		}
		if rq.r.ContentLength != n {
			return azerr.InvalidHeader("Content-Length", strconv.FormatInt(rq.r.ContentLength, 10))
		}
		want, err := decodeMD5("Content-MD5", hd.Get("Content-Md5"))
		if err != nil {
			return err
		}
		data, err := h.svc.Ingest(rq.ctx(), bodyReader{rq.r.Body}, n, want)
		if err != nil {
			return err
		}
		if data.Size != n {
			return azerr.InvalidHeader("Content-Length", strconv.FormatInt(rq.r.ContentLength, 10))
		}
		req.Data, sum = data, data.MD5
	}
	node, err := h.svc.PutRange(rq.ctx(), req)
	if err != nil {
		return err
	}
	hs := headers{h: rq.w.Header()}
	hs.set("Etag", file.ETagString(node.ETag))
	hs.set("Last-Modified", httpx.FormatHTTPTime(node.Modified))
	hs.set("X-Ms-File-Last-Write-Time", file.FormatTime(node.LastWriteTime))
	if sum != nil {
		hs.set("Content-Md5", base64.StdEncoding.EncodeToString(sum))
	}
	if fromURL {
		// The CRC-64 of the range written, read back from its chunks
		// (immutable: what this write stored, whatever came after).
		crc := content.NewCRC64()
		body := h.svc.Stream(rq.ctx(), node.Written)
		_, err := io.Copy(crc, body)
		body.Close()
		if err != nil {
			return err
		}
		hs.set("X-Ms-Content-Crc64", base64.StdEncoding.EncodeToString(content.CRC64Bytes(crc.Sum64())))
	}
	hs.set("X-Ms-Request-Server-Encrypted", "true")
	rq.w.WriteHeader(http.StatusCreated)
	return nil
}

// listRanges is List Ranges (with prevsharesnapshot: the diff).
func (h *handler) listRanges(rq *req) error {
	prev := rq.q.Get("prevsharesnapshot")
	if prev != "" && !file.ValidSnapshot(prev) {
		return azerr.InvalidQuery("prevsharesnapshot", prev, "")
	}
	from, to := int64(0), int64(-1)
	if s, e, has, err := httpx.ReadRange(rq.r.Header); err != nil {
		return err
	} else if has {
		from, to = s, e
	}
	var supportRename bool
	switch v := rq.r.Header.Get("X-Ms-File-Support-Rename"); {
	case v == "" || strings.EqualFold(v, "false"):
	case strings.EqualFold(v, "true"):
		supportRename = true
	default:
		return azerr.InvalidHeader("x-ms-file-support-rename", v)
	}
	rl, err := h.svc.ListRanges(rq.ctx(), rq.ref(), from, to, prev, supportRename, rq.r.Header.Get("X-Ms-Lease-Id"))
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("<Ranges>")
	// Written and cleared ranges interleave in offset order.
	i, j := 0, 0
	for i < len(rl.Ranges) || j < len(rl.Clear) {
		if j >= len(rl.Clear) || (i < len(rl.Ranges) && rl.Ranges[i].Start < rl.Clear[j].Start) {
			r := rl.Ranges[i]
			b.WriteString("<Range><Start>" + strconv.FormatInt(r.Start, 10) + "</Start><End>" + strconv.FormatInt(r.End, 10) + "</End></Range>")
			i++
			continue
		}
		r := rl.Clear[j]
		b.WriteString("<ClearRange><Start>" + strconv.FormatInt(r.Start, 10) + "</Start><End>" + strconv.FormatInt(r.End, 10) + "</End></ClearRange>")
		j++
	}
	b.WriteString("</Ranges>")
	hd := rq.w.Header()
	setETag(hd, rl.Node.ETag, rl.Node.Modified)
	set(hd, "X-Ms-Content-Length", strconv.FormatInt(rl.Node.Size, 10))
	return writeXML(rq, http.StatusOK, b.String())
}

// leaseFile is Lease File.
func (h *handler) leaseFile(rq *req) error {
	if rq.snapshot != "" {
		return azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	a, err := leaseAction(rq, false)
	if err != nil {
		return err
	}
	n, res, err := h.svc.LeaseFile(rq.ctx(), rq.ref(), a)
	if err != nil {
		return err
	}
	leaseResponse(rq, a.Kind, res, n.ETag, n.Modified)
	return nil
}

// rename is Rename File and Rename Directory.
func (h *handler) rename(rq *req) error {
	hd := rq.r.Header
	srcV := hd.Get("X-Ms-File-Rename-Source")
	if srcV == "" {
		return azerr.MissingHeader("x-ms-file-rename-source")
	}
	src, err := h.renameSource(rq, srcV)
	if err != nil {
		return err
	}
	boolHdr := func(name string) (bool, error) {
		switch v := strings.ToLower(hd.Get(name)); v {
		case "", "false":
			return false, nil
		case "true":
			return true, nil
		}
		return false, azerr.InvalidHeader(name, hd.Get(name))
	}
	replace, err := boolHdr("X-Ms-File-Rename-Replace-If-Exists")
	if err != nil {
		return err
	}
	ignoreRO, err := boolHdr("X-Ms-File-Rename-Ignore-Readonly")
	if err != nil {
		return err
	}
	smb, err := rq.smbProps(rq.dir, false)
	if err != nil {
		return err
	}
	req := file.RenameRequest{Source: src, Dest: rq.ref(), Dir: rq.dir, Replace: replace, IgnoreReadOnly: ignoreRO,
		SourceLeaseID: hd.Get("X-Ms-Source-Lease-Id"), DestLeaseID: hd.Get("X-Ms-Destination-Lease-Id"), SMB: &smb}
	if hasMeta(hd) {
		meta, err := rq.metadata()
		if err != nil {
			return err
		}
		req.Meta = &meta
	}
	if v := hd.Get("X-Ms-Content-Type"); v != "" {
		req.ContentType = &v
	}
	n, err := h.svc.Rename(rq.ctx(), req)
	if err != nil {
		return err
	}
	nodeHeaders(rq.w.Header(), n)
	set(rq.w.Header(), "X-Ms-Request-Server-Encrypted", "true")
	rq.w.WriteHeader(http.StatusOK)
	return nil
}

func hasMeta(hd http.Header) bool {
	for k := range hd {
		if len(k) > len("x-ms-meta-") && strings.EqualFold(k[:len("x-ms-meta-")], "x-ms-meta-") {
			return true
		}
	}
	return false
}

// renameSource reads x-ms-file-rename-source: a URL of the same share or
// a path relative to the share.
func (h *handler) renameSource(rq *req, v string) (file.Ref, error) {
	bad := azerr.InvalidHeader("x-ms-file-rename-source", v)
	p := v
	if u, err := url.Parse(v); err == nil && u.Scheme != "" {
		acct, rest, _ := httpx.URLAccount(u)
		sh, after, ok := strings.Cut(rest, "/")
		if sh, err = url.PathUnescape(sh); err != nil || !ok || acct != rq.info.Account || sh != rq.share {
			return file.Ref{}, bad
		}
		p = after
	} else if i := strings.IndexByte(v, '?'); i >= 0 {
		p = v[:i]
	}
	p, err := url.PathUnescape(p)
	if err != nil {
		return file.Ref{}, bad
	}
	p = strings.Trim(p, "/")
	if !strings.EqualFold(rq.r.Header.Get("X-Ms-Source-Allow-Trailing-Dot"), "true") {
		// Without the header Azure trims the trailing dots of every
		// component of the source (a source named "f.." is then "f").
		segs := strings.Split(p, "/")
		for i, sg := range segs {
			segs[i] = strings.TrimRight(sg, ".")
		}
		p = strings.Join(segs, "/")
	}
	return file.Ref{Account: rq.info.Account, Share: rq.share, Path: p}, nil
}

// listHandles is List Handles (the handles SMB clients hold).
func (h *handler) listHandles(rq *req) error {
	max, err := rq.maxResults()
	if err != nil {
		return err
	}
	var marker uint64
	if v := rq.q.Get("marker"); v != "" {
		m, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return azerr.New(azerr.InvalidMarker)
		}
		marker = m
	}
	recursive := strings.EqualFold(rq.r.Header.Get("X-Ms-Recursive"), "true")
	hs, next, err := h.svc.ListHandles(rq.ctx(), rq.ref(), recursive, marker, int(max))
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("<EnumerationResults><Entries>")
	for _, x := range hs {
		b.WriteString("<Handle><HandleId>" + strconv.FormatUint(x.ID, 10) + "</HandleId><Path>" + esc(x.Path) + "</Path>")
		b.WriteString("<FileId>" + strconv.FormatUint(x.FileID, 10) + "</FileId><ParentId>" + strconv.FormatUint(x.ParentID, 10) + "</ParentId>")
		b.WriteString("<SessionId>" + strconv.FormatUint(x.Session, 10) + "</SessionId><ClientIp>" + esc(x.ClientIP) + "</ClientIp>")
		b.WriteString("<ClientName></ClientName><OpenTime>" + httpx.FormatHTTPTime(x.Opened) + "</OpenTime>")
		b.WriteString("<AccessRightList>")
		a := x.Access
		if a&(file.FileReadData|file.GenericRead|file.GenericAll) != 0 {
			b.WriteString("<AccessRight>Read</AccessRight>")
		}
		if a&(file.FileWriteData|file.GenericWrite|file.GenericAll) != 0 {
			b.WriteString("<AccessRight>Write</AccessRight>")
		}
		if a&(file.Delete|file.GenericAll) != 0 {
			b.WriteString("<AccessRight>Delete</AccessRight>")
		}
		b.WriteString("</AccessRightList></Handle>")
	}
	b.WriteString("</Entries><NextMarker>")
	if next != 0 {
		b.WriteString(strconv.FormatUint(next, 10))
	}
	b.WriteString("</NextMarker></EnumerationResults>")
	return writeXML(rq, http.StatusOK, b.String())
}

// forceCloseHandles is Force Close Handles.
func (h *handler) forceCloseHandles(rq *req) error {
	id := rq.r.Header.Get("X-Ms-Handle-Id")
	if id == "" {
		return azerr.MissingHeader("x-ms-handle-id")
	}
	recursive := strings.EqualFold(rq.r.Header.Get("X-Ms-Recursive"), "true")
	n, err := h.svc.ForceCloseHandles(rq.ctx(), rq.ref(), id, recursive)
	if err != nil {
		return err
	}
	hd := rq.w.Header()
	set(hd, "X-Ms-Number-Of-Handles-Closed", strconv.Itoa(n))
	set(hd, "X-Ms-Number-Of-Handles-Failed", "0")
	rq.w.WriteHeader(http.StatusOK)
	return nil
}

// copySource resolves a copy source URL on this server and checks the
// caller may read it (authorizeSource; callerCovers as there).
func (h *handler) copySource(rq *req, src string, callerCovers bool) (file.Ref, error) {
	u, err := url.Parse(src)
	if err != nil || u.Scheme == "" {
		return file.Ref{}, azerr.InvalidHeader("x-ms-copy-source", src)
	}
	acct, rest, _ := httpx.URLAccount(u)
	parts := strings.SplitN(rest, "/", 2)
	if acct == "" || len(parts) < 2 {
		return file.Ref{}, azerr.InvalidHeader("x-ms-copy-source", src)
	}
	ref := file.Ref{Account: acct}
	if ref.Share, err = url.PathUnescape(parts[0]); err != nil {
		return file.Ref{}, azerr.InvalidHeader("x-ms-copy-source", src)
	}
	if ref.Path, err = url.PathUnescape(parts[1]); err != nil {
		return file.Ref{}, azerr.InvalidHeader("x-ms-copy-source", src)
	}
	ref.Snapshot = u.Query().Get("sharesnapshot")
	err = h.authorizeSource(rq, src, ref.Account, auth.Access{Service: auth.File, Resource: auth.ResObject, Perms: "r",
		Container: ref.Share, Object: ref.Path, Snapshot: ref.Snapshot, Policy: h.policyLookup(rq.ctx(), ref.Account, ref.Share)}, callerCovers)
	return ref, err
}

// authorizeSource checks that the caller may read a copy source on this
// server as a read a would. When callerCovers (Copy File), a Shared Key or
// bearer caller covers sources in its own account, as Azure lets Copy
// File read a same-account file with the caller's own authorization. Any
// other source, and every source of Put Range From URL (which Azure
// requires to be public or carry a SAS), needs its own credentials: a SAS
// in its URL or an x-ms-copy-source-authorization bearer token. A source
// that brings none is 404 CannotVerifyCopySource, as Azure answers (the
// source is read anonymously and does not show itself); credentials that
// do not allow the read are 403 CannotVerifyCopySource.
func (h *handler) authorizeSource(rq *req, srcURL, account string, a auth.Access, callerCovers bool) error {
	if id := rq.info.Identity; callerCovers && id != nil && account == rq.info.Account &&
		(id.Kind == auth.SharedKey || id.Kind == auth.SharedKeyLite || id.Kind == auth.Bearer) {
		return nil
	}
	srcAuth := rq.r.Header.Get("X-Ms-Copy-Source-Authorization")
	if scheme, _, _ := strings.Cut(srcAuth, " "); srcAuth != "" && scheme != "Bearer" {
		// Azure takes only bearer tokens for a copy source.
		return azerr.InvalidHeader("x-ms-copy-source-authorization", srcAuth)
	}
	sr, err := http.NewRequestWithContext(rq.ctx(), http.MethodGet, srcURL, nil)
	if err == nil {
		sr.RemoteAddr, sr.TLS = rq.r.RemoteAddr, rq.r.TLS
		sr.Header.Set("X-Ms-Version", rq.info.Version)
		if srcAuth != "" {
			sr.Header.Set("Authorization", srcAuth)
		}
		var sid *auth.Identity
		if sid, err = h.d.Auth.Authenticate(sr, a.Service, account); err == nil && (sid == nil || sid.Kind == auth.Anonymous) {
			// Read anonymously: a blob of a public container, or nothing.
			if h.d.Auth.Authorize(sid, sr, a) == nil {
				return nil
			}
			return azerr.Newf(azerr.CannotVerifyCopySource, "The specified resource does not exist.").WithStatus(http.StatusNotFound)
		}
		if err == nil {
			err = h.d.Auth.Authorize(sid, sr, a)
		}
	}
	if err != nil {
		return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source could not be read: %v", err).WithStatus(http.StatusForbidden)
	}
	return nil
}

// copyFile is Copy File (completed synchronously).
func (h *handler) copyFile(rq *req) error {
	if rq.snapshot != "" {
		return azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	hd := rq.r.Header
	modes, err := copyModes(hd)
	if err != nil {
		return err
	}
	srcURL := hd.Get("X-Ms-Copy-Source")
	var src file.Ref
	var fromBlob *file.BlobSource
	if u, err := url.Parse(srcURL); err == nil && u.Scheme != "" && otherEndpoint(u, rq.r.Host) {
		// Not this File endpoint: a blob of this server's Blob endpoint.
		b, err := h.blobSource(rq, srcURL, u, true)
		if err != nil {
			return err
		}
		fromBlob = &file.BlobSource{Size: b.Size, Props: b.Props, Meta: b.Meta, Segs: blob.Segments(b, 0, b.Size)}
	} else if src, err = h.copySource(rq, srcURL, true); err != nil {
		return err
	}
	var meta *[]content.KV
	if hasMeta(hd) {
		m, err := rq.metadata()
		if err != nil {
			return err
		}
		meta = &m
	}
	smb, err := rq.smbProps(false, false)
	if err != nil {
		return err
	}
	n, err := h.svc.CopyFile(rq.ctx(), file.CopyRequest{Source: src, FromBlob: fromBlob, SourceURL: srcURL, Dest: rq.ref(), Meta: meta, SMB: smb,
		LeaseID: hd.Get("X-Ms-Lease-Id"), CopySMB: modes})
	if err != nil {
		return err
	}
	out := rq.w.Header()
	setETag(out, n.ETag, n.Modified)
	set(out, "X-Ms-Copy-Id", n.Copy.ID)
	set(out, "X-Ms-Copy-Status", n.Copy.Status)
	rq.w.WriteHeader(http.StatusAccepted)
	return nil
}

// otherEndpoint reports whether u names another endpoint than host (the
// Host of this request): another port, or without ports another host
// (host-style names such as account.blob... and account.file...).
func otherEndpoint(u *url.URL, host string) bool {
	_, port, err := net.SplitHostPort(host)
	if err != nil {
		port = ""
	}
	if u.Port() != "" || port != "" {
		return u.Port() != port
	}
	return !strings.EqualFold(u.Host, host)
}

// blobSource reads the blob a Copy File or Put Range From URL names, after
// checking the caller may read it (authorizeSource; callerCovers as there).
func (h *handler) blobSource(rq *req, srcURL string, u *url.URL, callerCovers bool) (*blob.Blob, error) {
	acct, rest, _ := httpx.URLAccount(u)
	parts := strings.SplitN(rest, "/", 2)
	if acct == "" || len(parts) < 2 {
		return nil, azerr.InvalidHeader("x-ms-copy-source", srcURL)
	}
	ref := blob.Ref{Account: acct, Snapshot: u.Query().Get("snapshot")}
	var err error
	if ref.Container, err = url.PathUnescape(parts[0]); err != nil {
		return nil, azerr.InvalidHeader("x-ms-copy-source", srcURL)
	}
	if ref.Name, err = url.PathUnescape(parts[1]); err != nil {
		return nil, azerr.InvalidHeader("x-ms-copy-source", srcURL)
	}
	ctx := rq.ctx()
	err = h.authorizeSource(rq, srcURL, ref.Account, auth.Access{Service: auth.Blob, Resource: auth.ResObject, Perms: "r",
		Container: ref.Container, Object: ref.Name, Snapshot: ref.Snapshot, Policy: h.containerPolicy(ctx, ref.Account, ref.Container),
		PublicRead: func() (bool, error) {
			c, err := h.blobs.ContainerExists(ctx, ref.Account, ref.Container)
			return c != nil && (c.Public == "blob" || c.Public == "container"), err
		}}, callerCovers)
	if err != nil {
		return nil, err
	}
	b, err := h.blobs.GetBlob(ctx, ref, blob.Cond{}, "")
	if err != nil {
		if e, ok := azerr.As(err); ok && e.Status == http.StatusNotFound {
			return nil, azerr.Newf(azerr.CannotVerifyCopySource, "The copy source could not be read: %v", err).WithStatus(http.StatusNotFound)
		}
		return nil, err
	}
	return b, nil
}

// containerPolicy finds stored access policies in a blob container's ACL.
func (h *handler) containerPolicy(ctx context.Context, acct, container string) func(string) (*auth.Policy, error) {
	return func(id string) (*auth.Policy, error) {
		c, err := h.blobs.ContainerExists(ctx, acct, container)
		if err != nil || c == nil {
			return nil, err
		}
		for _, si := range c.ACL {
			if si.ID == id {
				return storedPolicy(si.Start, si.Expiry, si.Permission), nil
			}
		}
		return nil, nil
	}
}

// copyModes reads which SMB properties a copy takes from its source and
// the copy's flags. x-ms-file-permission-copy-mode: override needs the
// permission to set (400 MissingRequiredHeader without one).
func copyModes(hd http.Header) (file.CopySMB, error) {
	var c file.CopySMB
	switch m := hd.Get("X-Ms-File-Permission-Copy-Mode"); {
	case strings.EqualFold(m, "override"):
		if hd.Get("X-Ms-File-Permission") == "" && hd.Get("X-Ms-File-Permission-Key") == "" {
			return c, azerr.MissingHeader("x-ms-file-permission")
		}
	case m == "" || strings.EqualFold(m, "source"):
		c.Permission = true
	default:
		return c, azerr.InvalidHeader("x-ms-file-permission-copy-mode", m)
	}
	c.Attributes = strings.EqualFold(hd.Get("X-Ms-File-Attributes"), "source")
	c.Creation = strings.EqualFold(hd.Get("X-Ms-File-Creation-Time"), "source")
	c.LastWrite = strings.EqualFold(hd.Get("X-Ms-File-Last-Write-Time"), "source")
	c.Change = strings.EqualFold(hd.Get("X-Ms-File-Change-Time"), "source")
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"X-Ms-File-Copy-Set-Archive", &c.SetArchive}, {"X-Ms-File-Copy-Ignore-Readonly", &c.IgnoreReadOnly}} {
		switch v := hd.Get(f.name); {
		case v == "" || strings.EqualFold(v, "false"):
		case strings.EqualFold(v, "true"):
			*f.dst = true
		default:
			return c, azerr.InvalidHeader(strings.ToLower(f.name), v)
		}
	}
	return c, nil
}

// abortCopy is Abort Copy File: copies complete at once, so there is
// never one pending. The copy id is checked before the file (Azure: a
// copy id that is no GUID is 400 InvalidQueryParameterValue even for a
// file that does not exist).
func (h *handler) abortCopy(rq *req) error {
	if !strings.EqualFold(rq.r.Header.Get("X-Ms-Copy-Action"), "abort") {
		return azerr.InvalidHeader("x-ms-copy-action", rq.r.Header.Get("X-Ms-Copy-Action"))
	}
	id := rq.q.Get("copyid")
	if id == "" {
		return azerr.New(azerr.MissingRequiredQueryParameter).WithDetail("QueryParameterName", "copyid")
	}
	if _, ok := guid.Parse(id); !ok {
		return azerr.InvalidQuery("copyid", id, "")
	}
	if _, err := h.svc.Get(rq.ctx(), rq.ref(), false, rq.r.Header.Get("X-Ms-Lease-Id")); err != nil {
		return err
	}
	return azerr.New(azerr.NoPendingCopyOperation)
}
