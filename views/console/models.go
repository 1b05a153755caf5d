// Package console is the console's pages that read: the layout every console
// page wears, the sign-in and error pages, the overview with its charts and
// bank health, the payments, one order and the webhooks; their view models and
// templ components, over the views kit. The console's handlers fill the
// models with text ready to show; the components only lay it out. The pages
// that change things are in views/console/manage.
package console

import (
	"github.com/a-h/templ"

	"github.com/paybybank/checkout/views"
)

// ConsolePage is the frame of every console page.
type ConsolePage struct {
	Title  string
	Assets views.Assets
	// User is the e-mail signed in; empty on the sign-in page.
	User string
	// Whose names the merchant the user belongs to, or says an operator
	// sees every merchant.
	Whose string
	// CSRF is the session's token, sent back by every form that POSTs.
	CSRF string
	// Nav is the section the page belongs to: overview, payments, webhooks,
	// settings, audit, merchants.
	Nav string
	// Operator shows the sections only operators use; MayManage and
	// MayAudit those the person's role allows.
	Operator, MayManage, MayAudit, MayDevelop, MayBrand bool
	// Scripts are the page's own scripts, loaded deferred.
	Scripts []string
	// Languages, when the console speaks several, are the switcher's
	// choices; Back is the page's own address, where a choice leads back
	// to.
	Languages []ConsoleOption
	Back      string
	// ActFor lets a person who belongs to several merchants choose the
	// one they act for; nil otherwise.
	ActFor []ConsoleOption
	// Notice is a message at the top of the page (after an action);
	// NoticeError makes it an error.
	Notice      string
	NoticeError bool
	// Problems are the refusals of the form the page shows again: summed
	// up at the top, each linking to its field, and given the focus.
	Problems []views.FieldError
}

// ConsoleOption is one choice of a select.
type ConsoleOption struct {
	Value, Label string
	Selected     bool
}

// ConsoleLink is a link to another view of the same page.
type ConsoleLink struct {
	Label   string
	URL     templ.SafeURL
	Current bool
}

// ConsoleLogin is the sign-in page.
type ConsoleLogin struct {
	ConsolePage
	// Email is what was typed, kept when a sign-in is refused.
	Email string
	// Next is the console page asked for before signing in.
	Next string
	// Error is why the last sign-in was refused.
	Error string
	// Passkeys offers sign-in with a passkey: this deployment can (its
	// BASE_URL is a host name a passkey can be bound to).
	Passkeys bool
}

// ConsoleError is an error page inside the console.
type ConsoleError struct {
	ConsolePage
	Heading string
	Message string
	// Back is the way forward from the error.
	Back      templ.SafeURL
	BackLabel string
}

// ConsoleOverview is the overview page.
type ConsoleOverview struct {
	ConsolePage
	Ranges []ConsoleLink
	// Range is the window's name ("the last 24 hours").
	Range string
	// Merchants lets an operator narrow to one merchant; nil for others.
	Merchants []ConsoleOption
	// RangeValue is the window's parameter, kept by the merchant filter.
	RangeValue string
	Funnel     []ConsoleStage
	Figures    []ConsoleFigure
	Chart      ConsoleChart
	Banks      ConsoleBankChart
	Health     ConsoleHealth
	// Account is what a person should look at on the shop's account
	// (one merchant's overview only); nil shows nothing.
	Account *ConsoleAccount
}

// ConsoleAccount is what the overview says of the money on the shop's
// account, from its bank statements: paid orders not seen there after the
// bank days they take, and refunds sent but not seen leaving it.
type ConsoleAccount struct {
	Unreceived, Unbooked string
	// Quiet is set when both are none.
	Quiet                                  bool
	StatementsURL, PaymentsURL, RefundsURL templ.SafeURL
}

// ConsoleHealth is every bank's health over the whole deployment, in one
// of its windows.
type ConsoleHealth struct {
	// Windows are the periods to choose from (?health=).
	Windows []ConsoleLink
	// Note says what is counted, the thresholds and when it was read;
	// Empty, when set, replaces the table.
	Note, Empty, More string
	Rows              []ConsoleHealthRow
}

// ConsoleHealthRow is one bank's figures in a window.
type ConsoleHealthRow struct {
	Bank                                          ConsoleBank
	Started, Completed, Canceled, Abandoned, Open string
	Success, Median                               string
	Degraded                                      bool
}

// ConsoleStage is one step of the funnel: how many orders reached it.
type ConsoleStage struct {
	Label string
	Count string
	// Share is the count as a share of the orders opened.
	Share string
	// Percent is the bar's length, 0 to 100.
	Percent int
}

// ConsoleFigure is one figure of the overview with its explanation.
type ConsoleFigure struct {
	Label, Value, Hint string
	TestID             string
}

// ConsoleChart is the payments per hour or day, stacked by outcome.
type ConsoleChart struct {
	Caption string
	// Unit names a bucket in the table's first column: "Hour (UTC)".
	Unit string
	Bars []ConsoleBar
	// Max is the tallest bar's count, the top of the scale.
	Max int64
	// Ticks label a few bars along the bottom.
	Ticks []ConsoleTick
}

// ConsoleBar is one hour's or day's payments.
type ConsoleBar struct {
	Label                   string
	Paid, Canceled, Open    int64
	X, W                    float64
	YPaid, HPaid            float64
	YCanceled, HCanceled    float64
	YOpen, HOpen            float64
	PaidN, CanceledN, OpenN string
}

// ConsoleTick is a label under the chart.
type ConsoleTick struct {
	X     float64
	Label string
}

// ConsoleBankChart is conversion per bank for the busiest banks.
type ConsoleBankChart struct {
	Caption string
	Rows    []ConsoleBankRow
}

// ConsoleBankRow is one bank's attempts and conversion.
type ConsoleBankRow struct {
	Bank       ConsoleBank
	Attempts   string
	Paid       string
	Canceled   string
	Abandoned  string
	Conversion string
	// Percent is the conversion bar's length, 0 to 100.
	Percent int
	Y       float64
}

// ConsoleBank is a bank as the console shows it: logo and name.
type ConsoleBank struct {
	Name    string
	LogoURL string
	Country string
}

// ConsolePayments is the list of payments with its filters.
type ConsolePayments struct {
	ConsolePage
	Action   templ.SafeURL
	Query    string
	Statuses []ConsoleOption
	// Received filters on the money seen on the shop's account.
	Received  []ConsoleOption
	From, To  string
	Banks     []ConsoleOption
	Countries []ConsoleOption
	// Merchants lets an operator narrow to one merchant; nil for others.
	Merchants []ConsoleOption
	// Errors are the filters that could not be read, by field.
	Errors map[string]string
	// Operator adds the merchant column.
	Operator bool
	Rows     []ConsolePaymentRow
	// Searched is set when a filter or search is on: an empty list then
	// says nothing matched, not that there are no payments.
	Searched bool
	Next     templ.SafeURL
	First    templ.SafeURL
	CSV      templ.SafeURL
}

// ConsolePaymentRow is one order in the list.
type ConsolePaymentRow struct {
	OrderID  string
	URL      templ.SafeURL
	Merchant string
	Amount   string
	Status   ConsoleStatus
	Paid     string
	Bank     ConsoleBank
	Country  string
	Created  string
	Updated  string
	// Refunded is what was refunded of the order; empty when nothing was.
	Refunded string
	// Received is the day a bank statement showed the order's money on
	// the merchant's account; empty before.
	Received string
}

// ConsoleStatus is a status as a coloured badge with its word.
type ConsoleStatus struct {
	Word string
	// Tone picks the badge's colour: paid, pending, accepted, canceled,
	// none.
	Tone string
	Code string
}

// ConsoleOrder is one order's page.
type ConsoleOrder struct {
	ConsolePage
	OrderID  string
	Merchant string
	Amount   string
	Status   ConsoleStatus
	Paid     string
	// Received says whether, and when, a bank statement showed the
	// order's money on the shop's account; empty for an unpaid order.
	// ReceivedOn, the booking date, goes between Received and
	// ReceivedAfter, kept on one line.
	Received, ReceivedOn, ReceivedAfter string
	Final                               string
	Created                             string
	Updated                             string
	Attempts                            []ConsoleAttempt
	Events                              []ConsoleEvent
	// Check is where Check status now posts; MerchantID goes with it for
	// operators.
	Check      templ.SafeURL
	MerchantID string
	Back       templ.SafeURL
	// Refunds is the order's refunds, drawn by the refunds' own views.
	Refunds templ.Component
}

// ConsoleAttempt is one payment at the provider for the order.
type ConsoleAttempt struct {
	Seq        string
	Bank       ConsoleBank
	UpstreamID string
	Amount     string
	Status     ConsoleStatus
	History    []ConsoleStep
}

// ConsoleStep is one status an attempt passed through.
type ConsoleStep struct {
	At     string
	State  string
	Status string
}

// ConsoleEvent is one webhook event with its delivery tries.
type ConsoleEvent struct {
	ID        string
	Type      string
	Status    string
	Created   string
	Delivery  string
	Redeliver templ.SafeURL
	Tries     []ConsoleTry
	Highlight bool
}

// ConsoleTry is one try at delivering an event.
type ConsoleTry struct {
	N        string
	At       string
	Code     string
	Duration string
	Error    string
	OK       bool
}

// ConsoleWebhooks is the webhook health page.
type ConsoleWebhooks struct {
	ConsolePage
	Merchants []ConsoleOption
	// MerchantID is the merchant shown, sent with the test event.
	MerchantID string
	Endpoint   string
	Figures    []ConsoleFigure
	// LastFailure describes the newest failed try; empty when none.
	LastFailure     string
	LastFailureWhen string
	LastFailureURL  templ.SafeURL
	// Test is the answer to a test event just sent; nil otherwise.
	Test *ConsoleTry
}

// OneTimePanel is what an action made, shown this once: its heading, how
// the console keeps it (said truthfully: a hash, or sealed), and its values.
type OneTimePanel struct {
	Heading, Kept string
	Items         []OneTimeItem
}

// OneTimeItem is one value of a one-time panel: its label (none for a
// panel of one value), its element id (for the Copy button) and test id,
// and the value, or a list of values (recovery codes).
type OneTimeItem struct {
	Label, ID, TestID, Value string
	List                     []string
}

// usernameAutocomplete is the sign-in's e-mail field's autocomplete: where
// passkeys sign in, the browser may offer them in the field's autofill.
func usernameAutocomplete(passkeys bool) string {
	if passkeys {
		return "username webauthn"
	}
	return "username"
}
