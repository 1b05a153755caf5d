package mailer_test

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/mailer"
)

// smtpServer is a minimal SMTP server on loopback that keeps each message
// it is given.
type smtpServer struct {
	addr     string
	mu       sync.Mutex
	messages []string
	rcpts    []string
}

func newSMTPServer(t *testing.T) *smtpServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpServer{addr: ln.Addr().String()}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(conn)
		}
	}()
	return s
}

func (s *smtpServer) serve(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	say := func(line string) { conn.Write([]byte(line + "\r\n")) }
	say("220 test ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250-test")
			say("250 8BITMIME")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			s.mu.Lock()
			s.rcpts = append(s.rcpts, strings.TrimSpace(line[len("RCPT TO:"):]))
			s.mu.Unlock()
			say("250 OK")
		case cmd == "DATA":
			say("354 go on")
			var msg strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				msg.WriteString(l)
			}
			s.mu.Lock()
			s.messages = append(s.messages, msg.String())
			s.mu.Unlock()
			say("250 kept")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("250 OK")
		}
	}
}

func TestAnInvitationIsSentThroughTheSMTPServer(t *testing.T) {
	srv := newSMTPServer(t)
	m, err := mailer.Parse("smtp+insecure://" + srv.addr + "?from=pay@shop.example")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), "dana@shop.example", "You are invited", "Join here: https://pay.example/console/invite/abc"); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.messages) != 1 || !strings.Contains(srv.rcpts[0], "dana@shop.example") {
		t.Fatalf("the server kept %d messages to %v", len(srv.messages), srv.rcpts)
	}
	msg := srv.messages[0]
	for _, want := range []string{"From: <pay@shop.example>", "Subject: You are invited", "https://pay.example/console/invite/abc"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
}

func TestSMTPURLErrorsSayWhy(t *testing.T) {
	for raw, says := range map[string]string{
		"smtp://mail.example:587":                           "from=",
		"ftp://mail.example?from=a@b.example":               "scheme",
		"smtp+insecure://mail.example:25?from=a@b.example":  "only to this machine",
		"smtp://mail.example:99999?from=pay@shop.example":   "port",
		"smtp://mail.example?from=Pay%20<pay@shop.example>": "plain e-mail address",
	} {
		if _, err := mailer.Parse(raw); err == nil || !strings.Contains(err.Error(), says) || !strings.HasPrefix(err.Error(), "SMTP_URL") {
			t.Errorf("Parse(%q) = %v, want it to say %q", raw, err, says)
		}
	}
	if _, err := mailer.Parse("smtps://user:secret@mail.example:465?from=pay@shop.example"); err != nil {
		t.Errorf("a good smtps URL: %v", err)
	}
}
