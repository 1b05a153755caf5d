package payment

import (
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/pisclient"
)

// Stage is what is known of an open payment. It decides when the follower
// reads the payment next and the longest the payment may go unread (its
// bound): often while a read is likely to find it moved, seldom while
// nothing can have changed. docs/operate.md lists the stages for operators.
type Stage int

const (
	// StageNew: handed out and not read yet.
	StageNew Stage = iota
	// StageUnknown: the create call's answer was lost; a read settles it.
	StageUnknown
	// StageAtBank: the shopper is at the bank: the payment was begun there
	// (IN_PROGRESS, or a status nobody documented) or the shopper came back
	// through the return URL, less than quietAfter ago.
	StageAtBank
	// StageAccepted: the bank accepted it and the money is on its way
	// (ACCEPTED_SETTLEMENT_IN_PROCESS), since less than quietAfter.
	StageAccepted
	// StageNotOpened: read NOT_FOUND and the shopper never came back: they
	// have not opened the bank's page, and may never.
	StageNotOpened
	// StageQuiet: begun at the bank and nothing has moved for quietAfter:
	// the shopper left, or the money takes its time.
	StageQuiet
)

// quietAfter is how long a begun payment may stand still before its
// shopper counts as gone and its reads are spaced out.
const quietAfter = 5 * time.Minute

// followFor is how long a payment is followed: the provider cancels a
// payment left in progress after 5 days.
const followFor = 6 * 24 * time.Hour

// stageRule is how one stage is read.
type stageRule struct {
	// interval is the wait from a read to the next, given how long the
	// payment has stood in its stage (or lived, for StageNotOpened).
	interval func(since time.Duration) time.Duration
	// bound is the longest a payment of the stage goes unread.
	bound time.Duration
	tier  ledger.Tier
}

// every is an interval that does not grow.
func every(d time.Duration) func(time.Duration) time.Duration {
	return func(time.Duration) time.Duration { return d }
}

// growing is an interval as long as the time since, within [from, to]: the
// reads come at doubling distances.
func growing(from, to time.Duration) func(time.Duration) time.Duration {
	return func(since time.Duration) time.Duration { return min(max(since, from), to) }
}

var stageRules = map[Stage]stageRule{
	// A first read that failed is tried again soon: the first read tells
	// whether the shopper opened the bank's page at all.
	StageNew:       {interval: every(5 * time.Second), bound: ledger.FirstReadBy, tier: ledger.Fresh},
	StageUnknown:   {interval: every(5 * time.Second), bound: 30 * time.Second, tier: ledger.Fresh},
	StageAtBank:    {interval: every(5 * time.Second), bound: 30 * time.Second, tier: ledger.Fresh},
	StageAccepted:  {interval: growing(time.Second, time.Minute), bound: 2 * time.Minute, tier: ledger.Fresh},
	StageNotOpened: {interval: growing(10*time.Second, 30*time.Minute), bound: time.Hour, tier: ledger.Settled},
	StageQuiet:     {interval: growing(time.Minute, 30*time.Minute), bound: time.Hour, tier: ledger.Settled},
}

// Bound is the longest a payment of stage s goes unread: from when it was
// made for StageNew, from its last read for the others. The follower
// keeps to it while FOLLOW_RATE covers the reads that every payment's
// bound asks for (docs/operate.md).
func (s Stage) Bound() time.Duration { return stageRules[s].bound }

func (s Stage) String() string {
	return [...]string{"new", "unknown", "at the bank", "accepted", "not opened", "quiet"}[s]
}

// StageOf is the stage of attempt a at now, by what the ledger knows of it.
func StageOf(a ledger.Attempt, now time.Time) Stage {
	status := pisclient.Status(a.Status)
	switch {
	case a.State == ledger.Unknown:
		return StageUnknown
	case status == "":
		return StageNew
	case status == pisclient.StatusNotFound && a.Began.IsZero():
		return StageNotOpened
	}
	// Still since the last change, or the shopper's return.
	since := now.Sub(a.Updated)
	if !a.Began.IsZero() {
		since = min(since, now.Sub(a.Began))
	}
	switch {
	case since >= quietAfter:
		return StageQuiet
	case status == pisclient.StatusAccepted:
		return StageAccepted
	}
	return StageAtBank
}

// plan is when attempt a, just read at now (a holding what the read
// found), is read next: wanted after its stage's interval, at the latest
// after its bound, and never once it has been followed for followFor.
func plan(a ledger.Attempt, now time.Time) ledger.Next {
	if now.Sub(a.Created) >= followFor {
		return ledger.NotFollowed
	}
	stage := StageOf(a, now)
	rule := stageRules[stage]
	since := now.Sub(a.Updated)
	if stage == StageNotOpened {
		since = now.Sub(a.Created)
	}
	return ledger.Next{At: now.Add(rule.interval(since)), By: now.Add(rule.bound), Tier: rule.tier}
}
