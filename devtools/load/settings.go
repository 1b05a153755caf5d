package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/password"
)

// runSettings measures merchants' settings kept in the ledger: how soon a
// change made in the console of one instance shows on the pages of two others
// on the same PostgreSQL database, and what a change every second costs the
// bank page beside it (the default command's comparison with a static file,
// run while the changes go on). It builds the app and starts the three
// instances on a database of their own, made on the server -db names and
// dropped at the end.
//
//	go run ./devtools/load settings -db postgres://postgres@127.0.0.1:5432/test?sslmode=disable -changes 50 -d 20s
func runSettings(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load settings", flag.ContinueOnError)
	fs.SetOutput(stdout)
	server := fs.String("db", os.Getenv("DATABASE_URL_TEST"), "a PostgreSQL server where a database may be made (postgres://user@host:5432/db)")
	changes := fs.Int("changes", 50, "changes to time")
	duration := fs.Duration("d", 20*time.Second, "how long to load the bank page while a change is made every second")
	conns := fs.Int("c", 64, "concurrent connections on the bank page")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !strings.HasPrefix(*server, "postgres://") && !strings.HasPrefix(*server, "postgresql://") {
		return errors.New("-db: a postgres:// URL of a server where a database may be made (or DATABASE_URL_TEST)")
	}
	databaseURL, drop, err := scratchDatabase(ctx, *server)
	if err != nil {
		return err
	}
	defer drop()
	dir, err := os.MkdirTemp("", "load-settings-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// Three instances, one merchants file naming them all as the demo
	// shop's origins and an operator to make the changes.
	pw := rand.Text()
	hash, err := password.Hash(pw, password.Default)
	if err != nil {
		return err
	}
	const operator = "load@psp.example"
	// Every instance seals under one key, as a deployment's would.
	apps, err := startInstances(ctx, dir, 3, []any{map[string]string{"email": operator, "password_hash": hash}},
		map[string]string{"DATABASE_URL": databaseURL, "SETTINGS_KEYS": rand.Text() + rand.Text()})
	if err != nil {
		return err
	}
	defer stopAll(apps)
	people, err := signInAll(apps, operator, pw)
	if err != nil {
		return err
	}
	const shop = "loadshop"
	m, err := makeMerchant(people[0], shop)
	if err != nil {
		return err
	}

	seen, err := timeChanges(people, shop, *changes)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "settings: %d changes made on one instance, each timed until two others' pages show it (PostgreSQL, poll every 250 ms)\n", *changes)
	printLive(stdout, seen)
	// Looks published on the first instance, each timed until a shopper's
	// page on each other instance wears it.
	published, err := timePublishes(people[0], apps[1:], m, *changes)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "branding: %d looks published on one instance, each timed until a shopper's page on two others wears it\n", *changes)
	printLive(stdout, published)
	return bankPageUnderChanges(ctx, people[0], shop, []string{"-url", apps[0].base, "-d", duration.String(), "-c", fmt.Sprint(*conns)}, stdout)
}

// signInAll signs email in to every instance's console.
func signInAll(apps []*appProcess, email, pw string) ([]*consolePerson, error) {
	people := make([]*consolePerson, len(apps))
	for i, a := range apps {
		var err error
		if people[i], err = signInAs(a.base, email, pw); err != nil {
			return nil, err
		}
	}
	return people, nil
}

// makeMerchant makes merchant id in p's console and returns it with the
// first link key, which the page shows once.
func makeMerchant(p *consolePerson, id string) (*merchant.Merchant, error) {
	_, page, err := p.postPage("/console/merchants", url.Values{"id": {id}, "name": {"Load shop"}, "return_origins": {"https://loadshop.example"}})
	if err != nil {
		return nil, err
	}
	kid, secret := shownOnce.FindStringSubmatch(page), shownSecret.FindStringSubmatch(page)
	if kid == nil || secret == nil {
		return nil, errors.New("the new merchant's link key is not on the page")
	}
	return &merchant.Merchant{ID: id, LinkKeys: map[string]string{kid[1]: secret[1]}}, nil
}

// timeChanges renames shop n times as the first of people, and times each
// change from its answer until every other one's settings page shows it.
func timeChanges(people []*consolePerson, shop string, n int) ([]time.Duration, error) {
	var seen []time.Duration
	for i := range n {
		name := fmt.Sprintf("Load shop %d", i+1)
		if err := people[0].rename(shop, name); err != nil {
			return nil, err
		}
		answered := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failed error
		for _, p := range people[1:] {
			wg.Go(func() {
				took, shown := p.awaitName(shop, name, answered)
				mu.Lock()
				defer mu.Unlock()
				if !shown {
					failed = fmt.Errorf("change %d not shown on %s after 30 s", i+1, p.base)
					return
				}
				seen = append(seen, took)
			})
		}
		wg.Wait()
		if failed != nil {
			return nil, failed
		}
	}
	return seen, nil
}

// awaitName reads shop's settings page until it shows name, and says how
// long after answered it did; false after 30 s.
func (p *consolePerson) awaitName(shop, name string, answered time.Time) (time.Duration, bool) {
	for {
		body, err := p.get("/console/settings?merchant=" + shop)
		if err == nil && strings.Contains(body, `value="`+name+`"`) {
			return time.Since(answered), true
		}
		if time.Since(answered) > 30*time.Second {
			return 0, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// printLive says how soon a change was live on another instance.
func printLive(stdout io.Writer, seen []time.Duration) {
	s := sample{latencies: seen}
	fmt.Fprintf(stdout, "  live on another instance: p50 %s, p99 %s, max %s (%d pages)\n",
		s.pct(0.5).Round(time.Millisecond), s.pct(0.99).Round(time.Millisecond), s.pct(1).Round(time.Millisecond), len(seen))
}

// bankPageUnderChanges runs the bank page's comparison with its arguments
// bankPage, first alone, then while p renames shop every second: the same
// run, so that the machine's state is the same for both.
func bankPageUnderChanges(ctx context.Context, p *consolePerson, shop string, bankPage []string, stdout io.Writer) error {
	fmt.Fprintf(stdout, "bank page with no settings change:\n")
	if err := run(ctx, bankPage, stdout); err != nil {
		return err
	}
	churn, stop := context.WithCancel(ctx)
	var changed int
	var churned sync.WaitGroup
	churned.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-churn.Done():
				return
			case <-tick.C:
			}
			if err := p.rename(shop, fmt.Sprintf("Churn %d", changed)); err == nil {
				changed++
			}
		}
	})
	fmt.Fprintf(stdout, "bank page with a settings change every second:\n")
	err := run(ctx, bankPage, stdout)
	stop()
	churned.Wait()
	fmt.Fprintf(stdout, "  settings changes during the run: %d\n", changed)
	return err
}

// shownOnce and shownSecret read a new merchant's first link key off the
// page that shows it once.
var (
	shownOnce   = regexp.MustCompile(`data-testid="new-link-key-id">([^<]+)<`)
	shownSecret = regexp.MustCompile(`data-testid="new-link-key-secret">([^<]+)<`)
	draftField  = regexp.MustCompile(`name="draft_version" value="([0-9]+)"`)
	liveField   = regexp.MustCompile(`name="live_version" value="([0-9]+)"`)
)

// timePublishes publishes n looks of m as p, each a new primary colour,
// and times each from the publish's answer until a shopper's page of m on
// every one of others wears it.
func timePublishes(p *consolePerson, others []*appProcess, m *merchant.Merchant, n int) ([]time.Duration, error) {
	var seen []time.Duration
	client := &http.Client{Timeout: 10 * time.Second}
	for i := range n {
		colour := fmt.Sprintf("#%02X2040", 0x20+i%0xC0)
		body, err := p.get("/console/branding?merchant=" + m.ID)
		if err != nil {
			return nil, err
		}
		draft, live := draftField.FindStringSubmatch(body), liveField.FindStringSubmatch(body)
		if draft == nil || live == nil {
			return nil, errors.New("the branding page has no versions")
		}
		res, err := p.post("/console/branding/publish", url.Values{"merchant": {m.ID}, "draft_version": {draft[1]},
			"live_version": {live[1]}, "primaryColor": {colour}, "anyway": {"1"}})
		if err != nil {
			return nil, err
		}
		if res.StatusCode != http.StatusSeeOther {
			return nil, fmt.Errorf("publishing look %d: %d", i+1, res.StatusCode)
		}
		answered := time.Now()
		for j, other := range others {
			for {
				// A new order each time: the shopper's first page, in the
				// look the instance serves now.
				l := order.Link{Order: order.Order{ID: fmt.Sprintf("LOOK-%d-%d-%d", i, j, time.Now().UnixNano()), Amount: "1.00",
					Currency: "EUR", ReturnURL: "https://loadshop.example/", KID: m.NewestKID()}, TTL: time.Hour}
				link, err := l.URL(other.base, m, time.Now())
				if err != nil {
					return nil, err
				}
				page, err := client.Get(link)
				if err != nil {
					return nil, err
				}
				html, _ := io.ReadAll(page.Body)
				page.Body.Close()
				if strings.Contains(string(html), "--color-primary:"+colour) {
					seen = append(seen, time.Since(answered))
					break
				}
				if time.Since(answered) > 30*time.Second {
					return nil, fmt.Errorf("look %d not worn on %s after 30 s", i+1, other.base)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	return seen, nil
}

// scratchDatabase makes a database of its own on the server and returns
// its URL and how to drop it.
func scratchDatabase(ctx context.Context, server string) (string, func(), error) {
	admin, err := sql.Open("pgx", server)
	if err != nil {
		return "", nil, err
	}
	name := "load_settings_" + strings.ToLower(rand.Text()[:10])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("-db: making a database: %w", err)
	}
	u, err := url.Parse(server)
	if err != nil {
		admin.Close()
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close()
	}, nil
}

// consolePerson is someone signed in to one instance's console.
type consolePerson struct {
	base   string
	client *http.Client
	csrf   string
}

var (
	csrfField    = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)
	versionField = regexp.MustCompile(`name="version" value="([0-9]+)"`)
)

func signInAs(base, email, pw string) (*consolePerson, error) {
	jar, _ := cookiejar.New(nil)
	p := &consolePerson{base: base, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	body, err := p.get("/console/login")
	if err != nil {
		return nil, err
	}
	token := csrfField.FindStringSubmatch(body)
	if token == nil {
		return nil, errors.New("the sign-in page has no form token")
	}
	res, err := p.client.PostForm(base+"/console/login", url.Values{"email": {email}, "password": {pw}, "csrf": {token[1]}})
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("signing in on %s: %d", base, res.StatusCode)
	}
	if body, err = p.get("/console"); err != nil {
		return nil, err
	}
	if token = csrfField.FindStringSubmatch(body); token == nil {
		return nil, errors.New("the console has no form token")
	}
	p.csrf = token[1]
	return p, nil
}

func (p *consolePerson) get(path string) (string, error) {
	res, err := p.client.Get(p.base + path)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("%s: %d", path, res.StatusCode)
	}
	return string(b), err
}

func (p *consolePerson) post(path string, form url.Values) (*http.Response, error) {
	res, _, err := p.postPage(path, form)
	return res, err
}

// postPage is post with the page answered.
func (p *consolePerson) postPage(path string, form url.Values) (*http.Response, string, error) {
	form.Set("csrf", p.csrf)
	res, err := p.client.PostForm(p.base+path, form)
	if err != nil {
		return nil, "", err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode >= 400 {
		return res, "", fmt.Errorf("POST %s: %d", path, res.StatusCode)
	}
	return res, string(body), nil
}

// rename saves a merchant's name from the settings form's current version.
func (p *consolePerson) rename(merchantID, name string) error {
	body, err := p.get("/console/settings?merchant=" + merchantID)
	if err != nil {
		return err
	}
	version := versionField.FindStringSubmatch(body)
	if version == nil {
		return errors.New("the settings page has no version")
	}
	_, err = p.post("/console/settings", url.Values{"merchant": {merchantID}, "version": {version[1]}, "name": {name},
		"return_origins": {"https://loadshop.example"}})
	return err
}
