package filehttp

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/acl"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/cors"
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/lease"
	"github.com/lazuli-storage/lazuli/internal/svcprops"
)

// maxXMLBody bounds the XML bodies of Set ACL and Set Service Properties.
const maxXMLBody = 256 << 10

func readBody(rq *req, limit int64) ([]byte, error) {
	if rq.r.ContentLength > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(rq.r.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	return b, nil
}

// ---- service ----

func (h *handler) storedProps(rq *req) (svcprops.Properties, error) {
	p, err := h.svc.GetServiceProps(rq.ctx(), rq.info.Account)
	if err != nil {
		return svcprops.Properties{}, err
	}
	if p.XML == nil {
		d := svcprops.Defaults()
		d.Extra = []svcprops.Extra{
			{XMLName: xmlName("ShareDeleteRetentionPolicy"), Inner: "<Enabled>false</Enabled>"},
			{XMLName: xmlName("ProtocolSettings"), Inner: "<SMB><Multichannel><Enabled>false</Enabled></Multichannel></SMB>"},
		}
		return d, nil
	}
	return svcprops.ParseStored(p.XML)
}

// getServiceProps is Get File Service Properties.
func (h *handler) getServiceProps(rq *req) error {
	p, err := h.storedProps(rq)
	if err != nil {
		return err
	}
	return writeXML(rq, http.StatusOK, svcprops.Render(p))
}

// setServiceProps is Set File Service Properties: metrics, CORS, share
// delete retention and protocol settings are stored and returned.
func (h *handler) setServiceProps(rq *req) error {
	body, err := readBody(rq, maxXMLBody)
	if err != nil {
		return err
	}
	in, err := svcprops.Parse(body)
	if err != nil {
		return err
	}
	for _, e := range in.Extra {
		switch e.XMLName.Local {
		case "ShareDeleteRetentionPolicy", "ProtocolSettings":
		default:
			return azerr.New(azerr.InvalidXmlDocument)
		}
	}
	p, err := h.storedProps(rq)
	if err != nil {
		return err
	}
	p.Merge(in)
	if err := h.svc.SetServiceProps(rq.ctx(), rq.info.Account, file.ServiceProps{XML: []byte(svcprops.Render(p))}); err != nil {
		return err
	}
	rq.w.WriteHeader(http.StatusAccepted)
	return nil
}

// preflight answers a CORS preflight request (never authorized).
func (h *handler) preflight(rq *req) error {
	rq.info.Operation = "PreflightRequest"
	return cors.Answer(rq.w, rq.r, func() ([]cors.Rule, error) {
		p, err := h.storedProps(rq)
		return p.Cors, err
	})
}

// applyCors adds the CORS headers of an actual cross-origin request.
func (h *handler) applyCors(rq *req) {
	p, err := h.storedProps(rq)
	if err != nil {
		return
	}
	cors.Actual(p.Cors, rq.r.Method, rq.r.Header, rq.w.Header())
}

// listShares is List Shares.
func (h *handler) listShares(rq *req) error {
	max, err := rq.maxResults()
	if err != nil {
		return err
	}
	include := map[string]bool{}
	for _, s := range strings.Split(rq.q.Get("include"), ",") {
		if s = strings.TrimSpace(strings.ToLower(s)); s != "" {
			include[s] = true
		}
	}
	lreq := file.ListSharesRequest{Account: rq.info.Account, Prefix: rq.q.Get("prefix"), Marker: rq.q.Get("marker"),
		Max: int(max), Snapshots: include["snapshots"]}
	var shares []file.ListedShare
	var next string
	if include["deleted"] {
		shares, next, err = h.svc.ListSharesWithDeleted(rq.ctx(), lreq)
	} else {
		var live []*file.Share
		live, next, err = h.svc.ListShares(rq.ctx(), lreq)
		for _, sh := range live {
			shares = append(shares, file.ListedShare{Share: sh})
		}
	}
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(`<EnumerationResults ServiceEndpoint="` + azerr.EscapeXML(h.d.BaseURL(rq.info.Account)+"/") + `">`)
	optElem(&b, "Prefix", rq.q.Get("prefix"))
	optElem(&b, "Marker", rq.q.Get("marker"))
	if v := rq.q.Get("maxresults"); v != "" {
		b.WriteString("<MaxResults>" + strconv.FormatInt(max, 10) + "</MaxResults>")
	}
	b.WriteString("<Shares>")
	for _, ls := range shares {
		sh := ls.Share
		b.WriteString("<Share><Name>" + esc(sh.Name) + "</Name>")
		if sh.Snapshot != "" {
			b.WriteString("<Snapshot>" + sh.Snapshot + "</Snapshot>")
		}
		if d := ls.Deleted; d != nil {
			b.WriteString("<Deleted>true</Deleted><Version>" + esc(d.Version) + "</Version>")
		}
		b.WriteString("<Properties>")
		b.WriteString("<Last-Modified>" + httpx.FormatHTTPTime(sh.Modified) + "</Last-Modified>")
		b.WriteString("<Etag>" + esc(file.ETagString(sh.ETag)) + "</Etag>")
		b.WriteString("<Quota>" + strconv.Itoa(sh.Quota) + "</Quota>")
		b.WriteString("<AccessTier>" + esc(sh.AccessTier) + "</AccessTier>")
		b.WriteString("<AccessTierChangeTime>" + httpx.FormatHTTPTime(sh.TierChanged) + "</AccessTierChangeTime>")
		if d := ls.Deleted; d != nil {
			b.WriteString("<DeletedTime>" + httpx.FormatHTTPTime(d.Deleted) + "</DeletedTime>")
			b.WriteString("<RemainingRetentionDays>" + strconv.Itoa(d.RemainingDays(sh.AsOf)) + "</RemainingRetentionDays>")
		} else if sh.Snapshot == "" {
			lv := shareLease(sh)
			b.WriteString("<LeaseStatus>" + lv.status + "</LeaseStatus><LeaseState>" + lv.state + "</LeaseState>")
			if lv.duration != "" {
				b.WriteString("<LeaseDuration>" + lv.duration + "</LeaseDuration>")
			}
		}
		if sh.Protocols != "" {
			b.WriteString("<EnabledProtocols>" + esc(sh.Protocols) + "</EnabledProtocols>")
		}
		b.WriteString("</Properties>")
		if include["metadata"] {
			b.WriteString("<Metadata>")
			for _, kv := range sh.Meta {
				b.WriteString("<" + kv[0] + ">" + esc(kv[1]) + "</" + kv[0] + ">")
			}
			b.WriteString("</Metadata>")
		}
		b.WriteString("</Share>")
	}
	b.WriteString("</Shares><NextMarker>" + esc(next) + "</NextMarker></EnumerationResults>")
	return writeXML(rq, http.StatusOK, b.String())
}

func optElem(b *strings.Builder, name, v string) {
	if v != "" {
		b.WriteString("<" + name + ">" + esc(v) + "</" + name + ">")
		return
	}
	b.WriteString("<" + name + " />")
}

func shareLease(sh *file.Share) leaseView {
	return leaseView{state: sh.Lease.StateName(sh.AsOf), status: sh.Lease.Status(sh.AsOf), duration: sh.Lease.DurationName(sh.AsOf)}
}

// ---- shares ----

func parseQuota(v string) (*int, error) {
	if v == "" {
		return nil, nil
	}
	n, err := parseInt("x-ms-share-quota", v, 1, file.MaxShareQuotaGiB)
	if err != nil {
		return nil, err
	}
	q := int(n)
	return &q, nil
}

var accessTiers = map[string]string{"transactionoptimized": "TransactionOptimized", "hot": "Hot", "cool": "Cool", "premium": "Premium"}

func parseTier(v string) (*string, error) {
	if v == "" {
		return nil, nil
	}
	t, ok := accessTiers[strings.ToLower(v)]
	if !ok {
		return nil, azerr.InvalidHeader("x-ms-access-tier", v)
	}
	return &t, nil
}

// restoreShare is Restore Share (undelete a soft-deleted share).
func (h *handler) restoreShare(rq *req) error {
	hd := rq.r.Header
	name, version := hd.Get("X-Ms-Deleted-Share-Name"), hd.Get("X-Ms-Deleted-Share-Version")
	if name == "" {
		return azerr.MissingHeader("x-ms-deleted-share-name")
	}
	if version == "" {
		return azerr.MissingHeader("x-ms-deleted-share-version")
	}
	if name != rq.share {
		return azerr.InvalidHeader("x-ms-deleted-share-name", name)
	}
	sh, err := h.svc.RestoreShare(rq.ctx(), rq.info.Account, name, version)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), sh.ETag, sh.Modified)
	rq.w.WriteHeader(http.StatusCreated)
	return nil
}

// createShare is Create Share.
func (h *handler) createShare(rq *req) error {
	if rq.snapshot != "" {
		return azerr.New(azerr.ShareSnapshotOperationNotSupported)
	}
	meta, err := rq.metadata()
	if err != nil {
		return err
	}
	hd := rq.r.Header
	quota, err := parseQuota(hd.Get("X-Ms-Share-Quota"))
	if err != nil {
		return err
	}
	tier, err := parseTier(hd.Get("X-Ms-Access-Tier"))
	if err != nil {
		return err
	}
	req := file.CreateShareRequest{Ref: rq.shareRef(), Meta: meta, Protocols: hd.Get("X-Ms-Enabled-Protocols"), RootSquash: hd.Get("X-Ms-Root-Squash")}
	if quota != nil {
		req.Quota = *quota
	}
	if tier != nil {
		req.AccessTier = *tier
	}
	sh, err := h.svc.CreateShare(rq.ctx(), req)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), sh.ETag, sh.Modified)
	rq.w.WriteHeader(http.StatusCreated)
	return nil
}

// getShare is Get Share Properties (and Get Share Metadata).
func (h *handler) getShare(rq *req) error {
	sh, err := h.svc.GetShare(rq.ctx(), rq.shareRef(), rq.r.Header.Get("X-Ms-Lease-Id"))
	if err != nil {
		return err
	}
	hd := rq.w.Header()
	setETag(hd, sh.ETag, sh.Modified)
	writeMeta(hd, sh.Meta)
	set(hd, "X-Ms-Share-Quota", strconv.Itoa(sh.Quota))
	set(hd, "X-Ms-Access-Tier", sh.AccessTier)
	set(hd, "X-Ms-Access-Tier-Change-Time", httpx.FormatHTTPTime(sh.TierChanged))
	if sh.Protocols != "" {
		set(hd, "X-Ms-Enabled-Protocols", sh.Protocols)
	}
	if sh.RootSquash != "" {
		set(hd, "X-Ms-Root-Squash", sh.RootSquash)
	}
	if rq.snapshot == "" {
		leaseHeaders(hd, shareLease(sh))
	}
	rq.w.WriteHeader(http.StatusOK)
	return nil
}

// setShareProps is Set Share Properties (quota, access tier, root squash).
func (h *handler) setShareProps(rq *req) error {
	hd := rq.r.Header
	quota, err := parseQuota(hd.Get("X-Ms-Share-Quota"))
	if err != nil {
		return err
	}
	tier, err := parseTier(hd.Get("X-Ms-Access-Tier"))
	if err != nil {
		return err
	}
	u := file.ShareUpdate{LeaseID: hd.Get("X-Ms-Lease-Id"), Quota: quota, AccessTier: tier}
	if v := hd.Get("X-Ms-Root-Squash"); v != "" {
		u.RootSquash = &v
	}
	return h.setShare(rq, u)
}

func (h *handler) setShare(rq *req, u file.ShareUpdate) error {
	sh, err := h.svc.SetShare(rq.ctx(), rq.shareRef(), u)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), sh.ETag, sh.Modified)
	rq.w.WriteHeader(http.StatusOK)
	return nil
}

// setShareMetadata is Set Share Metadata.
func (h *handler) setShareMetadata(rq *req) error {
	meta, err := rq.metadata()
	if err != nil {
		return err
	}
	return h.setShare(rq, file.ShareUpdate{LeaseID: rq.r.Header.Get("X-Ms-Lease-Id"), Meta: &meta})
}

// deleteShare is Delete Share (of a share or one snapshot).
func (h *handler) deleteShare(rq *req) error {
	var ds file.DeleteSnapshots
	switch v := rq.r.Header.Get("X-Ms-Delete-Snapshots"); v {
	case "":
	case "include":
		ds = file.IncludeSnapshots
	case "include-leased":
		ds = file.IncludeLeased
	default:
		return azerr.InvalidHeader("x-ms-delete-snapshots", v)
	}
	if err := h.svc.DeleteShare(rq.ctx(), rq.shareRef(), rq.r.Header.Get("X-Ms-Lease-Id"), ds); err != nil {
		return err
	}
	rq.w.WriteHeader(http.StatusAccepted)
	return nil
}

// snapshotShare is Snapshot Share.
func (h *handler) snapshotShare(rq *req) error {
	meta, err := rq.metadata()
	if err != nil {
		return err
	}
	if len(meta) == 0 {
		meta = nil
	}
	sh, err := h.svc.SnapshotShare(rq.ctx(), rq.shareRef(), meta)
	if err != nil {
		return err
	}
	hd := rq.w.Header()
	setETag(hd, sh.ETag, sh.Modified)
	set(hd, "X-Ms-Snapshot", sh.Snapshot)
	rq.w.WriteHeader(http.StatusCreated)
	return nil
}

// getShareACL is Get Share ACL.
func (h *handler) getShareACL(rq *req) error {
	sh, err := h.svc.GetShare(rq.ctx(), rq.shareRef(), rq.r.Header.Get("X-Ms-Lease-Id"))
	if err != nil {
		return err
	}
	doc := make([]acl.Identifier, 0, len(sh.ACL))
	for _, si := range sh.ACL {
		id := acl.Identifier{ID: si.ID}
		if si.HasPolicy {
			p := &acl.Policy{}
			if si.Start != "" {
				p.Start = &si.Start
			}
			if si.Expiry != "" {
				p.Expiry = &si.Expiry
			}
			if si.Permission != "" {
				p.Permission = &si.Permission
			}
			id.Policy = p
		}
		doc = append(doc, id)
	}
	setETag(rq.w.Header(), sh.ETag, sh.Modified)
	return writeXML(rq, http.StatusOK, acl.Render(doc))
}

// setShareACL is Set Share ACL (stored access policies, permissions rcwdl).
func (h *handler) setShareACL(rq *req) error {
	body, err := readBody(rq, maxXMLBody)
	if err != nil {
		return err
	}
	ids, err := acl.Parse(body)
	if err != nil {
		return err
	}
	out := make([]file.SignedIdentifier, 0, len(ids))
	for _, id := range ids {
		si := file.SignedIdentifier{ID: id.ID}
		if p := id.Policy; p != nil {
			si.HasPolicy = true
			if p.Start != nil && strings.TrimSpace(*p.Start) != "" {
				t, _ := acl.ParseTime(*p.Start)
				si.Start = acl.FormatTime(t)
			}
			if p.Expiry != nil && strings.TrimSpace(*p.Expiry) != "" {
				t, _ := acl.ParseTime(*p.Expiry)
				si.Expiry = acl.FormatTime(t)
			}
			if p.Permission != nil {
				for _, c := range *p.Permission {
					if !strings.ContainsRune("rcwdl", c) {
						return azerr.New(azerr.InvalidXmlNodeValue).WithDetail("XmlNodeName", "Permission").WithDetail("XmlNodeValue", *p.Permission)
					}
				}
				si.Permission = *p.Permission
			}
		}
		out = append(out, si)
	}
	return h.setShare(rq, file.ShareUpdate{LeaseID: rq.r.Header.Get("X-Ms-Lease-Id"), ACL: &out})
}

// shareStats is Get Share Stats.
func (h *handler) shareStats(rq *req) error {
	sh, err := h.svc.GetShare(rq.ctx(), rq.shareRef(), "")
	if err != nil {
		return err
	}
	n, err := h.svc.ShareUsage(rq.ctx(), rq.shareRef())
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), sh.ETag, sh.Modified)
	return writeXML(rq, http.StatusOK, "<ShareStats><ShareUsageBytes>"+strconv.FormatInt(n, 10)+"</ShareUsageBytes></ShareStats>")
}

// leaseAction parses the lease headers of Lease Share and Lease File: a
// file's lease is infinite, is never renewed and breaks at once.
func leaseAction(rq *req, share bool) (lease.Action, error) {
	rules := httpx.LeaseRules{InfiniteOnly: true}
	if share {
		rules = httpx.LeaseRules{Renew: true, DurationRequired: true, BreakPeriod: true}
	}
	a, err := httpx.LeaseAction(rq.r.Header, rules)
	if err == nil && a.Kind == lease.Acquire {
		a.NewID = guid.NewString()
	}
	return a, err
}

// leaseResponse writes the answer to a lease action.
func leaseResponse(rq *req, kind lease.ActionKind, res lease.Result, etag uint64, lmt time.Time) {
	hd := rq.w.Header()
	setETag(hd, etag, lmt)
	status := http.StatusOK
	switch kind {
	case lease.Acquire:
		status = http.StatusCreated
		set(hd, "X-Ms-Lease-Id", res.LeaseID)
	case lease.Renew, lease.Change:
		set(hd, "X-Ms-Lease-Id", res.LeaseID)
	case lease.Break:
		status = http.StatusAccepted
		set(hd, "X-Ms-Lease-Time", strconv.Itoa(res.LeaseTime))
	}
	rq.w.WriteHeader(status)
}

// leaseShare is Lease Share.
func (h *handler) leaseShare(rq *req) error {
	a, err := leaseAction(rq, true)
	if err != nil {
		return err
	}
	sh, res, err := h.svc.LeaseShare(rq.ctx(), rq.shareRef(), a)
	if err != nil {
		return err
	}
	leaseResponse(rq, a.Kind, res, sh.ETag, sh.Modified)
	return nil
}

// createPermission is Create Permission: {"permission": "<SDDL>"}, or
// with "format": "binary" a base64 self-relative security descriptor.
func (h *handler) createPermission(rq *req) error {
	body, err := readBody(rq, file.MaxPermissionBody+1024)
	if err != nil {
		return err
	}
	var in struct {
		Permission *string `json:"permission"`
		Format     string  `json:"format"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.Permission == nil {
		return azerr.New(azerr.InvalidInput)
	}
	perm := *in.Permission
	switch {
	case in.Format == "" || strings.EqualFold(in.Format, "sddl"):
	case strings.EqualFold(in.Format, "binary"):
		if perm, err = sddlFromBinary(perm); err != nil {
			return err
		}
	default:
		return azerr.New(azerr.InvalidInput)
	}
	key, err := h.svc.CreatePermission(rq.ctx(), rq.shareRef(), perm)
	if err != nil {
		return err
	}
	set(rq.w.Header(), "X-Ms-File-Permission-Key", key)
	rq.w.WriteHeader(http.StatusCreated)
	return nil
}

// getPermission is Get Permission.
func (h *handler) getPermission(rq *req) error {
	key := rq.r.Header.Get("X-Ms-File-Permission-Key")
	if key == "" {
		return azerr.MissingHeader("x-ms-file-permission-key")
	}
	binary, err := rq.binaryPermission()
	if err != nil {
		return err
	}
	perm, err := h.svc.GetPermission(rq.ctx(), rq.shareRef(), key)
	if err != nil {
		return err
	}
	// The permission comes back in the format asked for.
	res := map[string]string{"permission": perm}
	if binary {
		if res["permission"], err = binaryFromSDDL(perm); err != nil {
			return err
		}
		res["format"] = "Binary"
	} else if rq.r.Header.Get("X-Ms-File-Permission-Format") != "" {
		res["format"] = "Sddl"
	}
	out, _ := json.Marshal(res)
	hd := rq.w.Header()
	set(hd, "Content-Type", "application/json")
	set(hd, "Content-Length", strconv.Itoa(len(out)))
	rq.w.WriteHeader(http.StatusOK)
	if rq.r.Method != http.MethodHead {
		rq.w.Write(out)
	}
	return nil
}

// getUserDelegationKey is Get User Delegation Key on the File endpoint: a
// key for the File service (signed service "f"), issued as on Blob.
func (h *handler) getUserDelegationKey(rq *req) error {
	out, err := h.d.Auth.IssueUserDelegationKey(rq.info.Identity, rq.info.Account, rq.info.Version, "f",
		func() ([]byte, error) { return readBody(rq, 64<<10) })
	if err != nil {
		return err
	}
	return writeXML(rq, http.StatusOK, out)
}
