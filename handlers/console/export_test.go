package console

// SayAudit is sayAudit, for the tests of package console_test.
var SayAudit = sayAudit
