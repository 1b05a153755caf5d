package i18n

// StaffKeys lists the key of every string of the console, sorted, for the
// tests outside the package.
func StaffKeys() []string { return staffCatalog.keys() }
