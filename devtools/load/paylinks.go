package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/paybybank/checkout/order"
)

// runPayLinks measures opening a payment link (/l/{id}) against opening a
// signed link (/checkout?…), the two doors of a checkout, in turns within
// one run: a single-use link opened again and again against a signed link
// of one order opened again and again, and a reusable link (each opening a
// new order) against signed links of a new order each time. It builds and
// starts the app, makes the two payment links through the API, and prints
// each side's throughput and p99 and their ratios.
//
//	go run ./devtools/load paylinks -c 16 -d 40s
func runPayLinks(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load paylinks", flag.ContinueOnError)
	fs.SetOutput(stdout)
	conns := fs.Int("c", 16, "concurrent connections")
	duration := fs.Duration("d", 40*time.Second, "how long to run, all sides together")
	db := fs.String("db", "", "the app's DATABASE_URL (default: an SQLite file of the run)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "load-paylinks-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env := map[string]string{}
	if *db != "" {
		env["DATABASE_URL"] = *db
	}
	app, err := startApp(ctx, dir, "", env)
	if err != nil {
		return err
	}
	defer app.stop()
	client := &http.Client{
		Timeout:       30 * time.Second,
		Transport:     &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	sides, err := doorsToCompare(ctx, client, app.base)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "paylinks: %d connections for %s, %d turns of each side\n", *conns, *duration, rounds)
	turn := *duration / time.Duration(len(sides)*rounds)
	for range rounds {
		for i := range sides {
			sides[i].got.add(measureEach(ctx, *conns, turn, sides[i].one))
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	for _, s := range sides {
		fmt.Fprintf(stdout, "  %-24s %s\n", s.name+":", s.got)
	}
	ratio := func(a, b sample) string {
		return fmt.Sprintf("throughput %.2f of the signed link's, p99 %.2fx", a.throughput()/b.throughput(),
			float64(a.pct(0.99))/float64(b.pct(0.99)))
	}
	fmt.Fprintf(stdout, "  single-use against one order: %s\n", ratio(sides[1].got, sides[0].got))
	fmt.Fprintf(stdout, "  reusable against new orders:  %s\n", ratio(sides[3].got, sides[2].got))
	return nil
}

// door is one way into a checkout, opened again and again in its turns.
type door struct {
	name string
	one  func(ctx context.Context, worker, n int) error
	got  sample
}

// doorsToCompare makes a single-use and a reusable payment link through
// the API and returns the four doors in the order they are compared: a
// signed link of one order and the single-use link, then signed links of
// a new order each time and the reusable link.
func doorsToCompare(ctx context.Context, client *http.Client, base string) ([]door, error) {
	run := time.Now().Unix()
	single, err := makePaymentLink(ctx, client, base, fmt.Sprintf(`{"amount":"49.90","description":"Load single","reference":"LS-%d"}`, run))
	if err != nil {
		return nil, err
	}
	reusable, err := makePaymentLink(ctx, client, base, fmt.Sprintf(`{"amount":"49.90","description":"Load reusable","reference":"LR-%d","kind":"reusable"}`, run))
	if err != nil {
		return nil, err
	}
	signedOne, err := order.DemoLink(base, order.Order{ID: fmt.Sprintf("LO-%d", run), Amount: "49.90"}, time.Hour, time.Now(), nil)
	if err != nil {
		return nil, err
	}
	fixed := func(u string) func(int, int) (string, error) { return func(int, int) (string, error) { return u, nil } }
	signedNew := func(worker, n int) (string, error) {
		return order.DemoLink(base, order.Order{ID: fmt.Sprintf("LN-%d-%d-%d", run, worker, n), Amount: "49.90"}, time.Hour, time.Now(), nil)
	}
	return []door{
		{name: "signed link, one order", one: opens(client, fixed(signedOne))},
		{name: "single-use /l/{id}", one: opens(client, fixed(single))},
		{name: "signed link, new order", one: opens(client, signedNew)},
		{name: "reusable /l/{id}", one: opens(client, fixed(reusable))},
	}, nil
}

// opens is one opening of the address u gives a worker's n-th run: it
// must answer 303 to a checkout.
func opens(client *http.Client, u func(worker, n int) (string, error)) func(ctx context.Context, worker, n int) error {
	return func(ctx context.Context, worker, n int) error {
		target, err := u(worker, n)
		if err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/c/") {
			return fmt.Errorf("load: %s answered %d", target, res.StatusCode)
		}
		return nil
	}
}

// makePaymentLink makes a payment link through the API and returns its
// address.
func makePaymentLink(ctx context.Context, client *http.Client, base, body string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/payment-links", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+loadAPIToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var link struct {
		URL string `json:"url"`
	}
	if err := json.NewDecoder(res.Body).Decode(&link); err != nil || res.StatusCode != http.StatusCreated || link.URL == "" {
		return "", errors.Join(fmt.Errorf("making a payment link: HTTP %d", res.StatusCode), err)
	}
	return link.URL, nil
}
