package md5lanes

import (
	"bytes"
	"crypto/md5"
	"hash"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
)

// TestSums hashes bodies of many lengths, written in pieces of random
// sizes, from more goroutines than there are hashers (so that some get
// crypto/md5), with every hasher reused many times: each sum must be
// crypto/md5's.
func TestSums(t *testing.T) {
	l := New()
	defer l.Close()
	body := make([]byte, 1<<20+77)
	for i := range body {
		body[i] = byte(i*131 + i>>9)
	}
	var wg sync.WaitGroup
	for g := range 3 * hashers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 20 {
				p := body[:r.IntN(len(body)+1)]
				want := md5.Sum(p)
				h := l.Get(int64(len(p)))
				for rest := p; len(rest) > 0; {
					n := min(len(rest), 1+r.IntN(200<<10))
					h.Write(rest[:n])
					rest = rest[n:]
				}
				got := h.Sum(nil)
				l.Put(h)
				if !bytes.Equal(got, want[:]) {
					t.Errorf("MD5 of %d bytes: %x, want %x", len(p), got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestGiveUp hands back hashers without taking their sums (requests
// whose bodies failed): the next user of each starts from nothing.
func TestGiveUp(t *testing.T) {
	l := New()
	defer l.Close()
	var held []hash.Hash
	for range hashers + lanesWith {
		h := l.Get(-1)
		h.Write(bytes.Repeat([]byte{'x'}, 100<<10+3))
		held = append(held, h)
	}
	for _, h := range held {
		l.Put(h)
	}
	// Two bodies in flight, so that the next ones go to the lanes.
	for range lanesWith - 1 {
		h := l.Get(-1)
		defer l.Put(h)
	}
	for range 2 * hashers {
		h := l.Get(-1)
		if _, ok := h.(*laneHash); !ok {
			t.Fatalf("Get with %d bodies in flight: %T, want the lanes", lanesWith, h)
		}
		h.Write([]byte("abc"))
		if got, want := h.Sum(nil), md5.Sum([]byte("abc")); !bytes.Equal(got, want[:]) {
			t.Fatalf("MD5 after a hasher was given up: %x, want %x", got, want)
		}
		l.Put(h)
	}
}

// TestAlone: a large body alone, or a small one, is hashed by crypto/md5.
func TestAlone(t *testing.T) {
	l := New()
	defer l.Close()
	for range 3 {
		for _, size := range []int64{-1, 4 << 20, lanesMin - 1} {
			h := l.Get(size)
			if _, ok := h.(*laneHash); ok {
				t.Fatalf("Get(%d) alone: the lanes, want crypto/md5", size)
			}
			l.Put(h)
		}
	}
	if n := l.large.Load(); n != 0 {
		t.Fatalf("%d large bodies counted after all were put back", n)
	}
}

// TestNil: a nil *Lanes hands out crypto/md5.
func TestNil(t *testing.T) {
	var l *Lanes
	h := l.Get(-1)
	h.Write([]byte("abc"))
	if got, want := h.Sum(nil), md5.Sum([]byte("abc")); !bytes.Equal(got, want[:]) {
		t.Fatalf("MD5: %x, want %x", got, want)
	}
	l.Put(h)
	l.Close()
}

// BenchmarkMD5 hashes bodies of 1 KiB to 4 MiB from 16 goroutines at
// once, as 16 clients uploading do, with crypto/md5 and with the lanes
// (which sets lanesMin).
func BenchmarkMD5(b *testing.B) {
	for _, size := range []int{1 << 10, 4 << 10, 16 << 10, 64 << 10, 4 << 20} {
		body := bytes.Repeat([]byte{'z'}, size)
		for _, lanes := range []bool{false, true} {
			name := strconv.Itoa(size>>10) + "KiB/crypto"
			var l *Lanes
			if lanes {
				name = strconv.Itoa(size>>10) + "KiB/lanes"
				l = New()
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(size))
				b.SetParallelism(8) // 16 goroutines on 2 cores
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						h := l.Get(-1) // the lanes whatever the size
						for off := 0; off < size; off += 64 << 10 {
							h.Write(body[off:min(size, off+64<<10)])
						}
						h.Sum(nil)
						l.Put(h)
					}
				})
			})
			l.Close()
		}
	}
}
