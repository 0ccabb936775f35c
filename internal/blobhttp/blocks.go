package blobhttp

import (
	"bytes"
	"crypto/md5"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/content"
)

func (rq *req) blockID() (string, error) {
	id, ok := rq.q["blockid"]
	if !ok {
		return "", azerr.New(azerr.MissingRequiredQueryParameter).WithDetail("QueryParameterName", "blockid")
	}
	if err := blob.ValidateBlockID(id[0]); err != nil {
		return "", azerr.InvalidQuery("blockid", id[0], "")
	}
	return id[0], nil
}

// putBlock is Put Block.
func (h *handler) putBlock(rq *req) error {
	if err := rq.validName(); err != nil {
		return err
	}
	id, err := rq.blockID()
	if err != nil {
		return err
	}
	cond := blob.Cond{LeaseID: rq.r.Header.Get("X-Ms-Lease-Id")}
	// A staged block takes the key Put Block List will commit with; it is
	// echoed, not checked against a committed blob it may replace.
	if rq.keySHA, err = rq.cpk(ownKeyHeaders); err != nil {
		return err
	}
	sums, err := rq.txChecksums()
	if err != nil {
		return err
	}
	if _, err := rq.contentLength(blob.BlockLimit(rq.info.Version)); err != nil {
		return err
	}
	if rq.snapshot != "" {
		return azerr.New(azerr.InvalidOperation)
	}
	u, err := rq.upload()
	if err != nil {
		return err
	}
	data, err := h.ingest(rq, u, sums, false, blob.SumCRC64)
	if err != nil {
		return err
	}
	if err := h.svc.PutBlock(rq.ctx(), rq.ref(), id, data, cond); err != nil {
		return err
	}
	out := rq.w.Header()
	sums.respond(out, data)
	out.Set("X-Ms-Request-Server-Encrypted", "true")
	rq.status(http.StatusCreated)
	return nil
}

// parseBlockList decodes a Put Block List body.
func parseBlockList(body []byte) ([]blob.BlockListItem, error) {
	dec := xml.NewDecoder(bytes.NewReader(body))
	var out []blob.BlockListItem
	depth := 0
	var cur *blob.BlockListItem
	sawRoot := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, azerr.New(azerr.InvalidXmlDocument)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch depth {
			case 1:
				if t.Name.Local != "BlockList" {
					return nil, azerr.New(azerr.InvalidXmlDocument)
				}
				sawRoot = true
			case 2:
				switch t.Name.Local {
				case "Committed", "Uncommitted", "Latest":
					cur = &blob.BlockListItem{Kind: t.Name.Local}
				default:
					return nil, azerr.New(azerr.InvalidXmlDocument)
				}
			default:
				return nil, azerr.New(azerr.InvalidXmlDocument)
			}
		case xml.CharData:
			if cur != nil {
				cur.ID += string(t)
			}
		case xml.EndElement:
			if depth == 2 && cur != nil {
				cur.ID = strings.TrimSpace(cur.ID)
				out = append(out, *cur)
				cur = nil
			}
			depth--
		}
	}
	if !sawRoot {
		return nil, azerr.New(azerr.InvalidXmlDocument)
	}
	return out, nil
}

// putBlockList is Put Block List.
func (h *handler) putBlockList(rq *req) error {
	if err := rq.validName(); err != nil {
		return err
	}
	nv, sums, err := h.newVersionAndSums(rq, false)
	if err != nil {
		return err
	}
	body, err := readBody(rq, 64<<20)
	if err != nil {
		return err
	}
	// The transactional checksums cover the XML body.
	if sums.md5 != nil {
		if sum := md5.Sum(body); !bytes.Equal(sum[:], sums.md5) {
			return azerr.New(azerr.Md5Mismatch)
		}
	}
	if err := sums.verify(blob.Ingested{CRC64: content.CRC64(body)}); err != nil {
		return err
	}
	items, err := parseBlockList(body)
	if err != nil {
		return err
	}
	protect, err := h.protection(rq)
	if err != nil {
		return err
	}
	b, err := h.svc.PutBlockList(rq.ctx(), blob.PutBlockListRequest{Ref: rq.ref(), Blocks: items, Props: nv.props,
		Meta: nv.meta, Tags: nv.tags, Cond: nv.cond, Tier: nv.tier, Protect: protect})
	if err != nil {
		return err
	}
	out := rq.w.Header()
	setETag(out, b.ETag, b.Modified)
	out.Set("X-Ms-Request-Server-Encrypted", "true")
	versionHeader(out, b)
	rq.status(http.StatusCreated)
	return nil
}

// getBlockList is Get Block List.
func (h *handler) getBlockList(rq *req) error {
	which := strings.ToLower(rq.q.Get("blocklisttype"))
	switch which {
	case "":
		which = "committed"
	case "committed", "uncommitted", "all":
	default:
		return azerr.InvalidQuery("blocklisttype", rq.q.Get("blocklisttype"), "")
	}
	cond := blob.Cond{LeaseID: rq.r.Header.Get("X-Ms-Lease-Id"), IfTags: rq.r.Header.Get("X-Ms-If-Tags")}
	bl, err := h.svc.GetBlockList(rq.ctx(), rq.ref(), which, cond)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	size := int64(0)
	if bl.Blob != nil {
		setETag(out, bl.Blob.ETag, bl.Blob.Modified)
		size = bl.Blob.Size
	}
	out.Set("X-Ms-Blob-Content-Length", strconv.FormatInt(size, 10))
	var b strings.Builder
	b.WriteString("<BlockList>")
	list := func(elem string, items []blob.BlockInfo) {
		if items == nil {
			if (elem == "CommittedBlocks" && which != "uncommitted") || (elem == "UncommittedBlocks" && which != "committed") {
				b.WriteString("<" + elem + "/>")
			}
			return
		}
		b.WriteString("<" + elem + ">")
		for _, it := range items {
			b.WriteString("<Block><Name>" + azerr.EscapeXML(it.Name) + "</Name><Size>" + strconv.FormatInt(it.Size, 10) + "</Size></Block>")
		}
		b.WriteString("</" + elem + ">")
	}
	list("CommittedBlocks", bl.Committed)
	list("UncommittedBlocks", bl.Uncommitted)
	b.WriteString("</BlockList>")
	return writeXML(rq, http.StatusOK, b.String())
}
