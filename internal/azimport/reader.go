// Package azimport reads a data directory the reference emulator
// (Azurite) wrote and writes its containers, blobs, queues, messages,
// tables and entities into lazuli through the domain services.
//
// The reference emulator keeps its metadata in LokiJS databases, one JSON
// file per service (__azurite_db_blob__.json, __azurite_db_queue__.json,
// __azurite_db_table__.json), each a list of named collections of
// documents, and the bytes of blobs and messages in extent files
// (__blobstorage__/<id>, __queuestorage__/<id>) that documents point into
// with {id, offset, count}. The reader understands the documents' fields
// it needs and ignores the rest.
package azimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The reference emulator's files in its data directory.
const (
	BlobDB        = "__azurite_db_blob__.json"
	BlobExtentDB  = "__azurite_db_blob_extent__.json"
	QueueDB       = "__azurite_db_queue__.json"
	QueueExtentDB = "__azurite_db_queue_extent__.json"
	TableDB       = "__azurite_db_table__.json"
	BlobExtents   = "__blobstorage__"
	QueueExtents  = "__queuestorage__"
)

// Markers are the names whose presence shows that the reference emulator
// wrote a directory.
var Markers = []string{BlobDB, BlobExtentDB, QueueDB, QueueExtentDB, TableDB, BlobExtents, QueueExtents}

// Found returns the names of Markers present in dir.
func Found(dir string) []string {
	var out []string
	for _, name := range Markers {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			out = append(out, name)
		}
	}
	return out
}

// collections reads a LokiJS database file: its collections' documents by
// collection name. A missing file is an empty database (a service the
// reference emulator never started).
func collections(path string) (map[string][]json.RawMessage, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string][]json.RawMessage{}, nil
	}
	if err != nil {
		return nil, err
	}
	var db struct {
		Collections []struct {
			Name string            `json:"name"`
			Data []json.RawMessage `json:"data"`
		} `json:"collections"`
	}
	if err := json.Unmarshal(b, &db); err != nil {
		return nil, fmt.Errorf("%s: not a LokiJS database: %w", path, err)
	}
	out := map[string][]json.RawMessage{}
	for _, c := range db.Collections {
		out[c.Name] = append(out[c.Name], c.Data...)
	}
	return out, nil
}

// decodeAll decodes every document of a collection into a T.
func decodeAll[T any](path, name string, docs []json.RawMessage) ([]T, error) {
	out := make([]T, 0, len(docs))
	for i, d := range docs {
		var v T
		if err := json.Unmarshal(d, &v); err != nil {
			return nil, fmt.Errorf("%s: collection %s, document %d: %w", path, name, i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// Extent is a range of an extent file: where the bytes of a blob, block,
// page range or message are.
type Extent struct {
	ID     string `json:"id"`
	Offset int64  `json:"offset"`
	Count  int64  `json:"count"`
}

// nodeBuffer is a Node.js Buffer as JSON.stringify writes it.
type nodeBuffer struct {
	Data []byte `json:"-"`
}

func (b *nodeBuffer) UnmarshalJSON(p []byte) error {
	var v struct {
		Type string `json:"type"`
		Data []int  `json:"data"`
	}
	if err := json.Unmarshal(p, &v); err != nil {
		// Some versions store base64 text.
		var s string
		if err2 := json.Unmarshal(p, &s); err2 != nil {
			return err
		}
		b.Data = []byte(s)
		return nil
	}
	b.Data = make([]byte, len(v.Data))
	for i, x := range v.Data {
		b.Data[i] = byte(x)
	}
	return nil
}

// Policy is a stored access policy (a signed identifier) of a container,
// queue or table.
type Policy struct {
	ID     string `json:"id"`
	Policy *struct {
		Start      string `json:"start"`
		Expiry     string `json:"expiry"`
		Permission string `json:"permission"`
	} `json:"accessPolicy"`
}

// Container is a container document.
type Container struct {
	Account    string            `json:"accountName"`
	Name       string            `json:"name"`
	Metadata   map[string]string `json:"metadata"`
	Properties struct {
		PublicAccess string `json:"publicAccess"`
		LastModified string `json:"lastModified"`
	} `json:"properties"`
	ACL []Policy `json:"containerAcl"`
}

// Block is a committed block of a block or append blob.
type Block struct {
	Name        string `json:"name"`
	Size        int64  `json:"size"`
	Persistency Extent `json:"persistency"`
}

// PageRange is a written range of a page blob, End inclusive.
type PageRange struct {
	Start       int64  `json:"start"`
	End         int64  `json:"end"`
	Persistency Extent `json:"persistency"`
}

// Blob is a blob or snapshot document.
type Blob struct {
	Account    string            `json:"accountName"`
	Container  string            `json:"containerName"`
	Name       string            `json:"name"`
	Snapshot   string            `json:"snapshot"`
	Deleted    bool              `json:"deleted"`
	Committed  bool              `json:"isCommitted"`
	Metadata   map[string]string `json:"metadata"`
	Properties struct {
		BlobType           string      `json:"blobType"`
		ContentLength      int64       `json:"contentLength"`
		ContentType        string      `json:"contentType"`
		ContentEncoding    string      `json:"contentEncoding"`
		ContentLanguage    string      `json:"contentLanguage"`
		ContentDisposition string      `json:"contentDisposition"`
		CacheControl       string      `json:"cacheControl"`
		ContentMD5         *nodeBuffer `json:"contentMD5"`
		CreationTime       string      `json:"creationTime"`
		LastModified       string      `json:"lastModified"`
		SequenceNumber     int64       `json:"blobSequenceNumber"`
		AccessTier         string      `json:"accessTier"`
		AccessTierInferred bool        `json:"accessTierInferred"`
		Sealed             bool        `json:"isSealed"`
	} `json:"properties"`
	Tags *struct {
		Set []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"blobTagSet"`
	} `json:"blobTags"`
	// Persistency holds the whole content of a block blob written in one
	// Put Blob; CommittedBlocks that of one built from blocks, or of an
	// append blob; PageRanges that of a page blob.
	Persistency     *Extent     `json:"persistency"`
	CommittedBlocks []Block     `json:"committedBlocksInOrder"`
	PageRanges      []PageRange `json:"pageRangesInOrder"`
}

// Queue is a queue document.
type Queue struct {
	Account  string            `json:"accountName"`
	Name     string            `json:"name"`
	Metadata map[string]string `json:"metadata"`
	ACL      []Policy          `json:"queueAcl"`
}

// Message is a queue message document. Times are milliseconds since the
// Unix epoch (TimeNextVisible) or ISO 8601 text.
type Message struct {
	Account         string `json:"accountName"`
	Queue           string `json:"queueName"`
	ID              string `json:"messageId"`
	TimeNextVisible int64  `json:"timeNextVisible"`
	InsertionTime   string `json:"insertionTime"`
	ExpirationTime  string `json:"expirationTime"`
	DequeueCount    int    `json:"dequeueCount"`
	Persistency     Extent `json:"persistency"`
}

// Table is a table with its entities.
type Table struct {
	Account  string
	Name     string
	ACL      []Policy
	Entities []Entity
}

// Entity is an entity document: Properties is the entity in the Table
// service's JSON form (values with "Name@odata.type" annotations),
// including PartitionKey, RowKey and Timestamp.
type Entity struct {
	PartitionKey string          `json:"PartitionKey"`
	RowKey       string          `json:"RowKey"`
	Properties   json.RawMessage `json:"properties"`
	LastModified string          `json:"lastModifiedTime"`
}

// Dir is a data directory of the reference emulator, read.
type Dir struct {
	Path       string
	Containers []Container
	Blobs      []Blob // committed, not deleted: snapshots before their base, by name
	Queues     []Queue
	Messages   []Message // in insertion order per queue
	Tables     []Table
	// extents maps an extent id to its file, per kind.
	blobExtents, queueExtents map[string]string
}

// Read reads the reference emulator's databases in dir.
func Read(dir string) (*Dir, error) {
	if len(Found(dir)) == 0 {
		return nil, fmt.Errorf("%s holds none of the reference emulator's files (%s)", dir, strings.Join(Markers, ", "))
	}
	d := &Dir{Path: dir}
	var err error
	path := filepath.Join(dir, BlobDB)
	blobDB, err := collections(path)
	if err != nil {
		return nil, err
	}
	if d.Containers, err = decodeAll[Container](path, "$CONTAINERS_COLLECTION$", blobDB["$CONTAINERS_COLLECTION$"]); err != nil {
		return nil, err
	}
	blobs, err := decodeAll[Blob](path, "$BLOBS_COLLECTION$", blobDB["$BLOBS_COLLECTION$"])
	if err != nil {
		return nil, err
	}
	for _, b := range blobs {
		if b.Committed && !b.Deleted {
			d.Blobs = append(d.Blobs, b)
		}
	}
	// Base blobs after their snapshots, snapshots oldest first: the order
	// the importer recreates them in.
	sort.SliceStable(d.Blobs, func(i, j int) bool {
		a, b := d.Blobs[i], d.Blobs[j]
		if a.Account+"\x00"+a.Container+"\x00"+a.Name != b.Account+"\x00"+b.Container+"\x00"+b.Name {
			return a.Account+"\x00"+a.Container+"\x00"+a.Name < b.Account+"\x00"+b.Container+"\x00"+b.Name
		}
		if (a.Snapshot == "") != (b.Snapshot == "") {
			return b.Snapshot == ""
		}
		return a.Snapshot < b.Snapshot
	})
	path = filepath.Join(dir, QueueDB)
	queueDB, err := collections(path)
	if err != nil {
		return nil, err
	}
	if d.Queues, err = decodeAll[Queue](path, "$QUEUES_COLLECTION$", queueDB["$QUEUES_COLLECTION$"]); err != nil {
		return nil, err
	}
	if d.Messages, err = decodeAll[Message](path, "$MESSAGES_COLLECTION$", queueDB["$MESSAGES_COLLECTION$"]); err != nil {
		return nil, err
	}
	sort.SliceStable(d.Messages, func(i, j int) bool { return d.Messages[i].InsertionTime < d.Messages[j].InsertionTime })
	path = filepath.Join(dir, TableDB)
	tableDB, err := collections(path)
	if err != nil {
		return nil, err
	}
	tables, err := decodeAll[struct {
		Account string   `json:"account"`
		Table   string   `json:"table"`
		ACL     []Policy `json:"tableAcl"`
	}](path, "$TABLES_COLLECTION$", tableDB["$TABLES_COLLECTION$"])
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		// Each table's entities are the collection "<account>$<table>".
		name := t.Account + "$" + t.Table
		ents, err := decodeAll[Entity](path, name, tableDB[name])
		if err != nil {
			return nil, err
		}
		d.Tables = append(d.Tables, Table{Account: t.Account, Name: t.Table, ACL: t.ACL, Entities: ents})
	}
	if d.blobExtents, err = extents(dir, BlobExtentDB, BlobExtents); err != nil {
		return nil, err
	}
	if d.queueExtents, err = extents(dir, QueueExtentDB, QueueExtents); err != nil {
		return nil, err
	}
	return d, nil
}

// extents maps the extent ids of an extent database to their files.
func extents(dir, db, sub string) (map[string]string, error) {
	path := filepath.Join(dir, db)
	cols, err := collections(path)
	if err != nil {
		return nil, err
	}
	docs, err := decodeAll[struct {
		ID   string `json:"id"`
		Path string `json:"path"`
	}](path, "$EXTENTS_COLLECTION$", cols["$EXTENTS_COLLECTION$"])
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range docs {
		p := e.Path
		if p == "" {
			p = e.ID
		}
		out[e.ID] = filepath.Join(dir, sub, filepath.Base(p))
	}
	return out, nil
}

// open returns a reader of an extent range: blob bytes (queue false) or
// message bytes.
func (d *Dir) open(e Extent, queue bool) (io.ReadCloser, error) {
	files := d.blobExtents
	if queue {
		files = d.queueExtents
	}
	path, ok := files[e.ID]
	if !ok {
		// An extent the database does not list still has its file by id.
		sub := BlobExtents
		if queue {
			sub = QueueExtents
		}
		path = filepath.Join(d.Path, sub, filepath.Base(e.ID))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("extent %s: %w", e.ID, err)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() < e.Offset+e.Count {
		f.Close()
		return nil, fmt.Errorf("extent %s: %d bytes, a document points at [%d, %d)", path, fi.Size(), e.Offset, e.Offset+e.Count)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, e.Offset, e.Count), f}, nil
}

// ReadExtent returns the bytes of an extent range.
func (d *Dir) readExtent(e Extent, queue bool) ([]byte, error) {
	r, err := d.open(e, queue)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
