package merchant

import "strings"

// Role is a person's place on a merchant's team: what they may do in the
// console for that merchant. Operators of the deployment have no
// role: they may do everything, for every merchant.
type Role string

// The five roles, most powerful first.
const (
	Owner     Role = "owner"
	Developer Role = "developer"
	Designer  Role = "designer"
	Support   Role = "support"
	Viewer    Role = "viewer"
)

// Roles are the five roles, most powerful first.
var Roles = []Role{Owner, Developer, Designer, Support, Viewer}

// ParseRole reads a role's name.
func ParseRole(name string) (Role, bool) {
	for _, r := range Roles {
		if string(r) == name {
			return r, true
		}
	}
	return "", false
}

// RoleNames lists the roles' names, for messages.
func RoleNames() string {
	names := make([]string, len(Roles))
	for i, r := range Roles {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// Action is a kind of thing a person does in the console.
type Action string

// The console's actions, as the permission table of docs/console.md names
// them.
const (
	// Read: the overview, payments, orders, their CSV, webhooks.
	Read Action = "read"
	// Operate: Check status now, Redeliver, Send test event.
	Operate Action = "operate"
	// Develop: the Developers page (tokens, link keys, the webhook).
	Develop Action = "develop"
	// Brand: the Branding page (theme, logo, publish).
	Brand Action = "brand"
	// Manage: the team and the shop's settings (name, origins, frame
	// ancestors, pinned banks).
	Manage Action = "manage"
	// Audit: the audit log.
	Audit Action = "audit"
	// Refund: make refunds, type a payer's account, send the payer's
	// page again by e-mail, cancel a refund before it is sent.
	Refund Action = "refund"
	// PayRefunds: what moves the shop's money or says it moved: approve
	// refunds, make and download transfer files, show a refund's EPC QR
	// code, mark refunds sent and booked.
	PayRefunds Action = "pay refunds"
	// Reconcile: upload the shop's bank statements, which book refunds
	// and say which payments reached the shop's account.
	Reconcile Action = "reconcile"
)

// permissions is the table of docs/console.md: which roles may do what.
var permissions = map[Action][]Role{
	Read:    Roles,
	Operate: {Owner, Developer, Support},
	Develop: {Owner, Developer},
	Brand:   {Owner, Designer},
	Manage:  {Owner},
	Audit:   {Owner, Developer},
	Refund:  {Owner, Support},
	// Money leaves the shop's account on an owner's word only.
	PayRefunds: {Owner},
	Reconcile:  {Owner, Support},
}

// May reports whether the role allows action.
func (r Role) May(action Action) bool {
	for _, allowed := range permissions[action] {
		if allowed == r {
			return true
		}
	}
	return false
}

// RolesThatMay are the roles that allow action, most powerful first.
func RolesThatMay(action Action) []Role { return permissions[action] }
