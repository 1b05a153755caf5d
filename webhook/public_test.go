package webhook

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestOnlyPublicAddressesAreWebhookAndLogoTargets holds Public to the IANA
// special-purpose registries: a merchant's server on the internet is
// reached, nothing behind the app or set aside is.
func TestTheDialerRefusesAnAddressThatIsNotPublicBeforeConnecting(t *testing.T) {
	control := newDialer(false).Control
	if control == nil {
		t.Fatal("the dialer outside sandbox mode checks nothing")
	}
	for _, address := range []string{"100.64.0.1:443", "198.18.0.1:443", "[64:ff9b::a00:1]:443", "[::ffff:100.64.0.1]:443", "[fe80::1%eth0]:443", "not an address"} {
		if err := control("tcp", address, nil); !errors.Is(err, ErrPrivateTarget) {
			t.Errorf("%s: %v, want ErrPrivateTarget", address, err)
		}
	}
	for _, address := range []string{"1.1.1.1:443", "[2606:4700::1111]:443"} {
		if err := control("tcp", address, nil); err != nil {
			t.Errorf("%s: %v, want it let through", address, err)
		}
	}
	if newDialer(true).Control != nil {
		t.Error("in sandbox mode the dialer refuses addresses")
	}
}

// TestTheClientRefusesBeforeAnyConnectionIsMade: the client outside
// sandbox mode is refused a server on loopback before the server sees a
// connection; in sandbox mode it reaches it.
func TestTheClientRefusesBeforeAnyConnectionIsMade(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	if _, err := NewClient(false).Post(srv.URL, "application/json", strings.NewReader("{}")); !errors.Is(err, ErrPrivateTarget) {
		t.Errorf("a loopback server outside sandbox mode: %v, want ErrPrivateTarget", err)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the server saw %d connections from a refused client", n)
	}
	res, err := NewClient(true).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil || res.StatusCode != http.StatusNoContent || conns.Load() == 0 {
		t.Errorf("in sandbox mode: %v %v", res, err)
	}
}
