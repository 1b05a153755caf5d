// Package mailertest is an SMTP server on loopback for tests: it keeps
// every message it is sent, so that a test reads the e-mail a person
// would get.
package mailertest

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Sink is an SMTP server that keeps what it is sent.
type Sink struct {
	mu   sync.Mutex
	mail []Message
}

// Message is one message received: its recipients and its raw data.
type Message struct {
	To   []string
	Data []byte
}

// Start serves a Sink on loopback until the test ends and returns it with
// its SMTP_URL (no TLS; from names the sender).
func Start(t testing.TB, from string) (*Sink, string) {
	t.Helper()
	sink := &Sink{}
	srv := smtp.NewServer(sink)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sink, "smtp+insecure://" + ln.Addr().String() + "?from=" + from
}

// Sent is every message received so far, oldest first.
func (s *Sink) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.mail...)
}

// NewSession answers a connection (smtp.Backend).
func (s *Sink) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{sink: s}, nil }

type session struct {
	sink *Sink
	to   []string
}

func (s *session) Reset()                                    { s.to = nil }
func (s *session) Logout() error                             { return nil }
func (s *session) Mail(string, *smtp.MailOptions) error      { return nil }
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error { s.to = append(s.to, to); return nil }
func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.sink.mu.Lock()
	defer s.sink.mu.Unlock()
	s.sink.mail = append(s.sink.mail, Message{To: s.to, Data: b})
	return nil
}
