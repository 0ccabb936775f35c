package blobhttp

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

type tagsXML struct {
	XMLName xml.Name `xml:"Tags"`
	Tags    []struct {
		Key   string `xml:"Key"`
		Value string `xml:"Value"`
	} `xml:"TagSet>Tag"`
}

// getTags is Get Blob Tags.
func (h *handler) getTags(rq *req) error {
	cond, err := rq.tagsCond()
	if err != nil {
		return err
	}
	tags, err := h.svc.GetTags(rq.ctx(), rq.ref(), cond)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("<Tags><TagSet>")
	for _, kv := range blob.SortTags(tags) {
		b.WriteString("<Tag><Key>" + azerr.EscapeXML(kv[0]) + "</Key><Value>" + azerr.EscapeXML(kv[1]) + "</Value></Tag>")
	}
	b.WriteString("</TagSet></Tags>")
	return writeXML(rq, http.StatusOK, b.String())
}

// setTags is Set Blob Tags.
func (h *handler) setTags(rq *req) error {
	cond, err := rq.tagsCond()
	if err != nil {
		return err
	}
	body, err := readBody(rq, 1<<20)
	if err != nil {
		return err
	}
	var tags []blob.KV
	if len(bytes.TrimSpace(body)) > 0 {
		var doc tagsXML
		if err := xml.Unmarshal(body, &doc); err != nil {
			return azerr.New(azerr.InvalidXmlDocument)
		}
		for _, t := range doc.Tags {
			tags = append(tags, blob.KV{t.Key, t.Value})
		}
	}
	if rq.snapshot != "" && rq.info.Version < "2020-08-04" {
		// A snapshot's tags can be set from version 2020-08-04 on.
		return azerr.New(azerr.InvalidOperation)
	}
	if err := h.svc.SetTags(rq.ctx(), rq.ref(), tags, cond); err != nil {
		return err
	}
	rq.status(http.StatusNoContent)
	return nil
}

// setTier is Set Blob Tier.
func (h *handler) setTier(rq *req) error {
	tier, err := tierHeader(rq)
	if err != nil {
		return err
	}
	if tier == "" {
		return azerr.MissingHeader("x-ms-access-tier")
	}
	priority := rq.r.Header.Get("X-Ms-Rehydrate-Priority")
	switch {
	case priority == "":
	case strings.EqualFold(priority, "Standard"):
		priority = "Standard"
	case strings.EqualFold(priority, "High"):
		priority = "High"
	default:
		return azerr.InvalidHeader("x-ms-rehydrate-priority", priority)
	}
	cond := blob.Cond{LeaseID: rq.r.Header.Get("X-Ms-Lease-Id"), IfTags: rq.r.Header.Get("X-Ms-If-Tags")}
	rehydrated, err := h.svc.SetTier(rq.ctx(), rq.ref(), tier, priority, cond)
	if err != nil {
		return err
	}
	if rehydrated {
		// Leaving the archive tier is a rehydration: Azure accepts it
		// with 202; here it completes at once.
		rq.status(http.StatusAccepted)
		return nil
	}
	rq.status(http.StatusOK)
	return nil
}
