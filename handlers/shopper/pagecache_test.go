package shopper

import (
	"testing"
	"time"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/prerender"
)

func TestAChangedMerchantsKeptPagesAreDroppedAndNoOneElses(t *testing.T) {
	var pc pageCache
	list := &banks.List{}
	now := time.Now()
	page := func() *keptPage { return &keptPage{page: prerender.New([]byte("<p>page</p>")), renderedAt: now} }
	shop1, shop2 := &merchant.Merchant{ID: "shop1", Version: 1}, &merchant.Merchant{ID: "shop2", Version: 1}
	for _, lang := range []string{"en", "de"} {
		pc.put(list, pageKey{route: "banks", look: look{merchant: shop1}, lang: lang}, page())
		pc.put(list, pageKey{route: "banks", look: look{merchant: shop2}, lang: lang}, page())
	}
	// shop1's settings change: the running set holds a new value for it.
	changed := &merchant.Merchant{ID: "shop1", Version: 2}
	pc.put(list, pageKey{route: "country", look: look{merchant: changed}, lang: "en"}, page())
	if _, ok := pc.get(list, pageKey{route: "banks", look: look{merchant: shop1}, lang: "de"}, now); ok {
		t.Error("a page of shop1's old settings is still kept")
	}
	for _, lang := range []string{"en", "de"} {
		if _, ok := pc.get(list, pageKey{route: "banks", look: look{merchant: shop2}, lang: lang}, now); !ok {
			t.Errorf("shop2's %s page was dropped by a change of shop1", lang)
		}
	}
	if len(pc.pages) != 3 {
		t.Errorf("%d pages kept, want shop2's two and shop1's new one", len(pc.pages))
	}
}
