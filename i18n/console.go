package i18n

import "golang.org/x/text/number"

// The console's strings (issue 21), apart from the shopper's catalog,
// which every language must translate in full: the console is in English
// for now, its strings here so that translations can be added as
// staffCatalog entries without touching a page.
var staffCatalog = map[string]map[string]string{"en": consoleEN}

// Staff returns the localizer of the console's pages in lang; English
// while the console is not translated into it.
func Staff(lang string) *Localizer {
	if l, ok := staffLocalizers[lang]; ok {
		return l
	}
	return staffLocalizers["en"]
}

var staffLocalizers = func() map[string]*Localizer {
	out := make(map[string]*Localizer, len(staffCatalog))
	for lang, messages := range staffCatalog {
		shopper := New(lang)
		out[lang] = &Localizer{lang: lang, tag: shopper.tag, messages: messages, fallback: staffCatalog["en"], digits: shopper.digits}
	}
	return out
}()

var consoleEN = map[string]string{
	"console.name":         "Pay by bank console",
	"layout.skip":          "Skip to content",
	"console.nav":          "Console",
	"console.overview":     "Overview",
	"console.payments":     "Payments",
	"console.webhooks":     "Webhooks",
	"console.signOut":      "Sign out",
	"console.operator":     "operator: every merchant",
	"console.allMerchants": "All merchants",
	"console.merchant":     "Merchant",
	"console.show":         "Show",

	"console.login.title":    "Sign in",
	"console.login.heading":  "Sign in to the console",
	"console.login.email":    "E-mail",
	"console.login.password": "Password",
	"console.login.submit":   "Sign in",
	"console.login.wrong":    "That e-mail and password do not match an account. Check both and try again.",
	"console.login.missing":  "Enter your e-mail and your password.",
	"console.login.tooMany":  "Too many tries. Wait a minute, then try again.",
	"console.login.expired":  "The sign-in form had expired (or your browser refused its cookie). Enter your password again.",
	"console.signedOut":      "You are signed out.",
	"console.sessionEnded":   "Your session ended. Sign in again to go on.",

	"console.error.notFound":         "Not found",
	"console.error.notFound.text":    "There is no such page, or no such order for your merchant.",
	"console.error.request":          "This request could not be served",
	"console.error.request.text":     "Check the address, or go back and try again.",
	"console.error.forbidden":        "This form cannot be sent",
	"console.error.forbidden.text":   "The form was not sent from your console session (it may be from an older session or another site). Open the page again and repeat what you did.",
	"console.error.internal":         "Something went wrong on our side",
	"console.error.internal.text":    "Nothing was changed. Try again in a moment; if it goes on, tell your operator the time it happened.",
	"console.error.unavailable":      "The provider did not answer",
	"console.error.unavailable.text": "The status could not be read just now; nothing was changed. Try again in a moment.",
	"console.error.back":             "Back to the overview",

	"console.range":          "Period",
	"console.range.24h":      "24 hours",
	"console.range.7d":       "7 days",
	"console.range.30d":      "30 days",
	"console.range.24h.long": "The last 24 hours",
	"console.range.7d.long":  "The last 7 days",
	"console.range.30d.long": "The last 30 days",
	"console.funnel":         "Checkouts, counted per order",
	"console.funnel.opened":  "Opened (the link was used)",
	"console.funnel.sent":    "Sent to a bank",
	"console.funnel.began":   "Opened at the bank",
	"console.funnel.paid":    "Paid",
	"console.funnel.share":   "%s of opened",

	"console.fig.conversion":      "Conversion",
	"console.fig.conversion.hint": "Paid ÷ opened",
	"console.fig.canceled":        "Cancelled at the bank",
	"console.fig.canceled.hint":   "Payments the shopper began at the bank, then cancelled",
	"console.fig.abandoned":       "Abandoned",
	"console.fig.abandoned.hint":  "Payments whose bank page was never opened",
	"console.fig.median":          "Median time to pay",
	"console.fig.median.hint":     "From submitting the details to paid",
	"console.fig.none":            "–",

	"console.chart.perHour":   "Payments per hour",
	"console.chart.perDay":    "Payments per day",
	"console.chart.hour":      "Hour (UTC)",
	"console.chart.day":       "Day (UTC)",
	"console.chart.paid":      "Paid",
	"console.chart.canceled":  "Cancelled or abandoned",
	"console.chart.open":      "Still open",
	"console.tableOf":         "Table: %s",
	"console.chart.table":     "The same figures are in the table that follows.",
	"console.chart.showTable": "Show the figures as a table",
	"console.banks.heading":   "Conversion per bank (the 10 with most payments)",
	"console.banks.none":      "No payments in this period.",

	"console.col.order":      "Order",
	"console.col.amount":     "Amount",
	"console.col.status":     "Status",
	"console.col.paid":       "Paid",
	"console.col.bank":       "Bank",
	"console.col.country":    "Country",
	"console.col.created":    "Created (UTC)",
	"console.col.updated":    "Updated (UTC)",
	"console.col.attempts":   "Payments",
	"console.col.canceled":   "Cancelled",
	"console.col.abandoned":  "Abandoned",
	"console.col.conversion": "Conversion",
	"console.col.time":       "Time (UTC)",
	"console.col.state":      "State",
	"console.col.code":       "HTTP code",
	"console.col.duration":   "Duration",
	"console.col.error":      "Error",

	"console.yes": "Yes",
	"console.no":  "No",

	"console.status.none":                           "Not started",
	"console.status.NOT_FOUND":                      "Waiting for the bank",
	"console.status.IN_PROGRESS":                    "At the bank",
	"console.status.ACCEPTED_SETTLEMENT_IN_PROCESS": "Accepted, settling",
	"console.status.COMPLETED":                      "Paid",
	"console.status.CANCELED":                       "Cancelled",
	"console.status.other":                          "Processing (%s)",
	"console.status.unknown":                        "Being checked",

	"console.filters.q":          "Order id",
	"console.filters.qHint":      "The exact id, or its beginning.",
	"console.filters.any":        "Any",
	"console.filters.from":       "Changed from",
	"console.filters.to":         "Changed until (inclusive)",
	"console.filters.apply":      "Apply filters",
	"console.filters.clear":      "Clear filters",
	"console.filters.fix":        "Some filters could not be read:",
	"console.filters.fixFirst":   "Correct the filters above to see payments.",
	"console.filters.badDate":    "%s: enter a date like 2026-11-24.",
	"console.filters.badRange":   "Changed until comes before changed from.",
	"console.filters.badStatus":  "Choose a status from the list.",
	"console.filters.badCountry": "Choose a country from the list.",
	"console.filters.badCursor":  "The next-page link was damaged; start again from the first page.",
	"console.csv":                "Download as CSV",
	"console.payments.caption":   "Payments, newest change first",
	"console.payments.none":      "No payments yet. They appear here as soon as a shopper opens a payment link.",
	"console.payments.noneMatch": "No payment matches these filters.",
	"console.pages":              "Pages",
	"console.first":              "First page",
	"console.next":               "Next page",

	"console.order.back":            "Back to the payments",
	"console.order.heading":         "Order %s",
	"console.order.final":           "Final",
	"console.order.check":           "Check status now",
	"console.order.checkHint":       "Asks the provider once; a change is recorded and sent to your webhook, as the automatic checks would.",
	"console.order.checked":         "Checked with the provider: the status is %s.",
	"console.order.checkedUnknown":  "The provider did not give a status just now; the automatic checks go on. Nothing was changed.",
	"console.order.attempts":        "Payments at the bank",
	"console.order.noAttempts":      "No payment was started for this order yet.",
	"console.order.attempt":         "Payment %s",
	"console.order.upstream":        "Provider's id",
	"console.order.history":         "Status history",
	"console.order.events":          "Webhook events",
	"console.order.noEvents":        "No event was sent for this order yet.",
	"console.order.redeliver":       "Redeliver",
	"console.order.noTries":         "Not tried yet.",
	"console.order.tries":           "Delivery tries",
	"console.order.redelivered":     "Redelivered: the endpoint answered HTTP %s in %s.",
	"console.order.redeliverFailed": "Redelivered, but the endpoint did not take it: %s. It will be tried again.",
	"console.order.busy":            "This event is being sent right now; look again in a few seconds.",
	"console.delivery.pending":      "waiting to be delivered",
	"console.delivery.delivered":    "delivered",
	"console.delivery.noAnswer":     "no answer",
	"console.delivery.failed":       "given up after every try",

	"console.webhooks.endpoint":     "Endpoint",
	"console.webhooks.none":         "No webhook endpoint is set for this merchant: add webhook_url and webhook_secret to its entry in the merchants file.",
	"console.webhooks.test":         "Send test event",
	"console.webhooks.testHint":     "Sends a signed event of type ping to the endpoint and shows its answer; it is not recorded.",
	"console.webhooks.tested":       "The endpoint took the test event: HTTP %s in %s.",
	"console.webhooks.testRefused":  "The endpoint refused the test event: HTTP %s in %s.",
	"console.webhooks.testFailed":   "The test event did not arrive: %s (after %s).",
	"console.webhooks.success":      "Delivered in 24 hours",
	"console.webhooks.success.hint": "%s of %s tries",
	"console.webhooks.noTries":      "No tries in 24 hours",
	"console.webhooks.pending":      "Pending",
	"console.webhooks.pending.hint": "Events waiting for a try",
	"console.webhooks.failed":       "Failed",
	"console.webhooks.failed.hint":  "Events given up after every try",
	"console.webhooks.oldest":       "Oldest pending",
	"console.webhooks.oldest.hint":  "How long the oldest waiting event has waited",
	"console.webhooks.lastFailure":  "Last failure",
	"console.webhooks.noFailure":    "No delivery has failed.",
	"console.webhooks.failure":      "Event %s (try %s): %s",
	"console.webhooks.seeOrder":     "See the order",
}

// Number writes a count as the language does: 12,345 in English.
func (l *Localizer) Number(n int64) string { return l.digits.Sprint(number.Decimal(n)) }
