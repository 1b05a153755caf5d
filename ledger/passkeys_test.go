package ledger_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
)

func addPerson(t *testing.T, l *ledger.Ledger, email string) {
	t.Helper()
	if _, err := l.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		return tx.PutPerson(ctx, ledger.PersonRow{Email: email, PasswordHash: "x", Managed: ledger.ManagedByConsole})
	}); err != nil {
		t.Fatal(err)
	}
}

func addPasskey(l *ledger.Ledger, email, id, name string) error {
	_, err := l.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		return tx.AddPasskey(ctx, ledger.Passkey{ID: id, Email: email, UserHandle: "h", Name: name, Credential: "{}"}, "Firefox/Linux")
	})
	return err
}

// Two passkeys added at once from two browsers are made each for a user
// handle of its own; the one kept second could never sign in (the
// person's passkeys answer for the first one's handle), so it is refused.
func TestAPersonsPasskeysShareOneUserHandle(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		addPerson(t, l, "ben@shop.example")
		if err := addPasskey(l, "ben@shop.example", "cred-ben-1", "Laptop"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
			return tx.AddPasskey(ctx, ledger.Passkey{ID: "cred-ben-2", Email: "ben@shop.example", UserHandle: "another", Name: "Phone", Credential: "{}"}, "Safari/iOS")
		}); !errors.Is(err, ledger.ErrPasskeyUser) {
			t.Errorf("a passkey made for another user handle than the person's first: %v", err)
		}
		if err := addPasskey(l, "ben@shop.example", "cred-ben-3", "Phone"); err != nil {
			t.Errorf("a second passkey for the same user handle: %v", err)
		}
	})
}

func TestAPersonHasAtMostTenPasskeysEachNamedOnce(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		addPerson(t, l, "ana@shop.example")
		before, _ := l.SettingsVersion(ctx)
		for i := range ledger.MaxPasskeys {
			if err := addPasskey(l, "ana@shop.example", fmt.Sprint("cred-", i), fmt.Sprint("Key ", i)); err != nil {
				t.Fatal(err)
			}
		}
		if after, _ := l.SettingsVersion(ctx); after != before+ledger.MaxPasskeys {
			t.Errorf("settings version %d → %d: every instance must learn of each passkey", before, after)
		}
		if err := addPasskey(l, "ana@shop.example", "cred-x", "One more"); !errors.Is(err, ledger.ErrTooManyPasskeys) {
			t.Errorf("an eleventh passkey: %v", err)
		}
		// A passkey is removed by its ref, never by its credential id: that
		// stays out of the console's addresses.
		first, err := l.Passkey(ctx, "cred-0")
		if err != nil || first.Ref == "" || first.Ref == first.ID {
			t.Fatalf("the first passkey's ref %q, %v", first.Ref, err)
		}
		if _, err := l.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
			_, err := tx.RemovePasskey(ctx, "ana@shop.example", "cred-1")
			return err
		}); !errors.Is(err, ledger.ErrNoPasskey) {
			t.Errorf("a passkey removed by its credential id: %v", err)
		}
		if _, err := l.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
			_, err := tx.RemovePasskey(ctx, "ana@shop.example", first.Ref)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := addPasskey(l, "ana@shop.example", "cred-y", "key 1"); !errors.Is(err, ledger.ErrPasskeyName) {
			t.Errorf("a name the person has (in another case): %v", err)
		}
		// A credential kept already is refused by name, the person's or
		// another's.
		addPerson(t, l, "bo@shop.example")
		if err := addPasskey(l, "bo@shop.example", "cred-2", "Bo's key"); !errors.Is(err, ledger.ErrPasskeyTaken) {
			t.Errorf("another person's credential id: %v", err)
		}
		snap, err := l.Settings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.People) != 2 || snap.People[0].Passkeys != ledger.MaxPasskeys-1 || snap.People[1].Passkeys != 0 {
			t.Errorf("the settings count %+v passkeys, want %d", snap.People, ledger.MaxPasskeys-1)
		}
		events, err := l.PasskeyEvents(ctx, "ana@shop.example", 2)
		if err != nil || len(events) != 2 || events[0].Kind != ledger.PasskeyRemoved || events[0].Name != "Key 0" || events[1].Kind != ledger.PasskeyAdded {
			t.Errorf("events %+v, %v", events, err)
		}
		// A person removed takes their passkeys along.
		if _, err := l.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error { return tx.RemovePerson(ctx, "ana@shop.example") }); err != nil {
			t.Fatal(err)
		}
		if list, err := l.Passkeys(ctx, "ana@shop.example"); err != nil || len(list) != 0 {
			t.Errorf("a removed person's passkeys: %v, %v", list, err)
		}
	})
}

func TestACounterThatDoesNotMoveForwardSuspendsThePasskeyEvenAtOnce(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		addPerson(t, l, "ana@shop.example")
		if err := addPasskey(l, "ana@shop.example", "cred", "Laptop"); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		// A copy's counter is behind the real one's (or the real one's
		// behind the copy's): the passkey is suspended, and neither signs
		// in again, however far its counter goes.
		for _, step := range []struct {
			count uint32
			use   ledger.PasskeyUse
		}{{5, ledger.PasskeyTaken}, {6, ledger.PasskeyTaken}, {4, ledger.PasskeySuspendedNow}, {7, ledger.PasskeyWasSuspended}, {100, ledger.PasskeyWasSuspended}} {
			use, err := l.UsePasskey(ctx, "cred", step.count, now)
			if err != nil || use != step.use {
				t.Errorf("counter %d: %v, %v; want %v", step.count, use, err, step.use)
			}
		}
		p, err := l.Passkey(ctx, "cred")
		if err != nil || p.SignCount != 6 || p.Suspended.IsZero() {
			t.Errorf("passkey after: %+v, %v", p, err)
		}
		// Ten copies of one assertion at once: one is taken, the next
		// suspends it, the others find it suspended.
		if err := addPasskey(l, "ana@shop.example", "key", "Key"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		uses := map[ledger.PasskeyUse]int{}
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				use, err := l.UsePasskey(ctx, "key", 7, now)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				uses[use]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if uses[ledger.PasskeyTaken] != 1 || uses[ledger.PasskeySuspendedNow] != 1 {
			t.Errorf("one assertion sent 10 times at once: %v, want 1 taken and 1 suspending", uses)
		}
		// An authenticator that keeps no counter (0 each time) signs in.
		addPasskey(l, "ana@shop.example", "synced", "Phone")
		for range 2 {
			if use, err := l.UsePasskey(ctx, "synced", 0, now); use != ledger.PasskeyTaken || err != nil {
				t.Errorf("a counterless passkey: %v, %v", use, err)
			}
		}
		if fresh, _ := l.PasskeySeenOn(ctx, "cred", "ana@shop.example", "Firefox/Linux", now); fresh {
			t.Error("the device a passkey was made on counts as new")
		}
		if fresh, _ := l.PasskeySeenOn(ctx, "cred", "ana@shop.example", "Safari/iPhone", now); !fresh {
			t.Error("a first sign-in from an iPhone is not new")
		}
	})
}

func TestASuspendedPasskeysSessionsEndOnEveryInstance(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		addPerson(t, l, "ana@shop.example")
		addPasskey(l, "ana@shop.example", "cred", "Laptop")
		addPasskey(l, "ana@shop.example", "other", "Phone")
		laptop, _ := l.Passkey(ctx, "cred")
		phone, _ := l.Passkey(ctx, "other")
		now := time.Now()
		for id, ref := range map[string]string{"by-laptop": laptop.Ref, "by-laptop-2": laptop.Ref, "by-phone": phone.Ref, "by-password": ""} {
			if err := l.StartSession(ctx, ledger.Session{ID: id, Email: "ana@shop.example", Created: now, Ends: now.Add(time.Hour), Passkey: ref}); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.EndSessionsOfPasskey(ctx, laptop.Ref, now); err != nil {
			t.Fatal(err)
		}
		for id, ended := range map[string]bool{"by-laptop": true, "by-laptop-2": true, "by-phone": false, "by-password": false} {
			if out, err := l.IsSignedOut(ctx, id); err != nil || out != ended {
				t.Errorf("session %s ended: %v, %v; want %v", id, out, err, ended)
			}
		}
	})
}

func TestACeremonyIsTakenOnceBeforeItExpires(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		now := time.Now()
		c := ledger.Ceremony{Key: "k1", Kind: ledger.CeremonySignIn, Data: `{"challenge":"x"}`, Expires: now.Add(5 * time.Minute)}
		if err := l.BeginCeremony(ctx, c, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := l.TakeCeremony(ctx, "k1", ledger.CeremonyRegister, now); !errors.Is(err, ledger.ErrNoCeremony) {
			t.Errorf("a sign-in's ceremony taken as a registration: %v", err)
		}
		// Taking it as the wrong kind spent it too.
		if _, err := l.TakeCeremony(ctx, "k1", ledger.CeremonySignIn, now); !errors.Is(err, ledger.ErrNoCeremony) {
			t.Errorf("a ceremony taken twice: %v", err)
		}
		l.BeginCeremony(ctx, c, "")
		got, err := l.TakeCeremony(ctx, "k1", ledger.CeremonySignIn, now)
		if err != nil || got.Data != c.Data {
			t.Fatalf("took %+v, %v", got, err)
		}
		if _, err := l.TakeCeremony(ctx, "k1", ledger.CeremonySignIn, now); !errors.Is(err, ledger.ErrNoCeremony) {
			t.Errorf("a ceremony taken twice: %v", err)
		}
		l.BeginCeremony(ctx, c, "")
		if _, err := l.TakeCeremony(ctx, "k1", ledger.CeremonySignIn, now.Add(5*time.Minute+time.Second)); !errors.Is(err, ledger.ErrNoCeremony) {
			t.Errorf("a ceremony past its 5 minutes: %v", err)
		}
		// A new ceremony of the same session replaces its last.
		l.BeginCeremony(ctx, c, "")
		l.BeginCeremony(ctx, ledger.Ceremony{Key: "k2", Kind: ledger.CeremonySignIn, Data: "{}", Expires: now.Add(time.Minute)}, "k1")
		if _, err := l.TakeCeremony(ctx, "k1", ledger.CeremonySignIn, now); !errors.Is(err, ledger.ErrNoCeremony) {
			t.Errorf("a replaced ceremony: %v", err)
		}
	})
}

func TestOperatorsPasskeysIsASetting(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		if snap, err := l.Settings(ctx); err != nil || snap.OperatorsPasskeys {
			t.Fatalf("a new ledger requires passkeys of operators: %v", err)
		}
		before, _ := l.SettingsVersion(ctx)
		if _, err := l.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error { return tx.SetOperatorsPasskeys(ctx, true) }); err != nil {
			t.Fatal(err)
		}
		snap, err := l.Settings(ctx)
		if err != nil || !snap.OperatorsPasskeys || snap.Version != before+1 {
			t.Errorf("after turning it on: %v at version %d (from %d), %v", snap.OperatorsPasskeys, snap.Version, before, err)
		}
	})
}
