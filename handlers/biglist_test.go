package handlers_test

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/pisclient/sandbox"
)

// bigCountry lists 2,000 banks in Germany, as real aggregators do.
var bigCountry = sandbox.Knobs{SettleDelay: settleNow.SettleDelay, CountryBanks: map[string]int{"DE": 2000}}

// payWith pays order id at bank of country, approves it at the sandbox and
// comes back to the status page, so that the ledger records it completed.
func (a *app) payWith(id, country, bank string, form url.Values) {
	a.t.Helper()
	checkout := a.enter(id, nil)
	if form == nil {
		form = url.Values{}
	}
	form.Set("country", country)
	form.Set("bank", bank)
	res := a.post(checkout+"/pay", form)
	if res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("submit %s: %d", id, res.StatusCode)
	}
	res = a.post(res.Header.Get("Location"), url.Values{"action": {"approve"}})
	if res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("approve %s: %d", id, res.StatusCode)
	}
	if res := a.get(res.Header.Get("Location")); res.StatusCode != http.StatusOK {
		a.t.Fatalf("back from the bank %s: %d", id, res.StatusCode)
	}
}

func TestACountryOf2000BanksShowsThePopularOnesFirst(t *testing.T) {
	a := setup(t, options{knobs: bigCountry})
	iban := url.Values{"iban": {"DE89370400440532013000"}}
	a.payWith("P-1", "DE", "gen-de-1235", iban)
	a.payWith("P-2", "DE", "gen-de-1235", iban)
	a.payWith("P-3", "DE", "deutsche-bank", nil)
	// The most paid banks are counted in the background, with the banks'
	// health.
	if err := a.health.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}

	doc := page(t, a.get(a.enter("A-1", nil)+"/banks?country=DE"), http.StatusOK)
	var popular []string
	doc.Find(testid("popular") + " " + testid("bank")).Each(func(_ int, s *goqueryS) { popular = append(popular, s.AttrOr("data-id", "")) })
	if strings.Join(popular, ",") != "gen-de-1235,deutsche-bank" {
		t.Errorf("popular banks %v, want the most paid with first", popular)
	}
	if n := doc.Find(testid("banks") + " " + testid("bank")).Length(); n == 0 || n > 100 {
		t.Errorf("%d banks on the first page of 2,000, want at most 100", n)
	}
	if got := text(doc, testid("count")); !strings.Contains(got, "2000") && !strings.Contains(got, "2,000") {
		t.Errorf("count %q does not say 2,000", got)
	}
}

func TestAMerchantsPinnedBanksComeFirst(t *testing.T) {
	a := setup(t, options{knobs: bigCountry})
	m, _ := a.merchants.Get("shop1")
	m.PopularBanks = map[string][]string{"DE": {"gen-de-0042", "commerzbank", "no-such-bank"}}
	doc := page(t, a.get(a.enter("A-1", nil)+"/banks?country=DE"), http.StatusOK)
	var popular []string
	doc.Find(testid("popular") + " " + testid("bank")).Each(func(_ int, s *goqueryS) { popular = append(popular, s.AttrOr("data-id", "")) })
	if strings.Join(popular, ",") != "gen-de-0042,commerzbank" {
		t.Errorf("popular banks %v, want the merchant's pins that exist", popular)
	}
}

func TestEveryOneOf2000BanksIsReachableWithoutScript(t *testing.T) {
	a := setup(t, options{knobs: bigCountry})
	checkout := a.enter("A-1", nil)
	first := checkout + "/banks?country=DE"
	doc := page(t, a.get(first), http.StatusOK)
	var ranges []string
	doc.Find(testid("ranges") + " a").Each(func(_ int, s *goqueryS) {
		ranges = append(ranges, resolve(first, s.AttrOr("href", "")))
	})
	if len(ranges) != 20 {
		t.Fatalf("%d ranges for 2,000 banks, want 20 of 100", len(ranges))
	}
	seen := map[string]bool{}
	for i, r := range ranges {
		doc := page(t, a.get(r), http.StatusOK)
		if cur := doc.Find(`[aria-current="page"]`).AttrOr("href", ""); resolve(first, cur) != r {
			t.Errorf("range %d: the current range is marked %q", i+1, cur)
		}
		var names []string
		doc.Find(testid("banks") + " " + testid("bank")).Each(func(_ int, s *goqueryS) {
			seen[s.AttrOr("data-id", "")] = true
			names = append(names, s.Find(testid("bank-name")).Text())
			// Each bank is a plain link to its details, in this checkout.
			if href := resolve(r, s.AttrOr("href", "")); !strings.HasPrefix(href, checkout+"/pay?") {
				t.Errorf("bank link leads to %s", href)
			}
		})
		// The range's label names its first and last bank.
		label := strings.Split(doc.Find(`[aria-current="page"]`).Text(), " – ")
		if len(names) == 0 || len(label) != 2 || !strings.HasPrefix(names[0], label[0]) || !strings.HasPrefix(names[len(names)-1], label[1]) {
			t.Errorf("range %d labelled %q runs from %q to %q", i+1, label, names[0], names[len(names)-1])
		}
	}
	if len(seen) != 2000 {
		t.Errorf("%d distinct banks reached through the ranges, want 2,000", len(seen))
	}
	// A range past the last shows the last.
	past := page(t, a.get(first+"&page=99999"), http.StatusOK)
	if cur := resolve(first, past.Find(`[aria-current="page"]`).AttrOr("href", "")); cur != ranges[len(ranges)-1] {
		t.Errorf("page 99999 shows range %s", cur)
	}
}

func TestAnyOf2000BanksIsFoundBySearch(t *testing.T) {
	a := setup(t, options{knobs: bigCountry})
	checkout := a.enter("A-1", nil)
	for _, want := range []struct{ id, query string }{
		{"gen-de-0001", ""}, {"gen-de-0999", ""}, {"gen-de-1500", ""}, {"commerzbank", "Commerz"},
	} {
		query := want.query
		if query == "" {
			query = a.bankName(checkout, "DE", want.id)
		}
		u := checkout + "/banks?" + url.Values{"country": {"DE"}, "q": {query}}.Encode()
		doc := page(t, a.get(u), http.StatusOK)
		found := doc.Find(testid("banks") + ` [data-id="` + want.id + `"]`)
		if found.Length() != 1 {
			t.Errorf("searching %q: %s not found", query, want.id)
		}
	}
}

// bankName reads a bank's name off its details page.
func (a *app) bankName(checkout, country, id string) string {
	a.t.Helper()
	doc := page(a.t.(*testing.T), a.get(checkout+"/pay?"+url.Values{"country": {country}, "bank": {id}}.Encode()), http.StatusOK)
	return text(doc, testid("bank-name"))
}

// logoProvider is the sandbox with some banks' logos spoiled, counting the
// logo requests that reach it.
type logoProvider struct {
	sb *sandbox.Sandbox
	mu sync.Mutex
	n  map[string]int
}

// Spoiled logos, by the bank whose logo it is.
var spoiled = map[string]string{
	"santander.svg": "too big",
	"ing.svg":       "not an image",
	"revolut.svg":   "failing",
	"n26.svg":       "scripted",
}

func (p *logoProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	file, isLogo := strings.CutPrefix(r.URL.Path, "/logos/")
	if !isLogo {
		p.sb.ServeHTTP(w, r)
		return
	}
	p.mu.Lock()
	p.n[file]++
	p.mu.Unlock()
	switch spoiled[file] {
	case "too big":
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
		w.Write(make([]byte, 300<<10))
	case "not an image":
		w.Header().Set("Content-Type", "image/svg+xml")
		io.WriteString(w, "<html><body>a login page</body></html>")
	case "failing":
		w.WriteHeader(http.StatusBadGateway)
	case "scripted":
		w.Header().Set("Content-Type", "image/svg+xml")
		io.WriteString(w, `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40"><script>parent.pwned = true</script><rect width="40" height="40"/></svg>`)
	default:
		p.sb.ServeHTTP(w, r)
	}
}

func (p *logoProvider) hits(file string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[file]
}

func TestLogosComeFromTheAppOnly(t *testing.T) {
	var provider *logoProvider
	a := setup(t, options{upstreamFor: func(sb *sandbox.Sandbox) http.Handler {
		provider = &logoProvider{sb: sb, n: map[string]int{}}
		return provider
	}})
	checkout := a.enter("A-1", nil)
	bankPage := checkout + "/banks?country=DE"
	res := a.get(bankPage)
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' data:;") {
		t.Errorf("CSP %q lets images come from elsewhere", csp)
	}
	doc := page(t, res, http.StatusOK)
	logos := map[string]string{} // bank id → logo address
	doc.Find(testid("bank")).Each(func(_ int, s *goqueryS) {
		if img := s.Find("img"); img.Length() > 0 {
			logos[s.AttrOr("data-id", "")] = resolve(bankPage, img.AttrOr("src", ""))
		} else if s.Find(testid("initials")).Text() == "" {
			t.Errorf("bank %s has neither logo nor initials", s.AttrOr("data-id", ""))
		}
	})
	if len(logos) < 10 || logos["deutsche-bank"] == "" {
		t.Fatalf("%d logos on the page: %v", len(logos), logos)
	}
	for id, src := range logos {
		if !strings.HasPrefix(src, a.url+"/logos/") {
			t.Errorf("bank %s: logo from %s, not the app", id, src)
		}
	}

	// A good logo: fetched once, then served from the cache for a year.
	good := logos["deutsche-bank"]
	for range 3 {
		res := a.get(good)
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(string(body), "<svg") {
			t.Fatalf("good logo: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=31536000") || res.Header.Get("ETag") == "" {
			t.Errorf("good logo cached as %q, ETag %q", cc, res.Header.Get("ETag"))
		}
	}
	if n := provider.hits("deutsche-bank.svg"); n != 1 {
		t.Errorf("the provider was asked %d times for one logo, want 1", n)
	}
	req, _ := http.NewRequest(http.MethodGet, good, nil)
	req.Header.Set("If-None-Match", a.get(good).Header.Get("ETag"))
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusNotModified {
		t.Errorf("revalidating a logo: %v %v", res.StatusCode, err)
	}

	// Spoiled logos: the bank's initials instead, tried again later.
	for bank, why := range map[string]string{"santander": "too big", "ing": "not an image", "revolut": "failing"} {
		res := a.get(logos[bank])
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(string(body), "<text") {
			t.Errorf("%s logo (%s): %d %s %.60s, want the initials", bank, why, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
		if cc := res.Header.Get("Cache-Control"); strings.Contains(cc, "31536000") {
			t.Errorf("%s logo (%s) stand-in cached for a year", bank, why)
		}
	}

	// An SVG with script is served so that it cannot run it, even opened
	// on its own.
	res = a.get(logos["n26"])
	csp := res.Header.Get("Content-Security-Policy")
	if res.StatusCode != http.StatusOK || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "sandbox") ||
		strings.Contains(csp, "script-src") || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("scripted SVG served with %d, CSP %q", res.StatusCode, csp)
	}

	// The details page shows the bank's logo from the app too, or its
	// initials.
	pay := page(t, a.get(checkout+"/pay?country=DE&bank=deutsche-bank"), http.StatusOK)
	if src := resolve(bankPage, pay.Find("main img").AttrOr("src", "")); src != logos["deutsche-bank"] {
		t.Errorf("the details page shows the logo from %s", src)
	}
	pay = page(t, a.get(checkout+"/pay?country=DE&bank=ethikbank"), http.StatusOK)
	if pay.Find("main img").Length() != 0 || pay.Find(testid("initials")).Text() != "E" {
		t.Errorf("a bank without a logo shows %q for initials", pay.Find(testid("initials")).Text())
	}

	// Nothing but the list's logos is fetched.
	if res := a.get(a.url + "/logos/0123456789abcdef"); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown logo key: %d", res.StatusCode)
	}
}

// A browser that takes no compression gets the same page, whole.
func TestTheBankPageIsTheSameUncompressed(t *testing.T) {
	a := setup(t, options{knobs: bigCountry})
	bankPage := a.enter("A-1", nil) + "/banks?country=DE&page=3"
	read := func(encoding string) (string, http.Header) {
		res := a.do(http.MethodGet, bankPage, nil, http.Header{"Accept-Encoding": {encoding}})
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", encoding, res.StatusCode)
		}
		return plainBody(t, res), res.Header
	}
	zipped, zh := read("gzip")
	plain, ph := read("identity")
	if zh.Get("Content-Encoding") != "gzip" || ph.Get("Content-Encoding") != "" {
		t.Errorf("encodings %q and %q", zh.Get("Content-Encoding"), ph.Get("Content-Encoding"))
	}
	if zipped != plain || !strings.Contains(plain, "49.90") || !strings.HasSuffix(plain, "</html>") {
		t.Errorf("the plain page (%d bytes) differs from the compressed one (%d bytes)", len(plain), len(zipped))
	}
}

// The bank page, its stylesheet and scripts weigh at most 15 KB compressed
// (logos aside), for 150 banks (one of them failing right now) and for
// 2,000.
func TestTheBankPageWeighsUnder15KB(t *testing.T) {
	a := setup(t, options{knobs: sandbox.Knobs{CountryBanks: map[string]int{"FR": 150, "DE": 2000},
		FailingBanks: map[string]float64{"FR:boursobank": 1}}, health: bankhealth.Thresholds{MinFinished: 1, MinSuccess: 0.5}})
	a.payWith("KO-1", "FR", "boursobank", nil)
	if err := a.health.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkout := a.enter("A-1", nil)
	compressed := func(u string) (int, string) {
		res := a.do(http.MethodGet, u, nil, http.Header{"Accept-Encoding": {"gzip"}})
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: %d, encoding %q", u, res.StatusCode, res.Header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := io.ReadAll(zr)
		return len(raw), string(plain)
	}
	for _, country := range []string{"FR", "DE"} {
		bankPage := checkout + "/banks?country=" + country
		total, html := compressed(bankPage)
		doc := page(t, a.get(bankPage), http.StatusOK)
		assets := 0
		doc.Find(`link[rel="stylesheet"], script[src]`).Each(func(_ int, s *goqueryS) {
			ref := s.AttrOr("href", s.AttrOr("src", ""))
			n, _ := compressed(resolve(bankPage, ref))
			total += n
			assets++
		})
		if country == "FR" && strings.Count(html, `data-testid="degraded"`) != 1 {
			t.Error("FR: the failing bank is not marked on the page weighed")
		}
		if assets < 2 || total > 15<<10 {
			t.Errorf("%s: %d banks listed, %d bytes compressed with %d assets; the budget is 15 KB", country,
				strings.Count(html, `data-testid="bank"`), total, assets)
		}
		t.Logf("%s: %.1f KB with CSS and JS", country, float64(total)/1024)
	}
}

// A search always leads somewhere: a French bank searched under Germany
// says it is listed in France, and every list ends with a way forward.
func TestASearchThatFindsNothingHereLeadsElsewhere(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	u := checkout + "/banks?" + url.Values{"country": {"DE"}, "q": {"Société Générale"}}.Encode()
	doc := page(t, a.get(u), http.StatusOK)
	if n := doc.Find(testid("banks") + " " + testid("bank")).Length(); n != 0 {
		t.Fatalf("%d German banks match Société Générale", n)
	}
	there := doc.Find(testid("elsewhere") + ` a[data-country="FR"]`)
	if !strings.Contains(there.Text(), "France") {
		t.Fatalf("no word that it is listed in France: %q", text(doc, testid("elsewhere")))
	}
	french := page(t, a.get(resolve(u, there.AttrOr("href", ""))), http.StatusOK)
	if french.Find(testid("banks")+` [data-id="societe-generale"]`).Length() != 1 {
		t.Error("the link to France does not find Société Générale there")
	}
	// The way forward: another country, from any list.
	for _, doc := range []*goquery.Document{doc, french} {
		way := doc.Find(testid("not-listed") + " a")
		if way.Length() != 1 || resolve(u, way.AttrOr("href", "")) != checkout+"?choose=1" {
			t.Errorf("the way forward leads to %q", way.AttrOr("href", ""))
		}
	}
	// A search that finds the bank here names no other country.
	here := page(t, a.get(checkout+"/banks?"+url.Values{"country": {"FR"}, "q": {"Société Générale"}}.Encode()), http.StatusOK)
	if here.Find(testid("elsewhere")).Length() != 0 {
		t.Errorf("a search found in France names elsewhere: %q", text(here, testid("elsewhere")))
	}
}

// A shopper who knows the bank by its former name finds it, sees that name
// under the current one, and is pointed to its country from another.
func TestABankIsFoundByItsFormerName(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	doc := page(t, a.get(checkout+"/banks?"+url.Values{"country": {"FR"}, "q": {"Boursorama"}}.Encode()), http.StatusOK)
	found := doc.Find(testid("banks") + " " + testid("bank"))
	if found.Length() != 1 || found.AttrOr("data-id", "") != "boursobank" {
		t.Fatalf("Boursorama finds %d banks, first %q", found.Length(), found.First().AttrOr("data-id", ""))
	}
	if got := strings.TrimSpace(found.Find(testid("known-as")).Text()); got != "Also known as Boursorama, Boursorama Banque" {
		t.Errorf("under BoursoBank: %q", got)
	}
	// The whole list says it too, so the filter and the eye find it alike.
	all := page(t, a.get(checkout+"/banks?country=FR"), http.StatusOK)
	row := all.Find(testid("banks") + ` li:has([data-id="boursobank"])`)
	if !strings.Contains(row.AttrOr("data-search", ""), "boursorama banque") || row.Find(testid("known-as")).Length() != 1 {
		t.Errorf("the BoursoBank row neither says nor searches its former name: %q", row.AttrOr("data-search", ""))
	}
	if n := all.Find(testid("known-as")).Length(); n == 0 || n > 5 {
		t.Errorf("%d French rows carry other names; only the few in the table should", n)
	}
	de := page(t, a.get(checkout+"/banks?"+url.Values{"country": {"DE"}, "q": {"Boursorama"}}.Encode()), http.StatusOK)
	if there := de.Find(testid("elsewhere") + ` a[data-country="FR"]`); there.Length() != 1 {
		t.Errorf("a former name searched under Germany does not point to France: %q", text(de, testid("elsewhere")))
	}
}
