package azimport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/queue"
	"github.com/lazuli-storage/lazuli/internal/table"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
)

// Clock is the time the services see while they import: each write
// happens at the time the reference emulator recorded for it, so that
// Last-Modified, snapshot ids, message insertion and expiry times and
// entity Timestamps come over unchanged. Build the services with its Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now is the time set last, or the real time before any.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t.IsZero() {
		return time.Now()
	}
	return c.t
}

// set makes t (when valid) the services' time.
func (c *Clock) set(t time.Time) {
	if t.IsZero() {
		return
	}
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Services are the domain services the import writes through, built over
// the target's engine with Clock.Now as their clock.
type Services struct {
	Blob  *blob.Service
	Queue *queue.Service
	Table *table.Service
	Clock *Clock
	// DecodeEntity decodes an entity in the Table service's JSON form (the
	// Table protocol layer's decoder).
	DecodeEntity func([]byte) (pk, rk string, props []table.Property, err error)
}

// Report counts what was imported and lists what was left behind.
type Report struct {
	Containers, Blobs, Snapshots, Queues, Messages, Tables, Entities int
	Bytes                                                            int64
	// Received counts the messages imported that a client had received:
	// their dequeue counts and pop receipts start afresh.
	Received int
	// Skipped says, one line each, what was not imported and why.
	Skipped []string
}

func (r *Report) skip(format string, args ...any) {
	r.Skipped = append(r.Skipped, fmt.Sprintf(format, args...))
}

// parseTime reads the reference emulator's ISO 8601 times; "" or a bad
// time is zero (the import then keeps the time it has).
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func sortedKV(m map[string]string) []blob.KV {
	out := make([]blob.KV, 0, len(m))
	for k, v := range m {
		out = append(out, blob.KV{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// Import writes everything d holds through s. It stops at the first
// error (a container, queue or table that already exists in the target
// included), naming the object.
func Import(ctx context.Context, d *Dir, s Services) (Report, error) {
	var r Report
	if err := importBlobs(ctx, d, s, &r); err != nil {
		return r, err
	}
	if err := importQueues(ctx, d, s, &r); err != nil {
		return r, err
	}
	if err := importTables(ctx, d, s, &r); err != nil {
		return r, err
	}
	return r, nil
}

func importBlobs(ctx context.Context, d *Dir, s Services, r *Report) error {
	for _, c := range d.Containers {
		s.Clock.set(parseTime(c.Properties.LastModified))
		if _, err := s.Blob.CreateContainer(ctx, c.Account, c.Name, sortedKV(c.Metadata), c.Properties.PublicAccess); err != nil {
			return fmt.Errorf("container %s/%s: %w", c.Account, c.Name, err)
		}
		if len(c.ACL) > 0 {
			ids := make([]blob.SignedIdentifier, 0, len(c.ACL))
			for _, a := range c.ACL {
				id := blob.SignedIdentifier{ID: a.ID}
				if a.Policy != nil {
					id.Start, id.Expiry, id.Permission, id.HasPolicy = a.Policy.Start, a.Policy.Expiry, a.Policy.Permission, true
				}
				ids = append(ids, id)
			}
			if _, err := s.Blob.SetContainerACL(ctx, c.Account, c.Name, c.Properties.PublicAccess, ids, blob.Cond{}); err != nil {
				return fmt.Errorf("container %s/%s: access policy: %w", c.Account, c.Name, err)
			}
		}
		r.Containers++
	}
	for i, b := range d.Blobs {
		// A snapshot is recreated by writing its content as the blob and
		// snapshotting it at the snapshot's time; the blob itself comes
		// last. Snapshots of a blob that no longer exists cannot be made.
		if b.Snapshot != "" {
			last := i+1 == len(d.Blobs)
			if last || d.Blobs[i+1].Account != b.Account || d.Blobs[i+1].Container != b.Container || d.Blobs[i+1].Name != b.Name {
				r.skip("blob %s/%s/%s: snapshot %s of a deleted blob", b.Account, b.Container, b.Name, b.Snapshot)
				continue
			}
		}
		if err := writeBlob(ctx, d, s, b, r); err != nil {
			what := b.Name
			if b.Snapshot != "" {
				what += " (snapshot " + b.Snapshot + ")"
			}
			return fmt.Errorf("blob %s/%s/%s: %w", b.Account, b.Container, what, err)
		}
	}
	return nil
}

// ingest streams the bytes of extent ranges to the chunk store, as an
// upload's body goes: memory stays flat whatever the blob's size.
func ingest(ctx context.Context, d *Dir, s Services, parts []Extent) (blob.Ingested, error) {
	readers := make([]io.Reader, 0, len(parts))
	var size int64
	for _, p := range parts {
		r, err := d.open(p, false)
		if err != nil {
			return blob.Ingested{}, err
		}
		defer r.Close()
		readers = append(readers, r)
		size += p.Count
	}
	return s.Blob.IngestSize(ctx, io.MultiReader(readers...), size, true, nil, blob.SumMD5|blob.SumCRC64)
}

func writeBlob(ctx context.Context, d *Dir, s Services, b Blob, r *Report) error {
	ref := blob.Ref{Account: b.Account, Container: b.Container, Name: b.Name}
	p := b.Properties
	props := blob.Props{ContentType: p.ContentType, ContentEncoding: p.ContentEncoding, ContentLanguage: p.ContentLanguage,
		ContentDisposition: p.ContentDisposition, CacheControl: p.CacheControl}
	if p.ContentMD5 != nil {
		props.ContentMD5 = p.ContentMD5.Data
	}
	meta := sortedKV(b.Metadata)
	var tags []blob.KV
	if b.Tags != nil {
		for _, t := range b.Tags.Set {
			tags = append(tags, blob.KV{t.Key, t.Value})
		}
	}
	tier := ""
	if !p.AccessTierInferred {
		tier = p.AccessTier
	}
	s.Clock.set(parseTime(p.LastModified))
	switch p.BlobType {
	case "BlockBlob":
		if b.Persistency != nil || len(b.CommittedBlocks) == 0 {
			var parts []Extent
			if b.Persistency != nil {
				parts = append(parts, *b.Persistency)
			}
			data, err := ingest(ctx, d, s, parts)
			if err != nil {
				return err
			}
			if _, err := s.Blob.PutBlob(ctx, blob.PutBlobRequest{Ref: ref, Type: "BlockBlob", Data: data, Props: props,
				Meta: meta, Tags: tags, Tier: tier}); err != nil {
				return err
			}
			r.Bytes += data.Size
			break
		}
		// Built from blocks: stage each with its id, then commit them, so
		// that Get Block List shows the same list.
		list := make([]blob.BlockListItem, 0, len(b.CommittedBlocks))
		for _, blk := range b.CommittedBlocks {
			data, err := ingest(ctx, d, s, []Extent{blk.Persistency})
			if err != nil {
				return err
			}
			if err := s.Blob.PutBlock(ctx, ref, blk.Name, data, blob.Cond{}); err != nil {
				return fmt.Errorf("block %s: %w", blk.Name, err)
			}
			list = append(list, blob.BlockListItem{ID: blk.Name, Kind: "Uncommitted"})
			r.Bytes += data.Size
		}
		if _, err := s.Blob.PutBlockList(ctx, blob.PutBlockListRequest{Ref: ref, Blocks: list, Props: props, Meta: meta,
			Tags: tags, Tier: tier}); err != nil {
			return err
		}
	case "AppendBlob":
		if _, err := s.Blob.PutBlob(ctx, blob.PutBlobRequest{Ref: ref, Type: "AppendBlob", Props: props, Meta: meta, Tags: tags}); err != nil {
			return err
		}
		for _, blk := range b.CommittedBlocks {
			data, err := ingest(ctx, d, s, []Extent{blk.Persistency})
			if err != nil {
				return err
			}
			if _, _, err := s.Blob.AppendBlock(ctx, ref, blob.AppendRequest{Data: data}); err != nil {
				return err
			}
			r.Bytes += data.Size
		}
		if p.Sealed {
			if _, err := s.Blob.SealBlob(ctx, ref, nil, blob.Cond{}); err != nil {
				return err
			}
		}
	case "PageBlob":
		if _, err := s.Blob.PutBlob(ctx, blob.PutBlobRequest{Ref: ref, Type: "PageBlob", Props: props, Meta: meta, Tags: tags,
			PageSize: p.ContentLength, Seq: p.SequenceNumber, Tier: tier}); err != nil {
			return err
		}
		for _, pr := range b.PageRanges {
			data, err := ingest(ctx, d, s, []Extent{pr.Persistency})
			if err != nil {
				return err
			}
			if _, err := s.Blob.PutPage(ctx, ref, blob.PutPageRequest{Start: pr.Start, End: pr.End, Data: data}); err != nil {
				return fmt.Errorf("pages %d-%d: %w", pr.Start, pr.End, err)
			}
			r.Bytes += data.Size
		}
	default:
		r.skip("blob %s/%s/%s: unknown blob type %q", b.Account, b.Container, b.Name, p.BlobType)
		return nil
	}
	if b.Snapshot != "" {
		// The snapshot gets the reference emulator's snapshot time as its id.
		s.Clock.set(parseTime(b.Snapshot))
		if _, err := s.Blob.SnapshotBlob(ctx, ref, nil, blob.Cond{}); err != nil {
			return err
		}
		r.Snapshots++
		return nil
	}
	r.Blobs++
	return nil
}

func importQueues(ctx context.Context, d *Dir, s Services, r *Report) error {
	for _, q := range d.Queues {
		md := make([]queue.MetadataItem, 0, len(q.Metadata))
		for _, kv := range sortedKV(q.Metadata) {
			md = append(md, queue.MetadataItem{Name: kv[0], Value: kv[1]})
		}
		if created, err := s.Queue.CreateQueue(ctx, q.Account, q.Name, md); err != nil || !created {
			if err == nil {
				err = fmt.Errorf("it already exists")
			}
			return fmt.Errorf("queue %s/%s: %w", q.Account, q.Name, err)
		}
		if len(q.ACL) > 0 {
			acl := make([]queue.SignedIdentifier, 0, len(q.ACL))
			for _, p := range q.ACL {
				id := queue.SignedIdentifier{ID: p.ID}
				if p.Policy != nil {
					id.Start, id.Expiry, id.Permission = parseTime(p.Policy.Start), parseTime(p.Policy.Expiry), p.Policy.Permission
				}
				acl = append(acl, id)
			}
			if err := s.Queue.SetQueueACL(ctx, q.Account, q.Name, acl); err != nil {
				return fmt.Errorf("queue %s/%s: access policy: %w", q.Account, q.Name, err)
			}
		}
		r.Queues++
	}
	now := time.Now()
	for _, m := range d.Messages {
		inserted, expires := parseTime(m.InsertionTime), parseTime(m.ExpirationTime)
		if inserted.IsZero() {
			inserted = now
		}
		if !expires.IsZero() && !expires.After(now) {
			r.skip("message %s of queue %s/%s: expired at %s", m.ID, m.Account, m.Queue, m.ExpirationTime)
			continue
		}
		text, err := d.readExtent(m.Persistency, true)
		if err != nil {
			return fmt.Errorf("message %s of queue %s/%s: %w", m.ID, m.Account, m.Queue, err)
		}
		// Put at its insertion time, with the time to live and the
		// visibility it had then: expiry and next visibility come out as
		// they were. A message a client had received becomes visible at the
		// same time; its pop receipt and dequeue count do not carry over.
		nm := queue.NewMessage{Text: string(text), TTL: -1}
		if !expires.IsZero() {
			nm.TTL = max(expires.Sub(inserted), time.Second)
		}
		if visible := time.UnixMilli(m.TimeNextVisible); m.TimeNextVisible > 0 && visible.After(inserted) {
			nm.VisibilityTimeout = min(visible.Sub(inserted), 7*24*time.Hour)
			if nm.TTL > 0 && nm.VisibilityTimeout >= nm.TTL {
				nm.VisibilityTimeout = nm.TTL - time.Second
			}
		}
		s.Clock.set(inserted)
		if _, err := s.Queue.PutMessage(ctx, m.Account, m.Queue, nm); err != nil {
			return fmt.Errorf("message %s of queue %s/%s: %w", m.ID, m.Account, m.Queue, err)
		}
		if m.DequeueCount > 0 {
			r.Received++
		}
		r.Messages++
	}
	return nil
}

func importTables(ctx context.Context, d *Dir, s Services, r *Report) error {
	for _, t := range d.Tables {
		if _, err := s.Table.CreateTable(ctx, t.Account, t.Name); err != nil {
			return fmt.Errorf("table %s/%s: %w", t.Account, t.Name, err)
		}
		if len(t.ACL) > 0 {
			acl := make([]table.SignedIdentifier, 0, len(t.ACL))
			for _, p := range t.ACL {
				id := table.SignedIdentifier{ID: p.ID}
				if p.Policy != nil {
					id.Start, id.Expiry, id.Permission = parseTime(p.Policy.Start), parseTime(p.Policy.Expiry), p.Policy.Permission
					id.HasStart, id.HasExpiry, id.HasPermission = p.Policy.Start != "", p.Policy.Expiry != "", p.Policy.Permission != ""
				}
				acl = append(acl, id)
			}
			if err := s.Table.SetACL(ctx, t.Account, t.Name, acl); err != nil {
				return fmt.Errorf("table %s/%s: access policy: %w", t.Account, t.Name, err)
			}
		}
		r.Tables++
		for _, e := range t.Entities {
			body, err := entityJSON(e.Properties)
			if err != nil {
				return fmt.Errorf("table %s/%s, entity (%q, %q): %w", t.Account, t.Name, e.PartitionKey, e.RowKey, err)
			}
			pk, rk, props, err := s.DecodeEntity(body)
			if err != nil {
				return fmt.Errorf("table %s/%s, entity (%q, %q): %w", t.Account, t.Name, e.PartitionKey, e.RowKey, err)
			}
			// Written at its Timestamp, which the entity keeps.
			s.Clock.set(parseTime(e.LastModified))
			if _, err := s.Table.Apply(ctx, t.Account, t.Name, table.Op{Kind: table.OpInsert, PartitionKey: pk, RowKey: rk, Props: props}); err != nil {
				return fmt.Errorf("table %s/%s, entity (%q, %q): %w", t.Account, t.Name, pk, rk, err)
			}
			r.Entities++
		}
	}
	return nil
}

// entityJSON turns a stored entity into the Table service's JSON form,
// members in their stored order (an entity keeps the order its
// properties were sent in). The reference emulator stores an Edm.Guid as
// the base64 of its text; those are turned back into the GUID.
func entityJSON(props json.RawMessage) ([]byte, error) {
	type member struct {
		name  string
		value json.RawMessage
	}
	var members []member
	dec := json.NewDecoder(bytes.NewReader(props))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("properties are not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var m member
		m.name, _ = tok.(string)
		if err := dec.Decode(&m.value); err != nil {
			return nil, err
		}
		members = append(members, m)
	}
	guids := map[string]bool{}
	for _, m := range members {
		if base, ok := strings.CutSuffix(m.name, "@odata.type"); ok && string(m.value) == `"Edm.Guid"` {
			guids[base] = true
		}
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i, m := range members {
		if guids[m.name] {
			var s string
			if json.Unmarshal(m.value, &s) == nil && !odata.ValidGuid(s) {
				if raw, err := base64.StdEncoding.DecodeString(s); err == nil && odata.ValidGuid(string(raw)) {
					m.value, _ = json.Marshal(string(raw))
				}
			}
		}
		if i > 0 {
			out.WriteByte(',')
		}
		name, _ := json.Marshal(m.name)
		out.Write(name)
		out.WriteByte(':')
		out.Write(m.value)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}
