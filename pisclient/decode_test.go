package pisclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

var testBase, _ = url.Parse("https://pis.example/")

func TestDecodeInstitutionsTolerates(t *testing.T) {
	body := `[
	 {"institution_id":"ing","institution_name":"ING","country_code":"NL","logo_link":"https://l/ing.svg","extraFields":["iban"]},
	 {"institution_id":"ing","institution_name":"ING","country_code":"be","logoUrl":"/logos/ing.svg","extraFields":["iban","favouriteColour"]},
	 {"institution_id":"n26","institution_name":"N26","country_code":"DE","logo_link":"javascript:alert(1)"},
	 {"institution_id":"x","institution_name":"Test","country_code":"DE","is_for_test":"true"},
	 {"institution_id":"","institution_name":"No id"},
	 "not an object"
	]`
	list, skipped, err := decodeInstitutions([]byte(body), testBase)
	if err != nil || skipped != 2 || len(list) != 4 {
		t.Fatalf("got %d entries, %d skipped, %v; want 4 and 2", len(list), skipped, err)
	}
	if list[0].LogoURL != "https://l/ing.svg" || list[1].LogoURL != "https://pis.example/logos/ing.svg" {
		t.Errorf("logos from logo_link and logoUrl: %q, %q", list[0].LogoURL, list[1].LogoURL)
	}
	if list[0].Key() == list[1].Key() || list[1].CountryCode != "BE" {
		t.Errorf("one id in two countries must be two entries: %v %v", list[0].Key(), list[1].Key())
	}
	if !slices.Contains(list[1].ExtraFields, "favouriteColour") {
		t.Errorf("unknown extraFields value dropped: %v", list[1].ExtraFields)
	}
	if list[2].LogoURL != "" || len(list[2].ExtraFields) != 0 {
		t.Errorf("n26: logo %q (want none), extraFields %v (want none)", list[2].LogoURL, list[2].ExtraFields)
	}
	if !list[3].IsForTest {
		t.Errorf("is_for_test as a string was not read")
	}
	if _, _, err := decodeInstitutions([]byte(`{"data":[]}`), testBase); !errors.Is(err, ErrBadResponse) {
		t.Errorf("an object body: %v, want ErrBadResponse", err)
	}
}

func FuzzDecodeInstitutions(f *testing.F) {
	f.Add([]byte(`[{"institution_id":"a","institution_name":"A","country_code":"DE","logoUrl":"x","extraFields":["iban"]}]`))
	f.Add([]byte(`[{"institution_id":1,"institution_name":"B","extraFields":null}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		list, _, err := decodeInstitutions(body, testBase)
		if err != nil {
			return
		}
		seen := map[Key]bool{}
		for _, in := range list {
			if in.ID == "" || in.Name == "" || seen[in.Key()] {
				t.Fatalf("bad entry kept: %+v", in)
			}
			seen[in.Key()] = true
			if in.LogoURL != "" {
				if u, err := url.Parse(in.LogoURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
					t.Fatalf("non-http logo kept: %q", in.LogoURL)
				}
			}
		}
	})
}

func TestFindLink(t *testing.T) {
	for body, want := range map[string]string{
		`{"payment_link":"https://p/1"}`:                    "https://p/1",
		`{"paymentLink":"https://p/2","url":"https://p/x"}`: "https://p/2",
		`{"data":{"redirect_url":"https://p/3"}}`:           "https://p/3",
		`{"payment_links":["ftp://no","https://p/4"]}`:      "https://p/4",
		`{"links":{"web":{"href":"https://p/5"}}}`:          "",
		`{"payment":{"links":[{"href":"https://p/6"}]}}`:    "https://p/6",
		`{"payment_link":"javascript:alert(1)","id":"7"}`:   "",
	} {
		got, err := findLink([]byte(body))
		if got != want {
			t.Errorf("findLink(%s) = %q, %v; want %q", body, got, err, want)
		}
		var lnf *LinkNotFoundError
		if want == "" && (!errors.As(err, &lnf) || len(lnf.Keys) == 0 || !errors.Is(err, ErrBadResponse)) {
			t.Errorf("findLink(%s): %v, want a LinkNotFoundError naming the keys", body, err)
		}
	}
}

func TestFindStatus(t *testing.T) {
	for body, want := range map[string]Status{
		`{"status":"COMPLETED"}`:                 StatusCompleted,
		`{"data":{"payment_status":"CANCELED"}}`: StatusCanceled,
		`{"code":"NOT_FOUND","message":"none"}`:  StatusNotFound,
		`"NOT_FOUND"`:                            StatusNotFound,
		`NOT_FOUND`:                              StatusNotFound,
		`{"status":"PARTIALLY_REFUNDED"}`:        "PARTIALLY_REFUNDED",
	} {
		got, err := findStatus([]byte(body))
		if err != nil || got != want {
			t.Errorf("findStatus(%s) = %q, %v; want %q", body, got, err, want)
		}
	}
	if Status("PARTIALLY_REFUNDED").Known() || Status("PARTIALLY_REFUNDED").Final() {
		t.Error("an unknown status must be neither known nor final")
	}
	if _, err := findStatus([]byte(`{"id":"1"}`)); !errors.Is(err, ErrBadResponse) {
		t.Errorf("no status: %v, want ErrBadResponse", err)
	}
}

// roundTrip answers every request with one status code and body.
type roundTrip struct {
	code int
	body []byte
}

func (rt roundTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: rt.code, Body: io.NopCloser(bytes.NewReader(rt.body)), Header: http.Header{}, Request: r}, nil
}

// FuzzPaymentStatus feeds arbitrary status answers to the client: it never
// panics, and a status it reports is plain enough to travel in a signed
// link, a URL and a database column.
func FuzzPaymentStatus(f *testing.F) {
	for _, seed := range []string{`{"status":"COMPLETED"}`, `"NOT_FOUND"`, "NOT_FOUND", `{"data":{"state":"ON\u0000HOLD"}}`,
		`{"code":"NOT_FOUND"}`, `{"status":"` + strings.Repeat("A", 100) + `"}`, `{"status":" \n "}`, `[]`, ``} {
		f.Add(200, []byte(seed))
	}
	f.Add(404, []byte(`{}`))
	f.Add(503, []byte(`{"code":"UNAVAILABLE"}`))
	f.Fuzz(func(t *testing.T, code int, body []byte) {
		if code < 100 || code > 599 {
			return
		}
		c, err := New("https://pis.example", "key", WithHTTPClient(&http.Client{Transport: roundTrip{code, body}}),
			WithRetry(1, time.Millisecond, time.Millisecond), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		if err != nil {
			t.Fatal(err)
		}
		ps, err := c.PaymentStatus(context.Background(), "shop1:A-1")
		if err != nil {
			return
		}
		if !plainStatus(ps.Status) {
			t.Fatalf("%d %q: status %q is not plain", code, body, ps.Status)
		}
	})
}
