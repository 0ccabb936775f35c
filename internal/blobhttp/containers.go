package blobhttp

import (
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/acl"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/content"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/lease"
)

func publicAccess(v string) (string, error) {
	switch v {
	case "", "blob", "container":
		return v, nil
	}
	return "", azerr.InvalidHeader("x-ms-blob-public-access", v)
}

// createContainer is Create Container.
func (h *handler) createContainer(rq *req) error {
	meta, err := rq.metadata()
	if err != nil {
		return err
	}
	pa, err := publicAccess(rq.r.Header.Get("X-Ms-Blob-Public-Access"))
	if err != nil {
		return err
	}
	scope, deny, err := h.containerScope(rq)
	if err != nil {
		return err
	}
	immutable, err := h.immutableVersioningHeader(rq)
	if err != nil {
		return err
	}
	c, err := h.svc.CreateContainerWith(rq.ctx(), rq.info.Account, rq.container,
		blob.ContainerOptions{Meta: meta, Public: pa, Scope: scope, Deny: deny, ImmutableVersioning: immutable})
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), c.ETag, c.Modified)
	rq.status(http.StatusCreated)
	return nil
}

func (rq *req) containerCond() (blob.Cond, error) {
	c, err := rq.cond()
	if err != nil {
		return c, err
	}
	if c.IfMatch != nil || c.IfNoneMatch != nil {
		return c, azerr.New(azerr.UnsupportedHeader)
	}
	return c, nil
}

// deleteContainer is Delete Container.
func (h *handler) deleteContainer(rq *req) error {
	cond, err := rq.containerCond()
	if err != nil {
		return err
	}
	if err := h.svc.DeleteContainer(rq.ctx(), rq.info.Account, rq.container, cond); err != nil {
		return err
	}
	rq.status(http.StatusAccepted)
	return nil
}

// asOf is the instant to report time-driven state at: the one the
// service checked the request at, or now for a record that carries none.
func (h *handler) asOf(t time.Time) time.Time {
	if t.IsZero() {
		return h.d.Now()
	}
	return t
}

func (h *handler) containerHeaders(rq *req, c *blob.Container, withMeta bool) {
	hd := rq.w.Header()
	setETag(hd, c.ETag, c.Modified)
	if withMeta {
		writeMeta(hd, c.Meta)
	}
	now := h.asOf(c.AsOf)
	hd.Set("X-Ms-Lease-Status", c.Lease.Status(now))
	hd.Set("X-Ms-Lease-State", c.Lease.StateName(now))
	if d := c.Lease.DurationName(now); d != "" {
		hd.Set("X-Ms-Lease-Duration", d)
	}
	if c.Public != "" {
		hd.Set("X-Ms-Blob-Public-Access", c.Public)
	}
	hd.Set("X-Ms-Has-Immutability-Policy", "false")
	hd.Set("X-Ms-Has-Legal-Hold", "false")
	if c.ImmutableVersioning {
		hd.Set("X-Ms-Immutable-Storage-With-Versioning-Enabled", "true")
	}
	hd.Set("X-Ms-Default-Encryption-Scope", defaultScope(c))
	hd.Set("X-Ms-Deny-Encryption-Scope-Override", strconv.FormatBool(c.DenyScopeOverride))
}

// getContainerProps is Get Container Properties / Get Container Metadata.
func (h *handler) getContainerProps(rq *req) error {
	c, err := h.svc.GetContainer(rq.ctx(), rq.info.Account, rq.container, rq.r.Header.Get("X-Ms-Lease-Id"))
	if err != nil {
		return err
	}
	h.containerHeaders(rq, c, true)
	rq.status(http.StatusOK)
	return nil
}

// setContainerMetadata is Set Container Metadata.
func (h *handler) setContainerMetadata(rq *req) error {
	cond, err := rq.containerCond()
	if err != nil {
		return err
	}
	if !cond.IfUnmodifiedSince.IsZero() {
		return azerr.New(azerr.UnsupportedHeader).WithDetail("HeaderName", "If-Unmodified-Since")
	}
	meta, err := rq.metadata()
	if err != nil {
		return err
	}
	c, err := h.svc.SetContainerMetadata(rq.ctx(), rq.info.Account, rq.container, meta, cond)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), c.ETag, c.Modified)
	rq.status(http.StatusOK)
	return nil
}

// getContainerACL is Get Container ACL.
func (h *handler) getContainerACL(rq *req) error {
	c, err := h.svc.GetContainer(rq.ctx(), rq.info.Account, rq.container, rq.r.Header.Get("X-Ms-Lease-Id"))
	if err != nil {
		return err
	}
	hd := rq.w.Header()
	setETag(hd, c.ETag, c.Modified)
	if c.Public != "" {
		hd.Set("X-Ms-Blob-Public-Access", c.Public)
	}
	doc := make([]acl.Identifier, 0, len(c.ACL))
	for _, si := range c.ACL {
		id := acl.Identifier{ID: si.ID}
		if si.HasPolicy {
			id.Policy = &acl.Policy{Start: nonEmpty(si.Start), Expiry: nonEmpty(si.Expiry), Permission: nonEmpty(si.Permission)}
		}
		doc = append(doc, id)
	}
	return writeXML(rq, http.StatusOK, acl.Render(doc))
}

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// nonEmpty is s, or nil for an empty string.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func readBody(rq *req, max int64) ([]byte, error) {
	if _, err := rq.contentLength(max); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(rq.body(), max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	return b, nil
}

// setContainerACL is Set Container ACL.
func (h *handler) setContainerACL(rq *req) error {
	cond, err := rq.containerCond()
	if err != nil {
		return err
	}
	pa, err := publicAccess(rq.r.Header.Get("X-Ms-Blob-Public-Access"))
	if err != nil {
		return err
	}
	body, err := readBody(rq, 1<<20)
	if err != nil {
		return err
	}
	doc, err := acl.Parse(body)
	if err != nil {
		return err
	}
	var ids []blob.SignedIdentifier
	seen := map[string]bool{}
	for _, id := range doc {
		if seen[id.ID] {
			return azerr.New(azerr.InvalidXmlDocument)
		}
		seen[id.ID] = true
		v := blob.SignedIdentifier{ID: id.ID}
		if p := id.Policy; p != nil {
			v.HasPolicy = true
			v.Start, v.Expiry, v.Permission = deref(p.Start), deref(p.Expiry), deref(p.Permission)
			// A stored policy may only grant container/blob SAS permissions;
			// the document is refused as a whole otherwise.
			for _, c := range v.Permission {
				if !strings.ContainsRune("racwdxyltfmeopi", c) {
					return azerr.New(azerr.InvalidXmlDocument)
				}
			}
		}
		ids = append(ids, v)
	}
	c, err := h.svc.SetContainerACL(rq.ctx(), rq.info.Account, rq.container, pa, ids, cond)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), c.ETag, c.Modified)
	rq.status(http.StatusOK)
	return nil
}

// leaseRequest decodes the headers of Lease Blob / Lease Container.
func (rq *req) leaseRequest() (blob.LeaseRequest, error) {
	a, err := httpx.LeaseAction(rq.r.Header, httpx.LeaseRules{Renew: true, DurationRequired: true, BreakPeriod: true})
	return blob.LeaseRequest{Action: a}, err
}

func writeLeaseResult(rq *req, kind lease.ActionKind, res lease.Result) {
	hd := rq.w.Header()
	switch kind {
	case lease.Acquire:
		hd["X-Ms-Lease-Id"] = []string{res.LeaseID}
		rq.status(http.StatusCreated)
	case lease.Break:
		hd.Set("X-Ms-Lease-Time", strconv.Itoa(res.LeaseTime))
		rq.status(http.StatusAccepted)
	case lease.Release:
		rq.status(http.StatusOK)
	default:
		hd.Set("X-Ms-Lease-Id", res.LeaseID)
		rq.status(http.StatusOK)
	}
}

// leaseContainer is Lease Container.
func (h *handler) leaseContainer(rq *req) error {
	lr, err := rq.leaseRequest()
	if err != nil {
		return err
	}
	if lr.Cond, err = rq.containerCond(); err != nil {
		return err
	}
	c, res, err := h.svc.LeaseContainer(rq.ctx(), rq.info.Account, rq.container, lr)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), c.ETag, c.Modified)
	writeLeaseResult(rq, lr.Action.Kind, res)
	return nil
}

func maxResults(rq *req) (int, error) {
	v := rq.q.Get("maxresults")
	if v == "" {
		return blob.MaxListResults, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, azerr.InvalidQuery("maxresults", v, "")
	}
	if n <= 0 {
		return 0, azerr.OutOfRangeQuery("maxresults", v, 1, 2147483647)
	}
	return min(n, blob.MaxListResults), nil
}

func includes(rq *req) map[string]bool {
	m := map[string]bool{}
	for _, v := range rq.q["include"] {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(strings.ToLower(p)); p != "" {
				m[p] = true
			}
		}
	}
	return m
}

func echo(b *strings.Builder, rq *req, param, elem string) {
	if _, ok := rq.q[param]; ok {
		b.WriteString("<" + elem + ">" + azerr.EscapeXML(rq.q.Get(param)) + "</" + elem + ">")
	}
}

func metaXML(b *strings.Builder, meta []blob.KV) {
	b.WriteString("<Metadata>")
	for _, kv := range meta {
		b.WriteString("<" + kv[0] + ">" + azerr.EscapeXML(kv[1]) + "</" + kv[0] + ">")
	}
	b.WriteString("</Metadata>")
}

// leaseXML renders a lease as of asOf, the instant the listing was read.
func leaseXML(b *strings.Builder, l lease.State, asOf time.Time, h *handler) {
	now := h.asOf(asOf)
	b.WriteString("<LeaseStatus>" + l.Status(now) + "</LeaseStatus><LeaseState>" + l.StateName(now) + "</LeaseState>")
	if d := l.DurationName(now); d != "" {
		b.WriteString("<LeaseDuration>" + d + "</LeaseDuration>")
	}
}

// listContainers is List Containers.
func (h *handler) listContainers(rq *req) error {
	max, err := maxResults(rq)
	if err != nil {
		return err
	}
	inc := includes(rq)
	list, next, err := h.svc.ListContainers(rq.ctx(), rq.info.Account, rq.q.Get("prefix"), rq.q.Get("marker"), max)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(`<EnumerationResults ServiceEndpoint="` + azerr.EscapeXML(h.d.BaseURL(rq.info.Account)+"/") + `">`)
	echo(&b, rq, "prefix", "Prefix")
	echo(&b, rq, "marker", "Marker")
	echo(&b, rq, "maxresults", "MaxResults")
	b.WriteString("<Containers>")
	entries, err := h.withDeleted(rq, list, next, inc["deleted"])
	if err != nil {
		return err
	}
	for _, e := range entries {
		c := e.c
		b.WriteString("<Container><Name>" + azerr.EscapeXML(c.Name) + "</Name>")
		if e.deleted != nil {
			b.WriteString("<Deleted>true</Deleted><Version>" + e.deleted.Version + "</Version>")
		}
		b.WriteString("<Properties><Last-Modified>" +
			httpx.FormatHTTPTime(c.Modified) + "</Last-Modified><Etag>" + content.ETagString(c.ETag) + "</Etag>")
		leaseXML(&b, c.Lease, c.AsOf, h)
		if c.Public != "" {
			b.WriteString("<PublicAccess>" + c.Public + "</PublicAccess>")
		}
		b.WriteString("<DefaultEncryptionScope>" + azerr.EscapeXML(defaultScope(c)) + "</DefaultEncryptionScope><DenyEncryptionScopeOverride>" +
			strconv.FormatBool(c.DenyScopeOverride) + "</DenyEncryptionScopeOverride>")
		b.WriteString("<HasImmutabilityPolicy>false</HasImmutabilityPolicy><HasLegalHold>false</HasLegalHold>")
		if c.ImmutableVersioning {
			b.WriteString("<ImmutableStorageWithVersioningEnabled>true</ImmutableStorageWithVersioningEnabled>")
		}
		if d := e.deleted; d != nil {
			b.WriteString("<DeletedTime>" + httpx.FormatHTTPTime(d.Deleted) + "</DeletedTime><RemainingRetentionDays>" +
				strconv.Itoa(d.Deletion().RemainingDays(c.AsOf)) + "</RemainingRetentionDays>")
		}
		b.WriteString("</Properties>")
		if inc["metadata"] {
			metaXML(&b, c.Meta)
		}
		b.WriteString("</Container>")
	}
	b.WriteString("</Containers><NextMarker>" + azerr.EscapeXML(next) + "</NextMarker></EnumerationResults>")
	return writeXML(rq, http.StatusOK, b.String())
}

// listBlobs is List Blobs (flat or hierarchical).
func (h *handler) listBlobs(rq *req) error {
	max, err := maxResults(rq)
	if err != nil {
		return err
	}
	inc := includes(rq)
	for k := range inc {
		switch k {
		case "snapshots", "metadata", "uncommittedblobs", "copy", "tags", "deleted", "versions", "immutabilitypolicy", "legalhold", "deletedwithversions", "permissions":
		default:
			return azerr.InvalidQuery("include", k, "")
		}
	}
	var items []blob.ListItem
	var next string
	only := rq.q.Get("showonly")
	if only == "deleted" {
		if items, next, err = h.listDeletedPaths(rq, max); err != nil {
			return err
		}
	} else {
		// showonly names a kind of path of a hierarchical namespace.
		if rq.q.Has("showonly") && (only != blob.OnlyFiles && only != blob.OnlyDirectories || !h.svc.HierarchicalNamespace(rq.info.Account)) {
			return azerr.InvalidQuery("showonly", only, "")
		}
		lr := blob.ListBlobsRequest{Prefix: rq.q.Get("prefix"), Delimiter: rq.q.Get("delimiter"), Marker: rq.q.Get("marker"),
			StartFrom: rq.q.Get("startfrom"), Max: max, Snapshots: inc["snapshots"], Uncommitted: inc["uncommittedblobs"], Deleted: inc["deleted"], Versions: inc["versions"],
			DeletedWithVersions: inc["deletedwithversions"], Only: only}
		if items, next, err = h.svc.ListBlobs(rq.ctx(), rq.info.Account, rq.container, lr); err != nil {
			return err
		}
	}
	var b strings.Builder
	b.WriteString(`<EnumerationResults ServiceEndpoint="` + azerr.EscapeXML(h.d.BaseURL(rq.info.Account)+"/") +
		`" ContainerName="` + azerr.EscapeXML(rq.container) + `">`)
	echo(&b, rq, "prefix", "Prefix")
	echo(&b, rq, "marker", "Marker")
	echo(&b, rq, "maxresults", "MaxResults")
	echo(&b, rq, "delimiter", "Delimiter")
	b.WriteString("<Blobs>")
	for _, it := range items {
		if it.Prefix != "" {
			b.WriteString("<BlobPrefix>" + nameXML(it.Prefix) + "</BlobPrefix>")
			continue
		}
		bl := it.Blob
		b.WriteString("<Blob>" + nameXML(bl.Name))
		if id, ok := blob.VersionOf(bl.Snapshot); ok {
			b.WriteString("<VersionId>" + id + "</VersionId>")
		} else if bl.Snapshot != "" {
			b.WriteString("<Snapshot>" + bl.Snapshot + "</Snapshot>")
		} else if bl.VersionID != "" && it.Deleted == nil {
			b.WriteString("<VersionId>" + bl.VersionID + "</VersionId>")
			if inc["versions"] {
				b.WriteString("<IsCurrentVersion>true</IsCurrentVersion>")
			}
		}
		if it.Deleted != nil {
			b.WriteString("<Deleted>true</Deleted>")
		}
		if it.DeletionID != "" {
			b.WriteString("<DeletionId>" + it.DeletionID + "</DeletionId>")
		}
		if it.HasVersionsOnly {
			b.WriteString("<HasVersionsOnly>true</HasVersionsOnly>")
		}
		b.WriteString("<Properties>")
		if it.Uncommitted {
			b.WriteString("<Content-Length>0</Content-Length><BlobType>BlockBlob</BlobType><LeaseStatus>unlocked</LeaseStatus><LeaseState>available</LeaseState></Properties></Blob>")
			continue
		}
		b.WriteString("<Creation-Time>" + httpx.FormatHTTPTime(bl.Created) + "</Creation-Time><Last-Modified>" + httpx.FormatHTTPTime(bl.Modified) +
			"</Last-Modified><Etag>" + strings.Trim(content.ETagString(bl.ETag), `"`) + "</Etag><Content-Length>" + strconv.FormatInt(bl.Size, 10) + "</Content-Length>")
		p := bl.Props
		b.WriteString("<Content-Type>" + azerr.EscapeXML(p.ContentType) + "</Content-Type><Content-Encoding>" + azerr.EscapeXML(p.ContentEncoding) +
			"</Content-Encoding><Content-Language>" + azerr.EscapeXML(p.ContentLanguage) + "</Content-Language>")
		b.WriteString("<Content-MD5>")
		if len(p.ContentMD5) > 0 {
			b.WriteString(base64.StdEncoding.EncodeToString(p.ContentMD5))
		}
		b.WriteString("</Content-MD5><Content-Disposition>" + azerr.EscapeXML(p.ContentDisposition) + "</Content-Disposition><Cache-Control>" +
			azerr.EscapeXML(p.CacheControl) + "</Cache-Control>")
		if bl.Type == blob.PageBlob {
			b.WriteString("<x-ms-blob-sequence-number>" + strconv.FormatInt(bl.Seq, 10) + "</x-ms-blob-sequence-number>")
		}
		b.WriteString("<BlobType>" + bl.Type + "</BlobType>")
		if bl.Snapshot == "" {
			leaseXML(&b, bl.Lease, bl.AsOf, h)
		} else {
			b.WriteString("<LeaseStatus>unlocked</LeaseStatus><LeaseState>available</LeaseState>")
		}
		if inc["copy"] && bl.Copy != nil {
			c := bl.Copy
			b.WriteString("<CopyId>" + c.ID + "</CopyId><CopyStatus>" + c.Status + "</CopyStatus><CopySource>" + azerr.EscapeXML(c.Source) +
				"</CopySource><CopyProgress>" + c.Progress + "</CopyProgress><CopyCompletionTime>" + httpx.FormatHTTPTime(c.Completion) + "</CopyCompletionTime>")
			if c.Description != "" {
				b.WriteString("<CopyStatusDescription>" + azerr.EscapeXML(c.Description) + "</CopyStatusDescription>")
			}
		}
		b.WriteString("<ServerEncrypted>true</ServerEncrypted>")
		if bl.KeySHA256 != "" {
			b.WriteString("<CustomerProvidedKeySha256>" + bl.KeySHA256 + "</CustomerProvidedKeySha256>")
		}
		if bl.EncryptionScope != "" {
			b.WriteString("<EncryptionScope>" + azerr.EscapeXML(bl.EncryptionScope) + "</EncryptionScope>")
		}
		if bl.Type == blob.BlockBlob {
			b.WriteString("<AccessTier>" + tierOf(bl) + "</AccessTier>")
			if bl.AccessTier == "" {
				b.WriteString("<AccessTierInferred>true</AccessTierInferred>")
			}
			if !bl.TierChanged.IsZero() {
				b.WriteString("<AccessTierChangeTime>" + httpx.FormatHTTPTime(bl.TierChanged) + "</AccessTierChangeTime>")
			}
			if bl.RehydrateTo != "" {
				b.WriteString("<ArchiveStatus>" + archiveStatus(bl) + "</ArchiveStatus><RehydratePriority>" + bl.RehydratePriority + "</RehydratePriority>")
			}
		}
		if bl.Sealed {
			b.WriteString("<Sealed>true</Sealed>")
		}
		if d := it.Deleted; d != nil {
			b.WriteString("<DeletedTime>" + httpx.FormatHTTPTime(d.Time) + "</DeletedTime><RemainingRetentionDays>" +
				strconv.Itoa(d.RemainingDays(bl.AsOf)) + "</RemainingRetentionDays>")
		}
		if len(bl.Tags) > 0 {
			b.WriteString("<TagCount>" + strconv.Itoa(len(bl.Tags)) + "</TagCount>")
		}
		protectionXML(&b, bl, inc)
		b.WriteString("</Properties>")
		if inc["metadata"] {
			metaXML(&b, bl.Meta)
		}
		if inc["tags"] && len(bl.Tags) > 0 {
			b.WriteString("<Tags><TagSet>")
			for _, kv := range blob.SortTags(bl.Tags) {
				b.WriteString("<Tag><Key>" + azerr.EscapeXML(kv[0]) + "</Key><Value>" + azerr.EscapeXML(kv[1]) + "</Value></Tag>")
			}
			b.WriteString("</TagSet></Tags>")
		}
		b.WriteString("</Blob>")
	}
	b.WriteString("</Blobs><NextMarker>" + azerr.EscapeXML(next) + "</NextMarker></EnumerationResults>")
	return writeXML(rq, http.StatusOK, b.String())
}

// nameXML renders the Name element of a listed blob or prefix. A name
// holding characters XML cannot carry (U+FFFE, U+FFFF) is sent
// percent-encoded with Encoded="true", as Azure does, so that it reads back
// unchanged; every byte outside the unreserved set is encoded, which both
// query and URI-component decoders undo.
func nameXML(name string) string {
	if !strings.ContainsRune(name, 0xFFFE) && !strings.ContainsRune(name, 0xFFFF) {
		return "<Name>" + azerr.EscapeXML(name) + "</Name>"
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.WriteString(`<Name Encoded="true">`)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	b.WriteString("</Name>")
	return b.String()
}

// archiveStatus is x-ms-archive-status of a blob being rehydrated.
func archiveStatus(b *blob.Blob) string {
	return "rehydrate-pending-to-" + strings.ToLower(b.RehydrateTo)
}

func tierOf(b *blob.Blob) string {
	if b.AccessTier == "" {
		return "Hot"
	}
	return b.AccessTier
}

// findBlobs is Find Blobs by Tags (account-wide or in one container).
func (h *handler) findBlobs(rq *req) error {
	container := rq.container
	max, err := maxResults(rq)
	if err != nil {
		return err
	}
	where := rq.q.Get("where")
	if where == "" {
		return azerr.New(azerr.MissingRequiredQueryParameter).WithDetail("QueryParameterName", "where")
	}
	marker := rq.q.Get("marker")
	if marker != "" {
		raw, err := decodeB64Marker(marker)
		if err != nil {
			return azerr.InvalidQuery("marker", marker, "")
		}
		marker = raw
	}
	found, next, err := h.svc.FindBlobs(rq.ctx(), rq.info.Account, container, where, marker, max)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(`<EnumerationResults ServiceEndpoint="` + azerr.EscapeXML(h.d.BaseURL(rq.info.Account)+"/") + `">`)
	b.WriteString("<Where>" + azerr.EscapeXML(where) + "</Where><Blobs>")
	for _, f := range found {
		b.WriteString("<Blob><Name>" + azerr.EscapeXML(f.Name) + "</Name><ContainerName>" + azerr.EscapeXML(f.Container) + "</ContainerName><Tags><TagSet>")
		for _, kv := range f.Tags {
			b.WriteString("<Tag><Key>" + azerr.EscapeXML(kv[0]) + "</Key><Value>" + azerr.EscapeXML(kv[1]) + "</Value></Tag>")
		}
		b.WriteString("</TagSet></Tags></Blob>")
	}
	nm := ""
	if next != "" {
		nm = encodeB64Marker(next)
	}
	b.WriteString("</Blobs><NextMarker>" + nm + "</NextMarker></EnumerationResults>")
	return writeXML(rq, http.StatusOK, b.String())
}
