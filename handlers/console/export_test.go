package console

// SayAudit is sayAudit, for the tests of package console_test.
var SayAudit = sayAudit

// PasskeyBeginBurst is how many passkey sign-ins one address may begin at
// once, for the tests of package console_test.
const PasskeyBeginBurst = passkeyBeginBurst
