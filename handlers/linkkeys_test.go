package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/paybybank/checkout/order"
)

func TestEachOrderRemembersTheKeyItsLinkWasSignedWith(t *testing.T) {
	a := setup(t, options{})
	a.follow(a.link("A-1", nil))
	a.follow(a.link("A-2", func(l *order.Link) { l.KID = "2026-10" }))
	a.follow(a.link("A-2", func(l *order.Link) { l.KID = "2026-10" })) // the same order again: counted once
	got, err := a.ledger.LinksOpenedByKey(context.Background(), "shop1", time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got["2026-11"] != 1 || got["2026-10"] != 1 {
		t.Errorf("orders opened by key: %v, want one with each of shop1's keys", got)
	}
}
