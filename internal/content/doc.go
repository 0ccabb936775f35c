// Package content is what the Blob and File services share: content
// properties and metadata, segments and the ingest of request bodies into
// the chunk store, the page (extent) store of sparse content and the ETag
// clock; and the binary record primitives, with which every domain (Queue
// and Table too) writes its binary records. It imports no domain, so a
// change to one domain's records cannot change another's on-disk format.
//
// The key layout and record bytes here are those the Blob service wrote
// before this package existed; they must not change.
package content
