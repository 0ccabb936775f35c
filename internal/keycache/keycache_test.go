package keycache

import (
	"strconv"
	"sync"
	"testing"
)

func TestCache(t *testing.T) {
	var c Cache[uint64]
	if _, ok := c.Get("a"); ok {
		t.Fatal("empty cache found a")
	}
	c.Put("a", 1)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %d, %v", v, ok)
	}
	c.Drop("a")
	if _, ok := c.Get("a"); ok {
		t.Fatal("a still there after Drop")
	}
	for i := range Max + 1 {
		c.Put(strconv.Itoa(i), uint64(i))
	}
	if n := len(c.m); n > Max {
		t.Fatalf("%d entries, bound %d", n, Max)
	}
	if v, ok := c.Get(strconv.Itoa(Max)); !ok || v != Max {
		t.Fatalf("newest entry lost: %d, %v", v, ok)
	}
}

func TestCacheRace(t *testing.T) {
	var c Cache[int]
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := strconv.Itoa(i % 100)
				c.Put(k, g)
				c.Get(k)
				if i%7 == 0 {
					c.Drop(k)
				}
			}
		})
	}
	wg.Wait()
}
