package ledgertest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Gate is a TCP proxy in front of a PostgreSQL server that can refuse
// connections, and cut the open ones, as a server that is down does, then
// let them through again on the same address: a database outage for a test.
type Gate struct {
	t      testing.TB
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
}

// Gated is a PostgreSQL DATABASE_URL like databaseURL, reached through a
// Gate on loopback, open until the test says otherwise.
func Gated(t testing.TB, databaseURL string) (string, *Gate) {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	g := &Gate{t: t, target: u.Host, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.addr = ln.Addr().String()
	g.serve(ln)
	t.Cleanup(g.Refuse)
	u.Host = g.addr
	return u.String(), g
}

func (g *Gate) serve(ln net.Listener) {
	g.mu.Lock()
	g.ln = ln
	g.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", g.target)
			if err != nil {
				c.Close()
				continue
			}
			g.mu.Lock()
			if g.ln != ln {
				// Refused while this one was being let through.
				g.mu.Unlock()
				c.Close()
				up.Close()
				return
			}
			g.conns[c], g.conns[up] = true, true
			g.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
}

// Refuse closes the gate: new connections are refused, open ones cut.
func (g *Gate) Refuse() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ln != nil {
		g.ln.Close()
		g.ln = nil
	}
	for c := range g.conns {
		c.Close()
		delete(g.conns, c)
	}
}

// Open lets connections through again, on the same address.
func (g *Gate) Open() {
	ln, err := net.Listen("tcp", g.addr)
	if err != nil {
		g.t.Fatal(err)
	}
	g.serve(ln)
}
