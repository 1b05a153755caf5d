package banks

import "time"

// SetClock makes c tell the time by now, so that tests move it past a
// list's refresh and expiry without waiting.
func SetClock(c *Cache, now func() time.Time) { c.now = now }

// Refreshing says whether a background refresh of c is under way.
func Refreshing(c *Cache) bool { return c.refreshing.Load() }
