package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// migrations are the schema's steps, applied in order, each once and inside
// a transaction. Append; never edit one that has shipped. The SQL is the
// same on SQLite and PostgreSQL: times are unix milliseconds, booleans are
// states, and the rules live in the schema (keys, checks, the partial unique
// index), so that a bug in Go cannot write a second payable attempt.
var migrations = []string{
	// 1: orders and their attempts at the provider.
	`CREATE TABLE orders (
		merchant_id TEXT NOT NULL,
		order_id    TEXT NOT NULL,
		amount      TEXT NOT NULL,
		currency    TEXT NOT NULL,
		return_url  TEXT NOT NULL,
		created_at  BIGINT NOT NULL,
		updated_at  BIGINT NOT NULL,
		PRIMARY KEY (merchant_id, order_id)
	);
	CREATE TABLE attempts (
		upstream_id TEXT PRIMARY KEY,
		merchant_id TEXT NOT NULL,
		order_id    TEXT NOT NULL,
		seq         INTEGER NOT NULL CHECK (seq >= 1),
		amount      TEXT NOT NULL,
		currency    TEXT NOT NULL,
		bank_id     TEXT NOT NULL,
		country     TEXT NOT NULL,
		state       TEXT NOT NULL CHECK (state IN ('creating', 'open', 'unknown', 'orphaned', 'refused', 'final')),
		link        TEXT NOT NULL DEFAULT '',
		status      TEXT NOT NULL DEFAULT '',
		created_at  BIGINT NOT NULL,
		updated_at  BIGINT NOT NULL,
		UNIQUE (merchant_id, order_id, seq),
		FOREIGN KEY (merchant_id, order_id) REFERENCES orders (merchant_id, order_id)
	);
	CREATE UNIQUE INDEX attempts_one_live ON attempts (merchant_id, order_id)
		WHERE state IN ('creating', 'open', 'unknown');
	CREATE INDEX orders_updated ON orders (merchant_id, updated_at);`,

	// 2: following attempts until final (leases), and the outbox of events
	// to merchants with each delivery.
	`ALTER TABLE orders ADD COLUMN status TEXT NOT NULL DEFAULT 'NOT_FOUND';
	ALTER TABLE attempts ADD COLUMN next_check_at BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE attempts ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
	ALTER TABLE attempts ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
	CREATE INDEX attempts_due ON attempts (next_check_at) WHERE state IN ('open', 'unknown');
	CREATE INDEX orders_by_status ON orders (merchant_id, status, updated_at);
	CREATE TABLE events (
		id          TEXT PRIMARY KEY,
		merchant_id TEXT NOT NULL,
		order_id    TEXT NOT NULL,
		type        TEXT NOT NULL,
		body        TEXT NOT NULL,
		created_at  BIGINT NOT NULL,
		delivery    TEXT NOT NULL DEFAULT 'pending' CHECK (delivery IN ('pending', 'delivered', 'failed')),
		tries       INTEGER NOT NULL DEFAULT 0,
		next_try_at BIGINT NOT NULL,
		lease_owner TEXT NOT NULL DEFAULT '',
		lease_until BIGINT NOT NULL DEFAULT 0,
		FOREIGN KEY (merchant_id, order_id) REFERENCES orders (merchant_id, order_id)
	);
	CREATE INDEX events_due ON events (merchant_id, next_try_at) WHERE delivery = 'pending';
	CREATE INDEX events_by_merchant ON events (merchant_id, created_at, id);
	CREATE TABLE deliveries (
		event_id    TEXT NOT NULL REFERENCES events (id),
		try         INTEGER NOT NULL CHECK (try >= 1),
		at          BIGINT NOT NULL,
		code        INTEGER NOT NULL,
		duration_ms BIGINT NOT NULL,
		error       TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (event_id, try)
	);`,

	// 3: the banks shoppers paid with most, per country, for the bank page.
	`CREATE INDEX attempts_completed ON attempts (country, updated_at) WHERE status = 'COMPLETED';`,

	// 4: short codes for the address a desktop's QR code carries to the
	// shopper's phone; target is the checkout's address, whose token is
	// sealed (encrypted with the app's key), kept minutes.
	`CREATE TABLE handoffs (
		code       TEXT PRIMARY KEY,
		target     TEXT NOT NULL,
		expires_at BIGINT NOT NULL
	);
	CREATE INDEX handoffs_expiry ON handoffs (expires_at);`,

	// 5: what the console counts and shows. Orders learn when their link was
	// first used (opened), their first payment handed out (sent), first opened
	// at the bank (began) and paid, and the bank of their current payment;
	// attempts keep every status they passed through. Rollups by the hour let
	// the overview sum a few hundred rows instead of scanning orders:
	// funnel_hourly counts orders by the hour they were opened, bank_hourly
	// and paid_times count attempts by the hour they were made. Each change
	// inserts a row of its own into count_changes, in its transaction;
	// FoldCounts adds them up. Rows of the past are counted as well as their
	// last status tells. The console's sign-outs and refused sign-ins are kept
	// here too, so that every instance knows them.
	`ALTER TABLE orders ADD COLUMN opened_at BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE orders ADD COLUMN sent_at BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE orders ADD COLUMN began_at BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE orders ADD COLUMN paid_at BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE orders ADD COLUMN bank_id TEXT NOT NULL DEFAULT '';
	ALTER TABLE orders ADD COLUMN country TEXT NOT NULL DEFAULT '';
	ALTER TABLE attempts ADD COLUMN began_at BIGINT NOT NULL DEFAULT 0;
	CREATE TABLE attempt_history (
		id          {{ID}},
		upstream_id TEXT NOT NULL REFERENCES attempts (upstream_id),
		at          BIGINT NOT NULL,
		state       TEXT NOT NULL,
		status      TEXT NOT NULL
	);
	CREATE INDEX attempt_history_by_attempt ON attempt_history (upstream_id, at);
	CREATE TABLE funnel_hourly (
		merchant_id TEXT NOT NULL,
		hour        BIGINT NOT NULL,
		opened      BIGINT NOT NULL DEFAULT 0,
		sent        BIGINT NOT NULL DEFAULT 0,
		began       BIGINT NOT NULL DEFAULT 0,
		paid        BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY (merchant_id, hour)
	);
	CREATE TABLE bank_hourly (
		merchant_id TEXT NOT NULL,
		hour        BIGINT NOT NULL,
		country     TEXT NOT NULL,
		bank_id     TEXT NOT NULL,
		started     BIGINT NOT NULL DEFAULT 0,
		completed   BIGINT NOT NULL DEFAULT 0,
		canceled    BIGINT NOT NULL DEFAULT 0,
		abandoned   BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY (merchant_id, hour, country, bank_id)
	);
	CREATE TABLE paid_times (
		merchant_id TEXT NOT NULL,
		hour        BIGINT NOT NULL,
		bucket      INTEGER NOT NULL,
		n           BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY (merchant_id, hour, bucket)
	);
	CREATE TABLE count_changes (
		merchant_id  TEXT NOT NULL,
		funnel_hour  BIGINT NOT NULL,
		attempt_hour BIGINT NOT NULL,
		country      TEXT NOT NULL,
		bank_id      TEXT NOT NULL,
		opened       BIGINT NOT NULL,
		sent         BIGINT NOT NULL,
		began        BIGINT NOT NULL,
		paid         BIGINT NOT NULL,
		started      BIGINT NOT NULL,
		completed    BIGINT NOT NULL,
		canceled     BIGINT NOT NULL,
		abandoned    BIGINT NOT NULL,
		bucket       INTEGER NOT NULL,
		paid_times   BIGINT NOT NULL
	);
	UPDATE orders SET opened_at = created_at;
	UPDATE attempts SET began_at = updated_at WHERE state IN ('open', 'final') AND status NOT IN ('', 'NOT_FOUND', 'CANCELED');
	UPDATE orders SET
		sent_at = COALESCE((SELECT MIN(a.created_at) FROM attempts a WHERE a.merchant_id = orders.merchant_id AND a.order_id = orders.order_id AND a.state IN ('open', 'final')), 0),
		began_at = COALESCE((SELECT MIN(a.began_at) FROM attempts a WHERE a.merchant_id = orders.merchant_id AND a.order_id = orders.order_id AND a.began_at > 0), 0),
		paid_at = COALESCE((SELECT MIN(a.updated_at) FROM attempts a WHERE a.merchant_id = orders.merchant_id AND a.order_id = orders.order_id
			AND a.status = 'COMPLETED' AND a.amount = orders.amount AND a.currency = orders.currency), 0),
		bank_id = COALESCE((SELECT a.bank_id FROM attempts a WHERE a.merchant_id = orders.merchant_id AND a.order_id = orders.order_id AND a.state IN ('open', 'final') ORDER BY a.seq DESC LIMIT 1), ''),
		country = COALESCE((SELECT a.country FROM attempts a WHERE a.merchant_id = orders.merchant_id AND a.order_id = orders.order_id AND a.state IN ('open', 'final') ORDER BY a.seq DESC LIMIT 1), '');
	INSERT INTO funnel_hourly (merchant_id, hour, opened, sent, began, paid)
		SELECT merchant_id, opened_at / 3600000 * 3600000, COUNT(*),
			SUM(CASE WHEN sent_at > 0 THEN 1 ELSE 0 END), SUM(CASE WHEN began_at > 0 THEN 1 ELSE 0 END), SUM(CASE WHEN paid_at > 0 THEN 1 ELSE 0 END)
		FROM orders GROUP BY merchant_id, opened_at / 3600000 * 3600000;
	INSERT INTO bank_hourly (merchant_id, hour, country, bank_id, started, completed, canceled, abandoned)
		SELECT merchant_id, created_at / 3600000 * 3600000, country, bank_id, COUNT(*),
			SUM(CASE WHEN state = 'final' AND status = 'COMPLETED' THEN 1 ELSE 0 END),
			SUM(CASE WHEN state = 'final' AND status = 'CANCELED' AND began_at > 0 THEN 1 ELSE 0 END),
			SUM(CASE WHEN state = 'final' AND status <> 'COMPLETED' AND began_at = 0 THEN 1 ELSE 0 END)
		FROM attempts WHERE state IN ('open', 'final') GROUP BY merchant_id, created_at / 3600000 * 3600000, country, bank_id;
	CREATE INDEX orders_recent ON orders (updated_at);
	CREATE INDEX orders_by_bank ON orders (merchant_id, bank_id, updated_at);
	CREATE INDEX orders_by_country ON orders (merchant_id, country, updated_at);
	CREATE INDEX orders_by_id ON orders (order_id{{C}}, merchant_id);
	CREATE INDEX events_by_order ON events (merchant_id, order_id, created_at);
	CREATE INDEX events_pending ON events (merchant_id, created_at) WHERE delivery = 'pending';
	CREATE INDEX events_failed ON events (merchant_id) WHERE delivery = 'failed';
	CREATE INDEX deliveries_at ON deliveries (at);
	CREATE INDEX deliveries_failed ON deliveries (at) WHERE code < 200 OR code > 299;
	CREATE TABLE console_signouts (
		session_id TEXT PRIMARY KEY,
		until      BIGINT NOT NULL
	);
	CREATE TABLE console_failures (
		key TEXT NOT NULL,
		at  BIGINT NOT NULL
	);
	CREATE INDEX console_failures_by_key ON console_failures (key, at);`,

	// 6: bank health: how each bank's payments end, over every merchant. The
	// last hour is read off attempts by when they were made; longer windows
	// sum bank_hourly over merchants, and the times to pay per bank come in
	// bank_paid_times, folded from count_changes like the console's rollups.
	// Past payments have no time to pay here: the rollup counts from this
	// version on.
	`CREATE INDEX attempts_created ON attempts (created_at);
	CREATE INDEX bank_hourly_by_hour ON bank_hourly (hour);
	CREATE TABLE bank_paid_times (
		hour    BIGINT NOT NULL,
		country TEXT NOT NULL,
		bank_id TEXT NOT NULL,
		bucket  INTEGER NOT NULL,
		n       BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY (hour, country, bank_id, bucket)
	);`,

	// 7: following at scale. Attempts are read in tiers, fresh ones first; the
	// deployment's status reads come out of one token bucket, so that
	// FOLLOW_RATE holds for all instances together; events are removed by age
	// in batches, which wants them by age.
	`ALTER TABLE attempts ADD COLUMN follow_tier INTEGER NOT NULL DEFAULT 0;
	CREATE INDEX attempts_due_by_tier ON attempts (follow_tier, next_check_at) WHERE state IN ('open', 'unknown');
	CREATE TABLE follow_budget (
		id     INTEGER PRIMARY KEY CHECK (id = 1),
		tokens DOUBLE PRECISION NOT NULL,
		at     BIGINT NOT NULL
	);
	INSERT INTO follow_budget (id, tokens, at) VALUES (1, 0, 0);
	CREATE INDEX events_created ON events (created_at);`,

	// 8: funnel truth. A shopper's return through the return URL now marks the
	// payment as begun at the bank (ReturnedFromBank). Before, returns were
	// not recorded; what the ledger can know is the status history: a payment
	// handed out that ever showed a status past NOT_FOUND but a cancellation
	// was opened at the bank, even if version 5 saw only its last status.
	// Those are marked begun when they were, and their counts moved: abandoned
	// to cancelled at the bank, and the order's funnel step Began.
	`CREATE TABLE opened_at_bank AS
		SELECT a.upstream_id, a.merchant_id, a.order_id, a.country, a.bank_id, a.created_at, a.state, a.status,
			(SELECT MIN(h.at) FROM attempt_history h WHERE h.upstream_id = a.upstream_id AND h.status NOT IN ('', 'NOT_FOUND', 'CANCELED')) AS began
		FROM attempts a WHERE a.began_at = 0 AND a.state IN ('open', 'final');
	DELETE FROM opened_at_bank WHERE began IS NULL;
	UPDATE attempts SET began_at = (SELECT b.began FROM opened_at_bank b WHERE b.upstream_id = attempts.upstream_id)
		WHERE upstream_id IN (SELECT upstream_id FROM opened_at_bank);
	INSERT INTO count_changes (merchant_id, funnel_hour, attempt_hour, country, bank_id,
			opened, sent, began, paid, started, completed, canceled, abandoned, bucket, paid_times)
		SELECT merchant_id, 0, created_at / 3600000 * 3600000, country, bank_id, 0, 0, 0, 0, 0, 0, 1, -1, -1, 0
		FROM opened_at_bank WHERE state = 'final' AND status <> 'COMPLETED';
	INSERT INTO count_changes (merchant_id, funnel_hour, attempt_hour, country, bank_id,
			opened, sent, began, paid, started, completed, canceled, abandoned, bucket, paid_times)
		SELECT o.merchant_id, o.opened_at / 3600000 * 3600000, 0, '', '', 0, 0, 1, 0, 0, 0, 0, 0, -1, 0
		FROM orders o WHERE o.began_at = 0 AND EXISTS (SELECT 1 FROM opened_at_bank b WHERE b.merchant_id = o.merchant_id AND b.order_id = o.order_id);
	UPDATE orders SET began_at = (SELECT MIN(b.began) FROM opened_at_bank b WHERE b.merchant_id = orders.merchant_id AND b.order_id = orders.order_id)
		WHERE began_at = 0 AND EXISTS (SELECT 1 FROM opened_at_bank b WHERE b.merchant_id = orders.merchant_id AND b.order_id = orders.order_id);
	DROP TABLE opened_at_bank`,

	// 9: merchants' settings live here: each merchant with its state and who
	// manages it (the merchants file or the console), its settings as a
	// document whose secrets are sealed (or, for a file's merchant without
	// SETTINGS_KEYS, only a fingerprint), its API tokens as SHA-256 hashes,
	// the console's people, and every change in the audit log. A person
	// belongs to merchants by memberships, each with a role; an operator sees
	// every merchant. settings_version is bumped in every change's
	// transaction: instances poll that one row and read the whole set when it
	// moves.
	`CREATE TABLE settings_version (
		id      INTEGER PRIMARY KEY CHECK (id = 1),
		version BIGINT NOT NULL
	);
	INSERT INTO settings_version (id, version) VALUES (1, 0);
	CREATE TABLE merchants (
		id         TEXT PRIMARY KEY,
		name       TEXT NOT NULL,
		state      TEXT NOT NULL CHECK (state IN ('active', 'disabled')),
		managed    TEXT NOT NULL CHECK (managed IN ('file', 'console')),
		version    BIGINT NOT NULL CHECK (version >= 1),
		doc        TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL,
		updated_by TEXT NOT NULL
	);
	CREATE TABLE api_tokens (
		id          TEXT PRIMARY KEY,
		merchant_id TEXT NOT NULL REFERENCES merchants (id),
		name        TEXT NOT NULL,
		hash        TEXT NOT NULL UNIQUE,
		prefix      TEXT NOT NULL,
		managed     TEXT NOT NULL CHECK (managed IN ('file', 'console')),
		created_at  BIGINT NOT NULL,
		expires_at  BIGINT NOT NULL DEFAULT 0,
		revoked_at  BIGINT NOT NULL DEFAULT 0
	);
	CREATE INDEX api_tokens_by_merchant ON api_tokens (merchant_id);
	CREATE TABLE console_people (
		email         TEXT PRIMARY KEY,
		password_hash TEXT NOT NULL,
		operator      INTEGER NOT NULL DEFAULT 0 CHECK (operator IN (0, 1)),
		managed       TEXT NOT NULL CHECK (managed IN ('file', 'console', 'command line')),
		created_at    BIGINT NOT NULL,
		updated_at    BIGINT NOT NULL
	);
	CREATE TABLE memberships (
		email       TEXT NOT NULL REFERENCES console_people (email),
		merchant_id TEXT NOT NULL REFERENCES merchants (id),
		role        TEXT NOT NULL CHECK (role IN ('owner', 'developer', 'designer', 'support', 'viewer')),
		managed     TEXT NOT NULL CHECK (managed IN ('file', 'console')),
		created_at  BIGINT NOT NULL,
		PRIMARY KEY (email, merchant_id)
	);
	CREATE INDEX memberships_by_merchant ON memberships (merchant_id);
	CREATE TABLE audit_log (
		id          {{ID}},
		at          BIGINT NOT NULL,
		actor       TEXT NOT NULL,
		merchant_id TEXT NOT NULL DEFAULT '',
		action      TEXT NOT NULL,
		fields      TEXT NOT NULL DEFAULT '',
		request_id  TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX audit_by_merchant ON audit_log (merchant_id, id)`,

	// 10: the team: invitations to a merchant's team, kept by the hash of
	// their link's token and good once, when each person last signed in, and
	// each person's sessions (device, address, last seen) for their own list,
	// kept until the session's longest end. Two-step sign-in: a person's TOTP
	// secret (sealed like merchants' secrets; the one being set up apart), the
	// last time step a code was taken at (so that a code is good once on every
	// instance), and their recovery codes by hash, each good once.
	`CREATE TABLE invitations (
		token_hash  TEXT PRIMARY KEY,
		merchant_id TEXT NOT NULL REFERENCES merchants (id),
		email       TEXT NOT NULL,
		role        TEXT NOT NULL CHECK (role IN ('owner', 'developer', 'designer', 'support', 'viewer')),
		invited_by  TEXT NOT NULL,
		created_at  BIGINT NOT NULL,
		expires_at  BIGINT NOT NULL,
		used_at     BIGINT NOT NULL DEFAULT 0
	);
	CREATE INDEX invitations_by_merchant ON invitations (merchant_id, created_at);
	ALTER TABLE console_people ADD COLUMN last_sign_in BIGINT NOT NULL DEFAULT 0;
	CREATE TABLE console_sessions (
		id         TEXT PRIMARY KEY,
		email      TEXT NOT NULL,
		device     TEXT NOT NULL,
		address    TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		seen_at    BIGINT NOT NULL,
		ends_at    BIGINT NOT NULL
	);
	CREATE INDEX console_sessions_by_email ON console_sessions (email, seen_at);
	ALTER TABLE console_people ADD COLUMN totp_secret TEXT NOT NULL DEFAULT '';
	ALTER TABLE console_people ADD COLUMN totp_pending TEXT NOT NULL DEFAULT '';
	ALTER TABLE console_people ADD COLUMN totp_step BIGINT NOT NULL DEFAULT 0;
	CREATE TABLE recovery_codes (
		email     TEXT NOT NULL,
		code_hash TEXT NOT NULL,
		used_at   BIGINT NOT NULL DEFAULT 0,
		PRIMARY KEY (email, code_hash)
	)`,

	// 11: developers' settings: when each API token was last used, to the
	// hour, so that a developer sees which token is idle before revoking it;
	// the link key each order was first opened with, so that a developer sees
	// when an old key is no longer used; and the merchants' recent API
	// requests (method, route, status: never a body or an id), kept a week,
	// for debugging.
	`ALTER TABLE api_tokens ADD COLUMN last_used_at BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE orders ADD COLUMN kid TEXT NOT NULL DEFAULT '';
	CREATE INDEX orders_opened ON orders (merchant_id, opened_at);
	CREATE TABLE api_requests (
		id          {{ID}},
		merchant_id TEXT NOT NULL,
		at          BIGINT NOT NULL,
		method      TEXT NOT NULL,
		route       TEXT NOT NULL,
		status      INTEGER NOT NULL
	);
	CREATE INDEX api_requests_by_merchant ON api_requests (merchant_id, id);
	CREATE INDEX api_requests_at ON api_requests (at)`,

	// 12: branding: each merchant's draft of its look, which no shopper sees,
	// numbered so that two designers never overwrite each other; every look
	// published, for the history and to revert to; and the logos designers
	// upload, by the hash of their bytes, served under /brand/ on every
	// instance.
	`CREATE TABLE brand_drafts (
		merchant_id   TEXT PRIMARY KEY,
		customization TEXT NOT NULL,
		version       BIGINT NOT NULL CHECK (version >= 1),
		updated_at    BIGINT NOT NULL,
		updated_by    TEXT NOT NULL
	);
	CREATE TABLE brand_versions (
		merchant_id   TEXT NOT NULL,
		version       BIGINT NOT NULL CHECK (version >= 1),
		customization TEXT NOT NULL,
		changed       TEXT NOT NULL,
		reverted_from BIGINT NOT NULL DEFAULT 0,
		published_at  BIGINT NOT NULL,
		published_by  TEXT NOT NULL,
		PRIMARY KEY (merchant_id, version)
	);
	CREATE TABLE brand_logos (
		name         TEXT PRIMARY KEY,
		merchant_id  TEXT NOT NULL,
		content_type TEXT NOT NULL,
		width        INTEGER NOT NULL,
		height       INTEGER NOT NULL,
		data         BYTEA NOT NULL,
		created_at   BIGINT NOT NULL,
		created_by   TEXT NOT NULL
	)`,

	// 13: the console in the shop's language: the language a person chose,
	// empty while they follow their browser's.
	`ALTER TABLE console_people ADD COLUMN language TEXT NOT NULL DEFAULT ''`,

	// 14: trust: counted tries reserved before they are checked, one row a key
	// (an address, an e-mail, a person's codes), with the back-off lock of
	// repeated wrong codes; invitations withdrawn (by an owner, by a newer
	// one, by a change to the person's place on the team); and the mode the
	// ledger was made in, so that a sandbox ledger is never taken into live
	// mode unawares.
	`CREATE TABLE console_tries (
		key          TEXT PRIMARY KEY,
		window_start BIGINT NOT NULL,
		used         INTEGER NOT NULL CHECK (used >= 0),
		strikes      INTEGER NOT NULL DEFAULT 0,
		locked_until BIGINT NOT NULL DEFAULT 0,
		updated_at   BIGINT NOT NULL
	);
	ALTER TABLE invitations ADD COLUMN revoked_at BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE invitations ADD COLUMN revoked_by TEXT NOT NULL DEFAULT '';
	CREATE TABLE deployment (
		id      INTEGER PRIMARY KEY CHECK (id = 1),
		mode    TEXT NOT NULL CHECK (mode IN ('sandbox', 'live')),
		made_at BIGINT NOT NULL
	)`,

	// 15: the audit log kept as an event and its values (JSON), said in
	// each reader's language; the lines before keep their English action.
	`ALTER TABLE audit_log ADD COLUMN event TEXT NOT NULL DEFAULT '';
	ALTER TABLE audit_log ADD COLUMN args TEXT NOT NULL DEFAULT ''`,

	// 16: passkeys: each person's WebAuthn credentials (the credential as
	// the WebAuthn library records it: public key, flags, transports; never a
	// private key), each with a random ref that names it in the console's
	// addresses (the credential id stays out of them), the sign counter that
	// a copied credential gives away and when that suspended it, a name the
	// person chose, and when each was added and last used; the devices each
	// passkey signed in from, so that a first use on a new one is said; which
	// passkey started each console session, so that a suspended one's end;
	// the person's own list of passkey events; the WebAuthn ceremonies under
	// way, each taken once, within minutes, by the browser session that began
	// it; and the deployment's rule that operators sign in with a passkey.
	`CREATE TABLE passkeys (
		id           TEXT PRIMARY KEY,
		ref          TEXT NOT NULL UNIQUE,
		email        TEXT NOT NULL REFERENCES console_people (email),
		user_handle  TEXT NOT NULL,
		name         TEXT NOT NULL,
		credential   TEXT NOT NULL,
		sign_count   BIGINT NOT NULL DEFAULT 0 CHECK (sign_count >= 0),
		created_at   BIGINT NOT NULL,
		last_used_at BIGINT NOT NULL DEFAULT 0,
		suspended_at BIGINT NOT NULL DEFAULT 0,
		UNIQUE (email, name)
	);
	ALTER TABLE console_sessions ADD COLUMN passkey TEXT NOT NULL DEFAULT '';
	CREATE INDEX passkeys_by_email ON passkeys (email, created_at);
	CREATE TABLE passkey_devices (
		passkey_id TEXT NOT NULL,
		email      TEXT NOT NULL,
		device     TEXT NOT NULL,
		first_at   BIGINT NOT NULL,
		PRIMARY KEY (passkey_id, device)
	);
	CREATE TABLE passkey_events (
		id     {{ID}},
		email  TEXT NOT NULL,
		at     BIGINT NOT NULL,
		kind   TEXT NOT NULL CHECK (kind IN ('added', 'removed', 'new device', 'suspended')),
		name   TEXT NOT NULL,
		device TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX passkey_events_by_email ON passkey_events (email, id);
	CREATE TABLE passkey_ceremonies (
		key        TEXT PRIMARY KEY,
		kind       TEXT NOT NULL CHECK (kind IN ('register', 'sign-in', 'proof')),
		email      TEXT NOT NULL DEFAULT '',
		data       TEXT NOT NULL,
		expires_at BIGINT NOT NULL
	);
	CREATE INDEX passkey_ceremonies_expiry ON passkey_ceremonies (expires_at);
	CREATE TABLE console_policy (
		id                 INTEGER PRIMARY KEY CHECK (id = 1),
		operators_passkeys INTEGER NOT NULL DEFAULT 0 CHECK (operators_passkeys IN (0, 1))
	);
	INSERT INTO console_policy (id, operators_passkeys) VALUES (1, 0)`,

	// 17: payment links made in the console or the API: a stored request for
	// money that the payer opens at /l/{id}. state is what changes by an act
	// (open, paid, cancelled); expired is read off expires_at. A link's
	// orders name it in orders.payment_link, so that its payments, funnel
	// and receipt are found from it; orders_made numbers a reusable link's
	// orders (REFERENCE-1, REFERENCE-2…), payments and paid_cents count the
	// orders paid in full. The payer's e-mail is sealed (AES-256-GCM under
	// SETTINGS_KEYS, bound to the link) and emptied when the link is paid,
	// cancelled or past its expiry. search is the description and reference
	// folded to lower case, for the console's search; on PostgreSQL with
	// pg_trgm (a trusted extension the database's owner may create) a
	// trigram index finds a word anywhere in it without reading every link
	// ({{LINK_SEARCH}}), and without pg_trgm the search reads them all.
	`CREATE TABLE payment_links (
		id           TEXT PRIMARY KEY,
		merchant_id  TEXT NOT NULL,
		amount       TEXT NOT NULL,
		currency     TEXT NOT NULL,
		description  TEXT NOT NULL,
		reference    TEXT NOT NULL,
		email_sealed TEXT NOT NULL DEFAULT '',
		lang         TEXT NOT NULL,
		kind         TEXT NOT NULL CHECK (kind IN ('single', 'reusable')),
		max_payments INTEGER NOT NULL DEFAULT 0 CHECK (max_payments >= 0),
		expires_at   BIGINT NOT NULL,
		state        TEXT NOT NULL CHECK (state IN ('open', 'paid', 'cancelled')),
		created_by   TEXT NOT NULL,
		created_at   BIGINT NOT NULL,
		cancelled_by TEXT NOT NULL DEFAULT '',
		cancelled_at BIGINT NOT NULL DEFAULT 0,
		orders_made  INTEGER NOT NULL DEFAULT 0,
		payments     INTEGER NOT NULL DEFAULT 0,
		paid_cents   BIGINT NOT NULL DEFAULT 0,
		emails_sent  INTEGER NOT NULL DEFAULT 0,
		emailed_at   BIGINT NOT NULL DEFAULT 0,
		search       TEXT NOT NULL,
		UNIQUE (merchant_id, reference)
	);
	CREATE INDEX payment_links_newest ON payment_links (merchant_id, created_at, id);
	CREATE INDEX payment_links_by_state ON payment_links (merchant_id, state, created_at, id);
	CREATE INDEX payment_links_emails ON payment_links (expires_at) WHERE email_sealed <> '';
	ALTER TABLE orders ADD COLUMN payment_link TEXT NOT NULL DEFAULT '';
	CREATE INDEX orders_by_payment_link ON orders (payment_link, created_at) WHERE payment_link <> '';
	{{LINK_SEARCH}}`,

	// 18: following by stage: beside when its next read is wanted, each
	// attempt carries the latest that read may come (its stage's bound),
	// and reads near it are claimed first. Attempts already followed keep
	// their schedule, their wanted read as their bound. Settled attempts
	// are claimed by bound, thousands of them due at once. The read budget
	// hands out reads one after another, 1/FOLLOW_RATE apart, from the
	// next free time (in microseconds) instead of a bucket that could be
	// spent in a burst; the bucket's tokens and at are read no more.
	`ALTER TABLE attempts ADD COLUMN read_by BIGINT NOT NULL DEFAULT 0;
	UPDATE attempts SET read_by = next_check_at WHERE state IN ('creating', 'open', 'unknown');
	CREATE INDEX attempts_read_by ON attempts (read_by) WHERE state IN ('open', 'unknown');
	CREATE INDEX attempts_bound_by_tier ON attempts (follow_tier, read_by) WHERE state IN ('open', 'unknown');
	ALTER TABLE follow_budget ADD COLUMN next_read BIGINT NOT NULL DEFAULT 0`,

	// 19: a payment belongs to the browser that began it. Each checkout
	// carries a random payer key in its sealed token; an attempt keeps its
	// digest (payer), so that a submit from another checkout of the same
	// order is never handed that attempt's bank page. A reusable link's
	// order keeps its payer's digest too: the same browser submitting again
	// finds its own order, and opening a link writes nothing. opened counts
	// a link's payers, each browser once, added in the background; the
	// links' orders opened so far are its start.
	`ALTER TABLE attempts ADD COLUMN payer TEXT NOT NULL DEFAULT '';
	ALTER TABLE orders ADD COLUMN payer TEXT NOT NULL DEFAULT '';
	CREATE INDEX orders_link_payer ON orders (payment_link, payer) WHERE payer <> '';
	ALTER TABLE payment_links ADD COLUMN opened INTEGER NOT NULL DEFAULT 0;
	UPDATE payment_links SET opened = (SELECT COUNT(*) FROM orders o WHERE o.payment_link = payment_links.id AND o.opened_at > 0)`,

	// 20: refunds. The provider cannot refund, so a refund is a SEPA credit
	// transfer from the merchant's own account back to the payer's: made
	// here, paid by the merchant's bank from a transfer file or a QR code,
	// seen leaving in a statement. amount_cents is the refund's sum;
	// orders.refunded_cents the sum of an order's refunds that are not
	// cancelled or returned, kept under the order's row lock so that it
	// never passes what was paid, on any instance. The payer's account is
	// sealed (name, IBAN, BIC; AES-256-GCM under SETTINGS_KEYS, bound to the
	// refund) beside its masked IBAN, and both are erased erase_after. page_id
	// is the payer's page, /r/{page_id}. A refund is in at most one transfer
	// file, whose bytes are kept to be downloaded again as they were.
	// refund_history is each refund's timeline. A payer's e-mail of a signed
	// link is kept sealed on its order (email_sealed) for a refund's page,
	// and erased with the order's other personal data.
	`CREATE TABLE refunds (
		id              TEXT PRIMARY KEY,
		merchant_id     TEXT NOT NULL,
		order_id        TEXT NOT NULL,
		amount_cents    BIGINT NOT NULL CHECK (amount_cents > 0),
		currency        TEXT NOT NULL,
		reason          TEXT NOT NULL,
		state           TEXT NOT NULL CHECK (state IN ('awaiting_account', 'awaiting_approval', 'ready', 'sent', 'booked', 'returned', 'cancelled')),
		needs_approval  INTEGER NOT NULL DEFAULT 0 CHECK (needs_approval IN (0, 1)),
		approved_by     TEXT NOT NULL DEFAULT '',
		approved_at     BIGINT NOT NULL DEFAULT 0,
		account_sealed  TEXT NOT NULL DEFAULT '',
		account_masked  TEXT NOT NULL DEFAULT '',
		account_by      TEXT NOT NULL DEFAULT '',
		account_at      BIGINT NOT NULL DEFAULT 0,
		page_id         TEXT NOT NULL UNIQUE,
		lang            TEXT NOT NULL DEFAULT '',
		created_by      TEXT NOT NULL,
		created_at      BIGINT NOT NULL,
		updated_at      BIGINT NOT NULL,
		sent_at         BIGINT NOT NULL DEFAULT 0,
		booked_at       BIGINT NOT NULL DEFAULT 0,
		booked_on       TEXT NOT NULL DEFAULT '',
		returned_at     BIGINT NOT NULL DEFAULT 0,
		return_reason   TEXT NOT NULL DEFAULT '',
		cancelled_at    BIGINT NOT NULL DEFAULT 0,
		transfer_id     TEXT NOT NULL DEFAULT '',
		idempotency_key TEXT NOT NULL DEFAULT '',
		erase_after     BIGINT NOT NULL DEFAULT 0,
		search          TEXT NOT NULL
	);
	CREATE UNIQUE INDEX refunds_idempotency ON refunds (merchant_id, idempotency_key) WHERE idempotency_key <> '';
	CREATE INDEX refunds_by_order ON refunds (merchant_id, order_id);
	CREATE INDEX refunds_newest ON refunds (merchant_id, created_at, id);
	CREATE INDEX refunds_by_state ON refunds (merchant_id, state, created_at, id);
	CREATE INDEX refunds_to_erase ON refunds (erase_after) WHERE erase_after > 0;
	CREATE TABLE refund_history (
		refund_id TEXT NOT NULL REFERENCES refunds (id),
		at        BIGINT NOT NULL,
		state     TEXT NOT NULL,
		step      TEXT NOT NULL,
		actor     TEXT NOT NULL
	);
	CREATE INDEX refund_history_of ON refund_history (refund_id, at);
	CREATE TABLE transfers (
		id          TEXT PRIMARY KEY,
		merchant_id TEXT NOT NULL,
		created_by  TEXT NOT NULL,
		created_at  BIGINT NOT NULL,
		refunds     INTEGER NOT NULL,
		total_cents BIGINT NOT NULL,
		file        TEXT NOT NULL
	);
	CREATE INDEX transfers_newest ON transfers (merchant_id, created_at, id);
	ALTER TABLE orders ADD COLUMN refunded_cents BIGINT NOT NULL DEFAULT 0 CHECK (refunded_cents >= 0);
	ALTER TABLE orders ADD COLUMN email_sealed TEXT NOT NULL DEFAULT ''`,

	// 21: bank statements. A merchant uploads its bank's camt.053 or
	// camt.054 files; each booked entry counts once, by its account,
	// booking date, amount, direction and the bank's reference (entry_key,
	// a digest of them), so the same statement, or two overlapping ones,
	// change nothing the second time. An entry's outcome is what it did: a
	// refund booked or returned, an order's money received, a mismatch (the
	// id of one, another amount), or nothing matched; the other party and
	// the remittance are kept for the entries a person must act on, their
	// IBAN masked. orders.received_at is when the order's money was seen on
	// the merchant's account, received_on the booking date.
	`CREATE TABLE statements (
		id          TEXT PRIMARY KEY,
		merchant_id TEXT NOT NULL,
		uploaded_by TEXT NOT NULL,
		uploaded_at BIGINT NOT NULL,
		file_name   TEXT NOT NULL,
		message     TEXT NOT NULL,
		account     TEXT NOT NULL,
		period_from TEXT NOT NULL,
		period_to   TEXT NOT NULL,
		entries     INTEGER NOT NULL,
		booked      INTEGER NOT NULL,
		returned    INTEGER NOT NULL,
		received    INTEGER NOT NULL,
		mismatched  INTEGER NOT NULL,
		unmatched   INTEGER NOT NULL,
		repeated    INTEGER NOT NULL
	);
	CREATE INDEX statements_newest ON statements (merchant_id, uploaded_at, id);
	CREATE TABLE statement_entries (
		merchant_id  TEXT NOT NULL,
		entry_key    TEXT NOT NULL,
		statement_id TEXT NOT NULL,
		account      TEXT NOT NULL,
		booked_on    TEXT NOT NULL,
		amount_cents BIGINT NOT NULL,
		credit       INTEGER NOT NULL CHECK (credit IN (0, 1)),
		reference    TEXT NOT NULL,
		outcome      TEXT NOT NULL CHECK (outcome IN ('booked', 'returned', 'received', 'mismatch', 'unmatched')),
		target       TEXT NOT NULL DEFAULT '',
		note         TEXT NOT NULL DEFAULT '',
		counterparty TEXT NOT NULL DEFAULT '',
		counter_iban TEXT NOT NULL DEFAULT '',
		remittance   TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (merchant_id, entry_key)
	);
	CREATE INDEX statement_entries_open ON statement_entries (merchant_id, outcome, booked_on);
	ALTER TABLE orders ADD COLUMN received_at BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE orders ADD COLUMN received_on TEXT NOT NULL DEFAULT ''`,

	// 22: the language the payer went through the checkout in, kept with
	// the e-mail address a shop's signed link gave (and forgotten with
	// it): a refund's page is e-mailed in it. statements.held counts the
	// entries naming refunds that the upload left for an owner's.
	`ALTER TABLE orders ADD COLUMN payer_lang TEXT NOT NULL DEFAULT '';
	ALTER TABLE statements ADD COLUMN held INTEGER NOT NULL DEFAULT 0`,
}

// migrate brings the schema up to date. Several instances may start at once
// on one PostgreSQL: an advisory lock held by the transaction makes them
// take turns, and each finds the steps the first one applied.
func (l *Ledger) migrate(ctx context.Context) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if l.dialect == postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7305870012)`); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return err
	}
	var done int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&done); err != nil {
		return err
	}
	if l.dialect == postgres && done < len(migrations) {
		// The trigram index of payment links' search wants pg_trgm; a
		// database user who may not create it gets a search that reads
		// every link instead of a failed start.
		if _, err := tx.ExecContext(ctx, `SAVEPOINT trigram`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm`); err != nil {
			if _, err := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT trigram`); err != nil {
				return err
			}
		} else {
			l.trigram = true
		}
	}
	if done > len(migrations) {
		return fmt.Errorf("the database is at schema version %d, newer than this program's %d: run the newer program", done, len(migrations))
	}
	for v := done + 1; v <= len(migrations); v++ {
		if err := execScript(ctx, tx, l.dialectOf(migrations[v-1])); err != nil {
			return fmt.Errorf("schema version %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`, v, l.now().UnixMilli()); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// dialectOf fills a migration's placeholders for the database: {{C}}
// (byteOrder), {{ID}}, a key numbering rows in the order they are
// written, and {{LINK_SEARCH}}, the trigram index of payment links' search
// where pg_trgm is there.
func (l *Ledger) dialectOf(script string) string {
	id := "INTEGER PRIMARY KEY"
	if l.dialect == postgres {
		id = "BIGSERIAL PRIMARY KEY"
	}
	search := ""
	if l.trigram {
		search = "CREATE INDEX payment_links_search ON payment_links USING gin (search gin_trgm_ops)"
	}
	return strings.NewReplacer("{{C}}", l.byteOrder(), "{{ID}}", id, "{{LINK_SEARCH}}", search).Replace(script)
}

// byteOrder makes a text column compare byte by byte, as a prefix search
// needs: SQLite does so by default; PostgreSQL follows the database's
// collation unless told "C".
func (l *Ledger) byteOrder() string {
	if l.dialect == postgres {
		return ` COLLATE "C"`
	}
	return ""
}

// SchemaVersion is the schema version the database is at.
func (l *Ledger) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := l.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// execScript runs the statements of a migration one by one: not every
// driver takes several in one call. Migrations hold no semicolon inside a
// string, which keeps the split honest.
func execScript(ctx context.Context, tx *sql.Tx, script string) error {
	for _, stmt := range strings.Split(script, ";") {
		if stmt = strings.TrimSpace(stmt); stmt == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}
