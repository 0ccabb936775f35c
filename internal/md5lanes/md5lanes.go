// Package md5lanes computes the MD5 of many request bodies at once on one
// core: a multi-buffer hasher (github.com/minio/md5-simd) runs up to 16
// of them side by side in the vector lanes of AVX-512 (8 with AVX2; the
// library falls back to crypto/md5 on other CPUs). It is a leaf: it
// imports nothing from lazuli.
//
// Why: Azure's File Put Range always returns the MD5 of the bytes it
// wrote, so the service hashes every byte uploaded to a file. crypto/md5
// hashes one stream at about 0.5 GB/s per core; with 16 clients uploading
// 4 MiB ranges, three quarters of the server's CPU went to it, and the
// 64 MiB file upload ran at less than half the speed of the same bytes
// sent as blob blocks. The library hashes 16 streams at 3.7 GB/s on one
// core of the benchmark machine (crypto/md5: 0.5 GB/s); small bodies and
// a body alone are still hashed by crypto/md5 (see lanesMin, lanesWith).
//
// The library keeps a record of every hasher ever closed (fixed in its
// repository after its last release), so hashers here are never closed:
// a fixed set is made once and reused, each reset after use. When all are
// busy, Get hands out crypto/md5. All hashing of the lanes runs on one
// goroutine of the library's.
package md5lanes

import (
	"crypto/md5"
	"hash"
	"sync/atomic"

	md5simd "github.com/minio/md5-simd"
)

// batch is the size of the pieces a hasher takes: the library's own
// piece size, so that every lane of a round hashes as many bytes as the
// others. Request bodies arrive in reads of any size; cut as they come,
// they left lanes idle: in the 64 MiB file upload benchmark (16 clients),
// whole pieces took the server's CPU per upload from 106-111 to 93-96 ms.
const batch = 32 << 10

// laneHash is a multi-buffer hasher fed whole batches.
type laneHash struct {
	md5simd.Hasher
	buf []byte
}

func (l *laneHash) Write(p []byte) (int, error) {
	n := len(p)
	if len(l.buf) > 0 {
		k := min(len(p), cap(l.buf)-len(l.buf))
		l.buf = append(l.buf, p[:k]...)
		p = p[k:]
		if len(l.buf) < cap(l.buf) {
			return n, nil
		}
		l.Hasher.Write(l.buf)
		l.buf = l.buf[:0]
	}
	if whole := len(p) / cap(l.buf) * cap(l.buf); whole > 0 {
		l.Hasher.Write(p[:whole])
		p = p[whole:]
	}
	l.buf = append(l.buf, p...)
	return n, nil
}

func (l *laneHash) Sum(b []byte) []byte {
	if len(l.buf) > 0 {
		l.Hasher.Write(l.buf)
		l.buf = l.buf[:0]
	}
	return l.Hasher.Sum(b)
}

func (l *laneHash) Reset() {
	l.buf = l.buf[:0]
	l.Hasher.Reset()
}

// hashers is the number of multi-buffer hashers: two per lane (16 with
// AVX-512), so that more bodies than lanes may be in flight, each lane
// taking the next piece that is ready.
const hashers = 2 * 16

// Lanes hands out MD5 hashers that share one multi-buffer hashing
// goroutine. A nil *Lanes hands out crypto/md5.
type Lanes struct {
	srv  md5simd.Server
	free chan *laneHash
	// large counts the bodies of at least lanesMin bytes being hashed.
	large atomic.Int32
}

// New starts the hashing goroutine; Close stops it.
func New() *Lanes {
	l := &Lanes{srv: md5simd.NewServer(), free: make(chan *laneHash, hashers)}
	for range hashers {
		l.free <- &laneHash{Hasher: l.srv.NewHash(), buf: make([]byte, 0, batch)}
	}
	return l
}

// lanesMin is the smallest body the lanes hash: below it, handing the
// bytes to the hashing goroutine and waiting for the sum costs more than
// hashing them here. With 16 goroutines on two cores (BenchmarkMD5), a
// 1 KiB body takes 1.2 us with crypto/md5 and 3.3 us through the lanes;
// at 4 KiB the two tie; at 16 KiB the lanes take half the time, at 64 KiB
// and above a third.
const lanesMin = 8 << 10

// lanesWith is how many large bodies must be in flight (this one
// included) for a new one to go to the lanes. A body alone is hashed
// faster by crypto/md5 on its request's goroutine: through the lanes, one
// client's 64 MiB uploads took a quarter more of the server's CPU and ran
// 10 % slower. With 16 clients, 2 kept the server's CPU per upload at
// 104-108 ms where 3 (fewer bodies found company) took 116 ms.
const lanesWith = 2

// Get returns a hasher for a body of size bytes (-1: unknown); the caller
// hands it back with Put once it has taken the sum (or given up).
func (l *Lanes) Get(size int64) hash.Hash {
	if l == nil || (size >= 0 && size < lanesMin) {
		return md5.New()
	}
	if l.large.Add(1) >= lanesWith {
		select {
		case h := <-l.free:
			return h
		default:
		}
	}
	return largeHash{md5.New()}
}

// largeHash is crypto/md5 counted in Lanes.large.
type largeHash struct{ hash.Hash }

// Put takes back a hasher from Get.
func (l *Lanes) Put(h hash.Hash) {
	switch h := h.(type) {
	case *laneHash:
		l.large.Add(-1)
		h.Reset()
		l.free <- h
	case largeHash:
		l.large.Add(-1)
	}
}

// Close stops the hashing goroutine. No hasher may be in use (the server
// calls it once requests have ended).
func (l *Lanes) Close() {
	if l != nil {
		l.srv.Close()
	}
}
