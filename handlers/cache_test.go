package handlers_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/pisclient/sandbox"
)

func TestConcurrentFirstVisitsShareOneUpstreamCall(t *testing.T) {
	a := setup(t, options{knobs: sandbox.Knobs{Latency: 200 * time.Millisecond}})
	checkout := a.enter("A-1", nil)
	statuses := make([]int, 50)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() { statuses[i] = a.get(checkout + "/banks?country=FR").StatusCode })
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusOK {
			t.Errorf("visit %d: status %d", i, s)
		}
	}
	if calls := a.sandbox.Stats().InstitutionsCalls; calls != 1 {
		t.Errorf("50 concurrent first visits made %d upstream calls, want 1", calls)
	}
}

func TestProviderFailingServesTheLastGoodList(t *testing.T) {
	a := setup(t, options{ttl: 20 * time.Millisecond})
	checkout := a.enter("A-1", nil)
	fresh := page(t, a.get(checkout+"/banks?country=FR"), http.StatusOK)
	if fresh.Find(testid("stale")).Length() != 0 {
		t.Fatal("a fresh list says it is stale")
	}
	want := fresh.Find(testid("bank")).Length()

	a.sandbox.SetKnobs(sandbox.Knobs{ErrorRate: 1})
	time.Sleep(40 * time.Millisecond) // let the cached copy expire
	stale := page(t, a.get(checkout+"/banks?country=FR"), http.StatusOK)
	if got := stale.Find(testid("bank")).Length(); got != want {
		t.Errorf("stale list has %d banks, want the last good %d", got, want)
	}
	if text(stale, testid("stale")) == "" {
		t.Error("the stale list carries no notice")
	}
	if st := a.cache.Stats(); st.Failures == 0 || st.StaleServes == 0 {
		t.Errorf("cache stats %+v: the failure and the stale serve are not counted", st)
	}

	// The error is not cached: once the provider is back, so is a fresh list.
	a.sandbox.SetKnobs(sandbox.Knobs{})
	time.Sleep(40 * time.Millisecond)
	if page(t, a.get(checkout+"/banks?country=FR"), http.StatusOK).Find(testid("stale")).Length() != 0 {
		t.Error("still stale after the provider came back")
	}
}

func TestNoListAtAllGivesARetryPage(t *testing.T) {
	a := setup(t, options{knobs: sandbox.Knobs{ErrorRate: 1}})
	checkout := a.enter("A-1", nil)
	doc := page(t, a.get(checkout+"/banks?country=FR"), http.StatusServiceUnavailable)
	if got := text(doc, testid("error-heading")); got != "We cannot show the banks right now" {
		t.Errorf("heading %q", got)
	}
	if doc.Find(testid("retry")).AttrOr("href", "") == "" {
		t.Error("no way to try again")
	}
	a.sandbox.SetKnobs(sandbox.Knobs{})
	page(t, a.get(checkout+"/banks?country=FR"), http.StatusOK)
}
