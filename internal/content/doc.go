// Package content is what the Blob and File services share: content
// properties and metadata, segments and the ingest of request bodies into
// the chunk store, the page (extent) store of sparse content, the ETag
// clock and the binary record primitives. It imports neither domain, so a
// change to one domain's records cannot change the other's on-disk format.
//
// The key layout and record bytes here are those the Blob service wrote
// before this package existed; they must not change.
package content
